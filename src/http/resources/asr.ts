/**
 * Speech to text (spec 2.6, 4.4): `/asr/tasks` create, detail, list, and a
 * `JobHandle` per task. The audio must be at a publicly reachable URL.
 */
import type { HttpClient } from '../client.js';
import { str, type JsonObject } from '../../protocol/fields.js';
import type { PollOptions } from '../job-handle.js';
import { baseTaskFields, type BaseTask } from '../task.js';
import { TaskCollection } from '../task-collection.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const ASR_PATH = REST_ROUTES.asrTasks;

export interface AsrParams {
  /** Publicly reachable URL (no cookies, LAN addresses or expired signatures). */
  audioUrl: string;
  /** ASR model id; default per the schema route. */
  model?: string;
  /** Estimated length, used to estimate the charge at creation. */
  durationSeconds?: number;
  languageHints?: string[];
  language?: string | string[];
}

export interface AsrTask extends BaseTask {
  rowId: string | undefined;
  audioUrl: string | undefined;
  /** Set on success (may be empty for silence). */
  transcript: string | undefined;
  model: string | undefined;
}

export function normalizeAsrTask(obj: JsonObject, family: string): AsrTask {
  const base = baseTaskFields(obj, family);
  const taskId = str(obj, 'taskId');
  const id = str(obj, 'id');
  return {
    ...base,
    rowId: taskId !== undefined && id !== undefined && id !== taskId ? id : undefined,
    audioUrl: str(obj, 'audioUrl', 'audio_url'),
    // An empty transcript is a result (silence), not an absence.
    transcript: typeof obj['transcript'] === 'string' ? obj['transcript'] : undefined,
    model: str(obj, 'model'),
  };
}

/** `client.asr`: `create`, `get`, `list` (`limit`, `offset`, `status`), `handle`, `submit`, `wait`. */
export class Asr extends TaskCollection<AsrTask, AsrParams> {
  constructor(client: HttpClient, poll: PollOptions<AsrTask> = {}) {
    super(
      client,
      {
        family: 'tasks',
        path: ASR_PATH,
        body: (p) => ({ audioUrl: p.audioUrl, model: p.model, durationSeconds: p.durationSeconds, languageHints: p.languageHints, language: p.language }),
        normalize: normalizeAsrTask,
      },
      poll,
    );
  }
}
