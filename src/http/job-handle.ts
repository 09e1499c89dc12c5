/**
 * A handle on one asynchronous task of any family (TTS job, ASR, image,
 * video, lip-sync): poll it once, wait for a terminal state, iterate its
 * status changes, get its result or download it. The handle knows nothing of
 * routes: a `JobSource` reads the task and downloads its result, so every
 * capability reuses this class.
 *
 * ```ts
 * const job = await client.asr.submit({ audioUrl });
 * for await (const event of job) console.error(event.status);
 * const task = await job.result(); // throws JobFailedError on `failed`
 * ```
 */
import { TimeoutError, VoxpipeError } from '../errors.js';
import { sleep as defaultSleep, type SleepFn } from './sleep.js';
import { isTerminal, JobFailedError, TaskStatus, type BaseTask } from './task.js';

/** A downloaded result file. */
export interface DownloadedFile {
  data: Buffer;
  contentType: string;
  /** Final URL after redirects. Signed URLs may carry a signature: do not log them. */
  url: string;
  requestId: string | undefined;
  /** Response headers (e.g. PCM metadata of raw audio), when known. */
  headers?: Headers;
}

export interface DownloadOptions {
  signal?: AbortSignal | undefined;
  /** Ask for the attachment form where the route has one (`?download=1`); default false. */
  download?: boolean;
}

/** How a handle reads its task and fetches its result. */
export interface JobSource<T extends BaseTask> {
  /** Read the task once. */
  fetch(id: string, signal?: AbortSignal): Promise<T>;
  /** Download the result of a finished task; absent when the capability has nothing to download. */
  download?(task: T, options: DownloadOptions): Promise<DownloadedFile>;
}

/** One observation of the task while polling. */
export interface JobEvent<T extends BaseTask> {
  task: T;
  status: TaskStatus;
  /** Status before this poll; undefined at the first observation. */
  previousStatus: TaskStatus | undefined;
  /** Whether the status differs from the previous observation. */
  changed: boolean;
  /** Polls made so far by this iteration. */
  polls: number;
}

export interface PollOptions<T extends BaseTask = BaseTask> {
  /** First delay between polls, ms; default 3_000 (spec 8: every 3 to 5 s, growing gradually). */
  intervalMs?: number;
  /** Largest delay between polls, ms; default 5_000. */
  maxIntervalMs?: number;
  /** Factor applied to the delay after each poll; default 1.2. */
  growth?: number;
  /** Give up after this long with a `TimeoutError`, ms; default no limit. */
  timeoutMs?: number | undefined;
  /** Transient failures (429, 5xx, network) in a row tolerated before giving up; default 5. */
  maxConsecutiveErrors?: number;
  signal?: AbortSignal | undefined;
  /** Called after every poll (status changed or not): progress display. */
  onProgress?: ((event: JobEvent<T>) => void) | undefined;
  /** Injected by tests; default a timer. */
  sleep?: SleepFn;
}

interface ResolvedPoll<T extends BaseTask> {
  intervalMs: number;
  maxIntervalMs: number;
  growth: number;
  maxConsecutiveErrors: number;
  sleep: SleepFn;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
  onProgress: ((event: JobEvent<T>) => void) | undefined;
}

export const DEFAULT_POLL = {
  intervalMs: 3_000, // 3 s
  maxIntervalMs: 5_000, // 5 s
  growth: 1.2,
  maxConsecutiveErrors: 5,
} as const;

/** Next delay between polls: `intervalMs` first, then growing by `growth` up to `maxIntervalMs`. */
export function nextPollDelayMs(previousMs: number | undefined, options: { intervalMs: number; maxIntervalMs: number; growth: number }): number {
  if (previousMs === undefined) return Math.min(options.intervalMs, options.maxIntervalMs);
  return Math.min(options.maxIntervalMs, Math.round(previousMs * options.growth));
}

function isTransient(err: unknown): err is VoxpipeError {
  return err instanceof VoxpipeError && err.retryable && err.code !== 'aborted';
}

export class JobHandle<T extends BaseTask> implements AsyncIterable<JobEvent<T>> {
  readonly id: string;
  readonly #source: JobSource<T>;
  readonly #defaults: PollOptions<T>;
  #last: T | undefined;

