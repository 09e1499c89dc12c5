/**
 * Asynchronous TTS jobs (spec 2.4, 2.5, 3.1, 3.2, 4.3) in both route
 * families, normalised to one `TtsJob`:
 * - `jobs`: `/speech/tts/jobs` (envelope shape, states success/partial_fail/fail),
 * - `tasks`: `/tts/tasks` (flat shape, states succeeded/failed; also the minimal shape).
 * Downloads go through `{root_url}/api/open/tts/jobs/{taskId}/audio` with the
 * key and follow its signed redirect. `createOrRecover` handles a lost 202.
 */
import { ApiError, ConnectionError, TimeoutError, VoxpipeError } from '../../errors.js';
import type { HttpClient } from '../client.js';
import { textFingerprint } from '../fingerprint.js';
import { arr, asObject, bool, num, str, type JsonObject } from '../../protocol/fields.js';
import type { DownloadedFile, DownloadOptions, JobHandle, PollOptions } from '../job-handle.js';
import { baseTaskFields, TaskStatus, type BaseTask, type ListParams, type TaskPage } from '../task.js';
import { TaskCollection, type CreateOptions, type TaskFamilyConfig } from '../task-collection.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const TtsJobFamily = {
  /** `/speech/tts/jobs`, envelope shape (2.4). */
  jobs: 'jobs',
  /** `/tts/tasks`, flat shape (2.5). */
  tasks: 'tasks',
} as const;
export type TtsJobFamily = (typeof TtsJobFamily)[keyof typeof TtsJobFamily];

export const TTS_JOB_PATHS: Record<TtsJobFamily, string> = {
  jobs: REST_ROUTES.ttsJobs,
  tasks: REST_ROUTES.ttsTasks,
};

/** Download route of a job's audio under `{root_url}`. */
export function ttsAudioPath(taskId: string): string {
  return `/api/open/tts/jobs/${encodeURIComponent(taskId)}/audio`;
}

export interface TtsJobParams {
  /** At most 5000 characters. */
  text: string;
  voiceId: string;
  /** Engine model id (sent as `modelId`). */
  modelId?: string;
  format?: string;
  /** 0.5 to 2; default 1. */
  speed?: number;
  emotion?: string;
}

export interface TtsJobSegment {
  playbackUrl: string | undefined;
  raw: JsonObject;
}

/** An async TTS job, whichever family and shape it came from. */
export interface TtsJob extends BaseTask {
  /** Row id of the flat shape (differs from the task id), when given. */
  rowId: string | undefined;
  /** Route of the audio, set once ready. */
  audioUrl: string | undefined;
  playbackUrl: string | undefined;
  /** `delivery.downloadUrl`, to be used as returned. */
  downloadUrl: string | undefined;
  downloadReady: boolean;
  segments: TtsJobSegment[];
  /** Full text (flat detail only; lists never return it). */
  text: string | undefined;
  textPreview: string | undefined;
  /** `sha256:<hex>`; computed from `text` when the server gave only the text. */
  textFingerprint: string | undefined;
  characters: number | undefined;
  voiceId: string | undefined;
  engineModelId: string | undefined;
  quotaRemaining: number | undefined;
  requestId: string | undefined;
}

export function normalizeTtsJob(obj: JsonObject, family: string): TtsJob {
  const base = baseTaskFields(obj, family);
  const delivery = asObject(obj['delivery']);
  const text = typeof obj['text'] === 'string' ? obj['text'] : undefined;
  const taskId = str(obj, 'taskId', 'task_id');
  const id = str(obj, 'id');
  const audioUrl = str(obj, 'audioUrl', 'audio_url');
  return {
    ...base,
    rowId: taskId !== undefined && id !== undefined && id !== taskId ? id : undefined,
    audioUrl,
    playbackUrl: str(delivery, 'playbackUrl'),
    downloadUrl: str(delivery, 'downloadUrl'),
    downloadReady: bool(delivery, 'downloadReady') ?? ((base.status === TaskStatus.succeeded || base.status === TaskStatus.partialFailed) && audioUrl !== undefined),
    segments: (arr(obj, 'segments') ?? []).map((s) => {
      const raw = asObject(s);
      return { playbackUrl: str(raw, 'playbackUrl'), raw };
    }),
    text,
    textPreview: str(obj, 'textPreview'),
    textFingerprint: str(obj, 'textFingerprint') ?? (text === undefined ? undefined : textFingerprint(text)),
    characters: num(obj, 'characters'),
    voiceId: str(obj, 'voiceId', 'reference_id'),
    engineModelId: str(obj, 'engineModelId', 'modelId'),
    quotaRemaining: num(obj, 'quotaRemaining'),
    requestId: str(obj, 'requestId'),
  };
}

