/**
 * The fields every task object of the flat task families shows (TTS, ASR,
 * image, video, lip-sync; spec 2.5 to 2.7): errors, charge, timestamps, and
 * their OpenAPI doc schema.
 */
import { z } from 'zod';
import type { Task } from './task-runner.js';

/** Fields every task object shows: errors, charge, timestamps. */
export function taskMeta(task: Task) {
  return {
    errorCode: task.errorCode,
    errorMessage: task.errorMessage,
    creditsCharged: task.creditsCharged,
    createdAt: task.createdAt,
    startedAt: task.startedAt,
    completedAt: task.completedAt,
  };
}

const nullableString = z.string().nullable();

/** Doc schema of `taskMeta`. */
export const taskMetaDoc = {
  errorCode: nullableString,
  errorMessage: nullableString,
  creditsCharged: z.number().int(),
  createdAt: z.string(),
  startedAt: nullableString,
  completedAt: nullableString,
};

