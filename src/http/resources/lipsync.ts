/**
 * Lip-sync (spec 2.8, 3.4, 4.7) in both route families, normalised to `MediaTask`:
 * - `client.lipsync.jobs`: `/media/lip-sync/jobs` (`{ success, message, data }` envelope; list with `page`, `limit`, `status`),
 * - `client.lipsync.tasks`: `/lip-sync/tasks` (`video` or `image` input mode; result `resultVideoUrl`).
 * A 422 (`UnprocessableError`) means the media was reachable but not processable.
 */
import type { HttpClient } from '../client.js';
import type { PollOptions } from '../job-handle.js';
import { TaskCollection } from '../task-collection.js';
import { normalizeMediaTask, type MediaTask } from './media.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const LIPSYNC_JOBS_PATH = REST_ROUTES.lipsyncJobs;
export const LIPSYNC_TASKS_PATH = REST_ROUTES.lipsyncTasks;

export interface LipSyncJobParams {
  /** Reachable by the service; signed short-lived URLs allowed. */
  videoUrl: string;
  audioUrl: string;
}

export interface LipSyncTaskParams {
  model?: string;
  inputMode: 'video' | 'image';
  /** `video` mode. */
  videoUrl?: string;
  audioUrl: string;
  durationSeconds?: number;
  /** `image` mode. */
  imageUrl?: string;
  referenceImageUrl?: string;
}

export class LipSync {
  readonly jobs: TaskCollection<MediaTask, LipSyncJobParams>;
  readonly tasks: TaskCollection<MediaTask, LipSyncTaskParams>;

  constructor(client: HttpClient, poll: PollOptions<MediaTask> = {}) {
    this.jobs = new TaskCollection(client, {
      family: 'media',
      path: LIPSYNC_JOBS_PATH,
      body: (p) => ({ video_url: p.videoUrl, audio_url: p.audioUrl }),
      normalize: normalizeMediaTask,
      resultUrl: (t) => t.resultUrl,
    }, poll);
    this.tasks = new TaskCollection(client, {
      family: 'tasks',
      path: LIPSYNC_TASKS_PATH,
      body: (p) => ({ model: p.model, inputMode: p.inputMode, videoUrl: p.videoUrl, audioUrl: p.audioUrl, durationSeconds: p.durationSeconds, imageUrl: p.imageUrl, referenceImageUrl: p.referenceImageUrl }),
      normalize: normalizeMediaTask,
      resultUrl: (t) => t.resultUrl,
    }, poll);
  }
}
