/**
 * One route family of asynchronous tasks (`/asr/tasks`, `/media/images/jobs`,
 * `/speech/tts/jobs`, ...): create, get, list, and a `JobHandle` per task.
 * A capability gives a `TaskFamilyConfig` (its path, create body and
 * normaliser) and gets these methods; both route families of a capability
 * normalise to the same task type.
 */
import { randomUUID } from 'node:crypto';
import { VoxpipeError } from '../errors.js';
import { Priority } from '../budget.js';
import type { HttpClient, QueryValue, RetryInfo } from './client.js';
import { arr, asObject, bool, isObject, num, type JsonObject } from '../protocol/fields.js';
import { JobHandle, type DownloadedFile, type DownloadOptions, type JobSource, type PollOptions } from './job-handle.js';
import type { BaseTask, ListParams, TaskPage, TaskStatus } from './task.js';
import { HEADERS } from '../protocol/rest.js';

export interface TaskFamilyConfig<T extends BaseTask, P> {
  /** Name put in `task.family`, e.g. `tasks`, `media`, `jobs`. */
  family: string;
  /** Collection route under `{base_url}`, e.g. `/asr/tasks`. */
  path: string;
  /** Create body from the caller's parameters. */
  body(params: P): Record<string, unknown>;
  /** Build the task from the unwrapped object. */
  normalize(obj: JsonObject, family: string): T;
  /** Create requires an `Idempotency-Key` header (default a new UUID per call); default false. */
  idempotencyKey?: boolean;
  /** How this family spells normalised states in list filters (e.g. `succeeded` as `success`). */
  statusSpelling?: Partial<Record<TaskStatus, string>>;
  /** URL of the result of a finished task (downloads). */
  resultUrl?(task: T): string | undefined;
  /** Replaces the default download (GET of `resultUrl`). */
  download?(task: T, options: DownloadOptions): Promise<DownloadedFile>;
}

export interface CreateOptions {
  signal?: AbortSignal | undefined;
  /**
   * `Idempotency-Key`. Families that require one get a new UUID by default.
   * On other families it is sent only when given here: the caller asserts
   * the deployment deduplicates on it (a create then becomes safe to resend).
   */
  idempotencyKey?: string | undefined;
  /** Called before each automatic retry of the create. */
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

/** Wrapper members that hold a single task: `{ task }` (TTS envelope), `{ data }` (lip-sync media), `{ job }`. */
const WRAPPERS = ['task', 'job', 'data'] as const;

/**
 * The task object of a response, with the envelope's own fields (e.g.
 * `requestId`, `quotaRemaining`, `creditsUsed`) merged underneath it.
 */
export function unwrapTask(body: unknown): JsonObject {
  const obj = asObject(body);
  for (const key of WRAPPERS) {
    const inner = obj[key];
    if (isObject(inner)) {
      const outer: JsonObject = { ...obj };
      delete outer[key];
      delete outer['record'];
      return { ...outer, ...inner };
    }
  }
  return obj;
}

const LIST_KEYS = ['data', 'tasks', 'jobs', 'items', 'results'];

/** Items and pagination of a list response, whatever its wrapper. */
export function unwrapList(body: unknown): { items: unknown[]; pagination: JsonObject; raw: JsonObject } {
  if (Array.isArray(body)) return { items: body, pagination: {}, raw: { data: body } };
  const obj = asObject(body);
  const direct = arr(obj, ...LIST_KEYS);
  if (direct) return { items: direct, pagination: isObject(obj['pagination']) ? obj['pagination'] : obj, raw: obj };
  // `{ success, data: { items, pagination } }`
  const data = asObject(obj['data']);
  const nested = arr(data, ...LIST_KEYS);
  return { items: nested ?? [], pagination: isObject(data['pagination']) ? data['pagination'] : isObject(obj['pagination']) ? obj['pagination'] : data, raw: obj };
}

/** Build a `TaskPage` from a list response. */
export function toTaskPage<T>(body: unknown, normalize: (obj: JsonObject) => T): TaskPage<T> {
  const { items, pagination, raw } = unwrapList(body);
  const nextPage = num(pagination, 'nextPage', 'next_page');
  return {
    items: items.filter(isObject).map(normalize),
    hasMore: bool(pagination, 'hasMore', 'has_more') ?? nextPage !== undefined,
    page: num(pagination, 'page'),
    nextPage,
    offset: num(pagination, 'offset'),
    limit: num(pagination, 'limit'),
    raw,
  };
}

export class TaskCollection<T extends BaseTask, P> implements JobSource<T> {
  protected readonly client: HttpClient;
  readonly config: TaskFamilyConfig<T, P>;
  readonly #poll: PollOptions<T>;