  /**
   * @param initial the task as the create call returned it, if known (saves a first poll)
   * @param defaults poll options used when a call gives none
   */
  constructor(id: string, source: JobSource<T>, initial?: T, defaults: PollOptions<T> = {}) {
    this.id = id;
    this.#source = source;
    this.#last = initial;
    this.#defaults = defaults;
  }

  /** The latest snapshot of the task, if any poll (or the create call) gave one. */
  get task(): T | undefined {
    return this.#last;
  }

  /** Read the task once. */
  async poll(signal?: AbortSignal): Promise<T> {
    this.#last = await this.#source.fetch(this.id, signal);
    return this.#last;
  }

  /**
   * Observe the task until it is terminal, yielding an event each time its
   * status changes (the first observation included). Transient read errors
   * are waited out (honouring `Retry-After`); others are thrown.
   */
  async *events(options: PollOptions<T> = {}): AsyncGenerator<JobEvent<T>, T, undefined> {
    const o = this.#resolve(options);
    const deadline = o.timeoutMs === undefined ? undefined : Date.now() + o.timeoutMs;
    let previous: TaskStatus | undefined;
    let polls = 0;
    let delayMs: number | undefined;
    let errors = 0;
    let task = this.#last;
    if (task) {
      const event: JobEvent<T> = { task, status: task.status, previousStatus: undefined, changed: true, polls };
      o.onProgress?.(event);
      yield event;
      if (isTerminal(task.status)) return task;
      previous = task.status;
    }
    let waitMs = task ? (delayMs = nextPollDelayMs(undefined, o)) : 0;
    for (;;) {
      if (deadline !== undefined) {
        const left = deadline - Date.now();
        if (left <= 0) throw new TimeoutError(`task ${this.id} not finished after ${o.timeoutMs} ms (last status: ${previous ?? 'unknown'})`);
        waitMs = Math.min(waitMs, left);
      }
      if (waitMs > 0) await o.sleep(waitMs, o.signal);
      try {
        task = await this.poll(o.signal);
        errors = 0;
      } catch (err) {
        if (!isTransient(err) || ++errors > o.maxConsecutiveErrors) throw err;
        delayMs = nextPollDelayMs(delayMs, o);
        const retryAfterMs = 'retryAfterMs' in err && typeof err.retryAfterMs === 'number' ? err.retryAfterMs : 0;
        waitMs = Math.max(delayMs, retryAfterMs);
        continue;
      }
      polls++;
      const event: JobEvent<T> = { task, status: task.status, previousStatus: previous, changed: task.status !== previous, polls };
      o.onProgress?.(event);
      if (event.changed) yield event;
      if (isTerminal(task.status)) return task;
      previous = task.status;
      waitMs = delayMs = nextPollDelayMs(delayMs, o);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<JobEvent<T>> {
    return this.events();
  }

  /** Poll until the task is terminal and return it (whatever the terminal state). */
  async wait(options: PollOptions<T> = {}): Promise<T> {
    const it = this.events(options);
    for (;;) {
      const next = await it.next();
      if (next.done) return next.value;
    }
  }

  /** `wait()`, then throw `JobFailedError` when the task failed. `partial_failed` counts as a result. */
  async result(options: PollOptions<T> = {}): Promise<T> {
    const task = await this.wait(options);
    if (task.status === TaskStatus.failed) throw new JobFailedError(task);
    return task;
  }

  /** Wait for a result and download it. */
  async download(options: PollOptions<T> & DownloadOptions = {}): Promise<DownloadedFile> {
    if (!this.#source.download) throw new VoxpipeError('unsupported', 'this kind of task has no downloadable result');
    const task = await this.result(options);
    return this.#source.download(task, { signal: options.signal, download: options.download ?? false });
  }

  #resolve(options: PollOptions<T>): ResolvedPoll<T> {
    const merged = { ...this.#defaults, ...options };
    return {
      intervalMs: merged.intervalMs ?? DEFAULT_POLL.intervalMs, // 3 s
      maxIntervalMs: merged.maxIntervalMs ?? DEFAULT_POLL.maxIntervalMs, // 5 s
      growth: merged.growth ?? DEFAULT_POLL.growth,
      maxConsecutiveErrors: merged.maxConsecutiveErrors ?? DEFAULT_POLL.maxConsecutiveErrors,
      sleep: merged.sleep ?? defaultSleep,
      timeoutMs: merged.timeoutMs,
      signal: merged.signal,
      onProgress: merged.onProgress,
    };
  }
}