function familyConfig(family: TtsJobFamily): TaskFamilyConfig<TtsJob, TtsJobParams> {
  return {
    family,
    path: TTS_JOB_PATHS[family],
    body: (p) => ({ text: p.text, voiceId: p.voiceId, modelId: p.modelId, format: p.format, speed: p.speed, emotion: p.emotion }),
    normalize: normalizeTtsJob,
    statusSpelling: family === TtsJobFamily.jobs ? { succeeded: 'success', failed: 'fail', partial_failed: 'partial_fail' } : {},
  };
}

export interface RecoverOptions extends CreateOptions {
  /**
   * Allowance for the difference between this machine's clock and the
   * server's when matching `createdAt`, ms; default 30_000. A job created
   * before the call by more than this is never taken for ours.
   */
  clockSkewMs?: number;
  /** List pages read while looking for the job; default 3 (of 100 jobs each). */
  maxPages?: number;
}

export interface RecoverResult {
  job: TtsJob;
  /** The create response was lost and the job was found in the list (no second job). */
  recovered: boolean;
  /** The first create was lost, no job matched, and the job was submitted again. */
  resubmitted: boolean;
}

/** Whether a failed create may still have created the job: no answer, or a 5xx (spec 7.2: "check the original task first"). */
export function isAmbiguousFailure(err: unknown): boolean {
  if (err instanceof ConnectionError || err instanceof TimeoutError) return true;
  return err instanceof ApiError && err.status >= 500;
}

export class TtsJobs {
  readonly family: TtsJobFamily;
  readonly tasks: TaskCollection<TtsJob, TtsJobParams>;
  readonly #client: HttpClient;
  readonly #poll: PollOptions<TtsJob>;