  /** @param poll default poll options of the handles this collection makes */
  constructor(client: HttpClient, config: TaskFamilyConfig<T, P>, poll: PollOptions<T> = {}) {
    this.client = client;
    this.config = config;
    this.#poll = poll;
  }

  /** Create a task. Resolves with the task as the create response gives it. */
  async create(params: P, options: CreateOptions = {}): Promise<T> {
    const key = this.config.idempotencyKey ? (options.idempotencyKey ?? randomUUID()) : options.idempotencyKey;
    const res = await this.client.json({ method: 'POST', path: this.config.path, body: this.config.body(params), headers: { [HEADERS.idempotencyKey]: key }, signal: options.signal, onRetry: options.onRetry, generation: true, priority: Priority.batch });
    return this.#normalize(res.data, res.requestId);
  }

  /** Read a task. */
  async get(id: string, options: { signal?: AbortSignal | undefined } = {}): Promise<T> {
    const res = await this.client.json({ path: `${this.config.path}/${encodeURIComponent(id)}`, signal: options.signal });
    return this.#normalize(res.data, res.requestId);
  }

  /** List tasks, newest first. A `TaskStatus` filter is spelled as this family spells it. */
  async list(params: ListParams = {}): Promise<TaskPage<T>> {
    const status = params.status === undefined ? undefined : (this.config.statusSpelling?.[params.status as TaskStatus] ?? params.status);
    const query: Record<string, QueryValue> = { page: params.page, limit: params.limit, offset: params.offset, status, createdAfter: params.createdAfter };
    const res = await this.client.json({ path: this.config.path, query, signal: params.signal });
    return toTaskPage(res.data, (obj) => this.config.normalize(obj, this.config.family));
  }

  /** A handle on a task (by id, or from a task already read). */
  handle(task: string | T, poll: PollOptions<T> = {}): JobHandle<T> {
    const defaults = { ...this.#poll, ...poll };
    return typeof task === 'string' ? new JobHandle(task, this, undefined, defaults) : new JobHandle(task.id, this, task, defaults);
  }

  /** Create a task and return its handle. */
  async submit(params: P, options: CreateOptions & PollOptions<T> = {}): Promise<JobHandle<T>> {
    return this.handle(await this.create(params, options), options);
  }

  /** Poll a task until it is terminal. */
  wait(id: string, poll: PollOptions<T> = {}): Promise<T> {
    return this.handle(id, poll).wait();
  }

  /** `JobSource.fetch`. */
  fetch(id: string, signal?: AbortSignal): Promise<T> {
    return this.get(id, { signal });
  }

  /** `JobSource.download`: fetch the task's result URL (the key goes only to the service's own hosts). */
  async download(task: T, options: DownloadOptions = {}): Promise<DownloadedFile> {
    if (this.config.download) return this.config.download(task, options);
    const url = this.config.resultUrl?.(task);
    if (!url) throw new VoxpipeError('no_result', `task ${task.id} has no result URL`);
    const res = await this.client.download(url, { signal: options.signal });
    return { data: res.data, contentType: res.contentType, url: res.url, requestId: res.requestId, headers: res.headers };
  }

  #normalize(body: unknown, requestId: string | undefined): T {
    const obj = unwrapTask(body);
    if (requestId !== undefined && obj['requestId'] === undefined) obj['requestId'] = requestId;
    return this.config.normalize(obj, this.config.family);
  }
}