  /**
   * @param options.family route family; default `jobs` (`/speech/tts/jobs`)
   * @param options.poll default poll options of `wait()` and handles
   */
  constructor(client: HttpClient, options: { family?: TtsJobFamily; poll?: PollOptions<TtsJob> } = {}) {
    this.#client = client;
    this.family = options.family ?? TtsJobFamily.jobs;
    this.#poll = options.poll ?? {};
    // Handles download through this class: delivery URLs or the root route, whatever the family.
    this.tasks = new TaskCollection(client, { ...familyConfig(this.family), download: (job, o) => this.download(job, o) }, this.#poll);
  }

  /** The same resource on another route family. */
  using(family: TtsJobFamily): TtsJobs {
    return new TtsJobs(this.#client, { family, poll: this.#poll });
  }

  /** Create a job (202). Charges once; never resent automatically (no idempotency key): see `createOrRecover`. */
  create(params: TtsJobParams, options: CreateOptions = {}): Promise<TtsJob> {
    return this.tasks.create(params, options);
  }

  get(id: string, options: { signal?: AbortSignal | undefined } = {}): Promise<TtsJob> {
    return this.tasks.get(id, options);
  }

  /** Newest first. `page` (jobs family) or `offset` (tasks family), `limit`, `status`, `createdAfter`. */
  list(params: ListParams = {}): Promise<TaskPage<TtsJob>> {
    return this.tasks.list(params);
  }

  handle(job: string | TtsJob, poll: PollOptions<TtsJob> = {}): JobHandle<TtsJob> {
    return this.tasks.handle(job, poll);
  }

  /** Poll until terminal (3 s, growing to 5 s by default). */
  wait(id: string, poll: PollOptions<TtsJob> = {}): Promise<TtsJob> {
    return this.tasks.wait(id, poll);
  }

  /**
   * Download a job's audio: `delivery.downloadUrl` (attachment) or
   * `playbackUrl`/`audioUrl` as returned when the job object has them, else
   * the root download route by task id. The key goes
   * with the first hop; the signed redirect is followed without it when it
   * leaves the service's hosts.
   * @param options.download the attachment form (`?download=1`); default false
   */
  async download(job: string | TtsJob, options: DownloadOptions = {}): Promise<DownloadedFile> {
    const wantAttachment = options.download ?? false;
    const given = typeof job === 'string' ? undefined : wantAttachment ? job.downloadUrl : (job.playbackUrl ?? job.audioUrl);
    const url = given ?? ttsAudioPath(typeof job === 'string' ? job : job.id) + (wantAttachment ? '?download=1' : '');
    const res = await this.#client.download(url, { signal: options.signal });
    return { data: res.data, contentType: res.contentType, url: res.url, requestId: res.requestId, headers: res.headers };
  }

  /**
   * Create a job, surviving a lost 202: when the create gets no answer (or a
   * 5xx), list the jobs created since just before the call and take the one
   * whose `textFingerprint`, `voiceId` and (when given) `engineModelId` match;
   * only when none matches is the job submitted again. A listing failure is
   * thrown: never a blind resubmission.
   */
  async createOrRecover(params: TtsJobParams, options: RecoverOptions = {}): Promise<RecoverResult> {
    const skewMs = options.clockSkewMs ?? 30_000; // 30 s
    const since = Date.now() - skewMs;
    try {
      return { job: await this.create(params, options), recovered: false, resubmitted: false };
    } catch (err) {
      if (!isAmbiguousFailure(err)) throw err;
    }
    const search = await this.#search(params, { since, maxPages: options.maxPages ?? 3, signal: options.signal });
    if (search.found) return { job: search.found, recovered: true, resubmitted: false };
    // A list whose entries carry neither a fingerprint (or the text) nor a
    // creation time cannot show that our job is absent (the spec's minimal
    // shape): resubmit only under an Idempotency-Key the caller vouches for.
    if (search.unprovable && options.idempotencyKey === undefined) {
      throw new VoxpipeError(
        'recovery_unavailable',
        "the create got no answer and this deployment's job list does not say which job is ours (no textFingerprint or createdAt); " +
          'check the list before submitting again, or pass an idempotencyKey the deployment deduplicates on',
      );
    }
    return { job: await this.create(params, options), recovered: false, resubmitted: true };
  }

  /**
   * The newest job created at or after `since` (ms since the epoch) whose
   * fingerprint, voice and (when `params.modelId` is set) model match.
   */
  async findRecent(params: TtsJobParams, options: { since: number; maxPages?: number; signal?: AbortSignal | undefined }): Promise<TtsJob | undefined> {
    return (await this.#search(params, options)).found;
  }

  /** `findRecent`, also saying whether the list could show a match at all (`unprovable`: listed jobs without fingerprint or time). */
  async #search(params: TtsJobParams, options: { since: number; maxPages?: number; signal?: AbortSignal | undefined }): Promise<{ found: TtsJob | undefined; unprovable: boolean }> {
    let unprovable = false;
    const fingerprint = textFingerprint(params.text);
    // `createdAfter` is strict on the server; a job made in the very millisecond of `since` must still be listed.
    const createdAfter = new Date(options.since - 1).toISOString();
    const limit = 100;
    let best: TtsJob | undefined;
    let bestAt = -Infinity;
    for (let i = 0, page = 1, offset = 0; i < (options.maxPages ?? 3); i++) {
      const res = await this.list(this.family === TtsJobFamily.jobs ? { page, limit, createdAfter, signal: options.signal } : { offset, limit, createdAfter, signal: options.signal });
      for (const job of res.items) {
        if (job.textFingerprint === undefined || job.createdAt === undefined) unprovable = true;
        const at = job.createdAt === undefined ? NaN : Date.parse(job.createdAt);
        const matches = at >= options.since && job.textFingerprint === fingerprint && job.voiceId === params.voiceId && (params.modelId === undefined || job.engineModelId === params.modelId);
        if (matches && at > bestAt) {
          best = job;
          bestAt = at;
        }
      }
      if (!res.hasMore || res.items.length === 0) break;
      page = res.nextPage ?? page + 1;
      offset += res.items.length;
    }
    return { found: best, unprovable: best === undefined && unprovable };
  }
}
