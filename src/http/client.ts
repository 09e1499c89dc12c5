/**
 * The REST client core: the one place that knows authentication, timeouts,
 * redirects, typed errors and the retry policy. Resources (one module each
 * under `resources/`) are one-line calls of `request()`, `json()`,
 * `binary()` and `download()`.
 *
 * The API key lives in a private field, goes only in the `Authorization`
 * header and only to the service's own origins (`baseUrl`, `rootUrl`): a
 * redirect or a result URL on a foreign host is fetched without it. It is
 * registered with `registerSecret`, so no error message can carry it.
 *
 * Every request of a deployment shares its budget (`budget.ts`): a charging
 * creation (`generation`) holds a slot for its duration, and a 429's wait is
 * the deployment's, so every request of this process to it waits it out,
 * not only the one refused.
 */
import { ApiError, ConnectionError, registerSecret, TimeoutError, VoxpipeError } from '../errors.js';
import { apiErrorFromResponse, requestIdFromHeaders } from './api-error.js';
import { decideRetry, DEFAULT_BACKOFF, HttpMethod, isResendSafe, parseRetryAfterMs, type RetryPolicy } from './retry.js';
import pRetry from 'p-retry';
import { abortErrorOf, sleep as defaultSleep, type SleepFn } from './sleep.js';
import { joinUrl, parseSetting, requireApiKey, serviceUrls } from '../config.js';
import { deploymentBudget, Priority, type DeploymentBudget } from '../budget.js';
import { publish, type HttpRequestInfo } from '../telemetry/channels.js';

export { ClientErrorCode } from '../protocol/codes.js';
import { ClientErrorCode } from '../protocol/codes.js';

/** The spec's `{base_url}` suffix; `{root_url}` is what precedes it. */
export { BASE_PATH } from '../protocol/rest.js';
/** `{root_url}` of a base URL (one derivation for every entry point: `config.ts`). */
export { deriveRootUrl } from '../config.js';

/** Information given to `onRetry` before the client waits and resends. */
export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  error: VoxpipeError;
  delayMs: number;
  method: string;
  /** Path of the URL (never the query or the host's credentials). */
  path: string;
}

export interface HttpClientOptions {
  /**
   * The API key; sent only as `Authorization: Bearer` to the service's
   * origins. Required (`missing_api_key` without one); `null` only for a
   * client of public URLs that sends no key at all.
   */
  apiKey: string | null;
  /**
   * The spec's `{base_url}`, ending in `/api/open/v1`, or the deployment's
   * root (path prefix included), to which `/api/open/v1` is added
   * (`config.ts`, `serviceUrls`). Required (`invalid_config` when not an http(s) URL).
   */
  baseUrl: string;
  /** The spec's `{root_url}`; default: `baseUrl` without `/api/open/v1`, its path prefix kept. */
  rootUrl?: string | undefined;
  /** Timeout of one attempt (response and body), ms; default 60_000. */
  timeoutMs?: number;
  /** Retries after the first attempt where retrying is safe; default 2. */
  maxRetries?: number;
  /**
   * Deadline of one request, all its attempts and waits included, ms; default
   * `timeoutMs × (maxRetries + 1) + maxRetryAfterMs × maxRetries`, the longest
   * its retry budget could take anyway (300 s by default), so the default
   * never cuts a budgeted retry short. It bounds the wait for a 409
   * `ERR_REQUEST_IN_PROGRESS`, which the retry budget does not (spec 3.6, 7.2).
   */
  deadlineMs?: number;
  /** First backoff delay, ms; default 500. */
  initialRetryDelayMs?: number;
  /** Backoff cap, ms; default 8_000. */
  maxRetryDelayMs?: number;
  /** A longer `Retry-After` is not waited for (the error is thrown), ms; default 60_000. */
  maxRetryAfterMs?: number;
  /** Redirects followed per attempt; default 5. */
  maxRedirects?: number;
  /** `fetch` implementation; default the global one. */
  fetch?: typeof fetch;
  /** Sleep used between retries; default a timer (tests inject a recorder). */
  sleep?: SleepFn;
  /** Source of jitter in [0, 1); default `Math.random`. */
  random?: () => number;
  /** Clock of deadlines and `Retry-After` dates, ms since the epoch; default `Date.now` (tests inject one their sleep advances). */
  now?: () => number;
  /** Called before every retry (every request of this client). */
  onRetry?: (info: RetryInfo) => void;
  /** `User-Agent` header; default `voxpipe`. */
  userAgent?: string;
  /** More origins of the same service that get the key (e.g. `{rt_http_url}` when it is on another host or port). */
  trustedUrls?: readonly string[];
  /** Generations (charging creations, realtime requests) this process runs at once on the deployment; default unlimited (`VOXPIPE_MAX_CONCURRENCY` when set), learnt from 429s (`budget.ts`). */
  maxConcurrency?: number | undefined;
  /** Longest wait of a creation for a slot of the deployment's budget, ms (then `queue_timeout`); default unbounded. */
  queueTimeoutMs?: number | undefined;
}

/** Query values; `undefined` and `null` are left out. */
export type QueryValue = string | number | boolean | undefined | null;

export interface RequestOptions {
  /** Default GET. */
  method?: HttpMethod;
  /** Path under `{base_url}` (or `{root_url}` when `root`), or an absolute URL. */
  path: string;
  /** Resolve `path` against `{root_url}` instead of `{base_url}`; default false. */
  root?: boolean;
  query?: Record<string, QueryValue>;
  /** JSON-encoded, unless it is `FormData`, `Blob`, `Uint8Array` or a string (sent as is). */
  body?: unknown;
  /** Extra headers; an `undefined` value is left out. */
  headers?: Record<string, string | undefined>;
  /** Override whether resending after a possible execution is safe (default: see `isResendSafe`). */
  idempotent?: boolean;
  signal?: AbortSignal | undefined;
  /** Per-attempt timeout, ms; default the client's. */
  timeoutMs?: number;
  /** Default the client's. */
  maxRetries?: number;
  /** Deadline of this request, all attempts and waits included, ms; default the client's (see `HttpClientOptions.deadlineMs`). */
  deadlineMs?: number;
  /** Called before each retry of this request (besides the client's `onRetry`). */
  onRetry?: ((info: RetryInfo) => void) | undefined;
  /**
   * A charging creation (sync TTS, compat speech, a job or task created): it
   * holds a slot of the deployment's budget while it runs, and a 429 teaches
   * the budget the deployment's cap; default false.
   */
  generation?: boolean;
  /** Its place in the budget's queue; default `interactive`. */
  priority?: Priority | undefined;
  /** Longest wait for a slot, ms; default the client's. */
  queueTimeoutMs?: number | undefined;
}

interface ResponseMeta {
  status: number;
  headers: Headers;
  /** Final URL after redirects. */
  url: string;
  /** Server request id (`x-request-id` or `x-svc-request-id`). */
  requestId: string | undefined;
  /** Retries made before this response. */
  retries: number;
}
export interface JsonResponse extends ResponseMeta {
  kind: 'json';
  data: unknown;
}
export interface BinaryResponse extends ResponseMeta {
  kind: 'binary';
  data: Buffer;
  contentType: string;
}
/** A 2xx response: JSON when its Content-Type says so, else binary. */
export type ApiResponse = JsonResponse | BinaryResponse;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function isJsonContentType(contentType: string): boolean {
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || mime.endsWith('+json');
}

type Encoded = { body: BodyInit | undefined; contentType: string | undefined };

/** A 2xx response before the retry count is known. */
type Attempted = Omit<JsonResponse, 'retries'> | Omit<BinaryResponse, 'retries'>;

/** A failed attempt and the `Retry-After` its response carried (429 and 503 send one). */
class Failed {
  constructor(
    readonly error: VoxpipeError,
    readonly retryAfterMs: number | undefined = undefined,
  ) {}
}

function encodeBody(body: unknown): Encoded {
  if (body === undefined) return { body: undefined, contentType: undefined };
  if (typeof FormData !== 'undefined' && body instanceof FormData) return { body, contentType: undefined }; // fetch sets the boundary
  if (typeof Blob !== 'undefined' && body instanceof Blob) return { body, contentType: body.type || 'application/octet-stream' };
  if (body instanceof Uint8Array) return { body: new Blob([new Uint8Array(body)]), contentType: 'application/octet-stream' };
  if (typeof body === 'string') return { body, contentType: 'text/plain; charset=utf-8' };
  return { body: JSON.stringify(body), contentType: 'application/json' };
}

/** The HTTP client every resource uses. */
export class HttpClient {
  readonly baseUrl: string;
  readonly rootUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly #deadlineMs: number | undefined;
  readonly #now: () => number;
  readonly #apiKey: string | undefined;
  readonly #policy: RetryPolicy;
  readonly #maxRedirects: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: SleepFn;
  readonly #random: () => number;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  readonly #userAgent: string;
  readonly #trustedOrigins: Set<string>;
  readonly #budget: DeploymentBudget;
  readonly #queueTimeoutMs: number | undefined;

  constructor(options: HttpClientOptions) {
    // One vocabulary of a bad configuration (`config.ts`): `missing_api_key`, `invalid_config`.
    this.#apiKey = options.apiKey === null ? undefined : requireApiKey(options.apiKey, 'apiKey (or VOXPIPE_API_KEY)');
    registerSecret(this.#apiKey);
    const urls = serviceUrls({ baseUrl: options.baseUrl, rootUrl: options.rootUrl });
    this.baseUrl = urls.baseUrl;
    this.rootUrl = urls.rootUrl;
    this.timeoutMs = options.timeoutMs ?? 60_000; // 60 s per attempt
    this.maxRetries = options.maxRetries ?? 2;
    this.#deadlineMs = options.deadlineMs;
    this.#now = options.now ?? Date.now;
    this.#policy = {
      maxRetries: this.maxRetries,
      initialDelayMs: options.initialRetryDelayMs ?? DEFAULT_BACKOFF.initialDelayMs, // 0.5 s
      maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_BACKOFF.maxDelayMs, // 8 s
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000, // 60 s
    };
    this.#maxRedirects = options.maxRedirects ?? 5;
    // The global one at call time (a test may stub it after the client was built).
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#onRetry = options.onRetry;
    this.#userAgent = options.userAgent ?? 'voxpipe';
    this.#budget = deploymentBudget(this.baseUrl, this.#apiKey, { maxConcurrency: options.maxConcurrency });
    this.#queueTimeoutMs = options.queueTimeoutMs;
    this.#trustedOrigins = new Set([new URL(this.baseUrl).origin, new URL(this.rootUrl).origin, ...(options.trustedUrls ?? []).map((u) => parseSetting('trustedUrls', u).origin)]);
  }

  /** The deployment's shared budget (`budget.ts`), as the realtime sessions of the same origin and key see it. */
  get budget(): DeploymentBudget {
    return this.#budget;
  }

  /** Whether `url` is on one of the service's origins (the only ones that get the key). */
  isServiceUrl(url: string | URL): boolean {
    try {
      return this.#trustedOrigins.has(new URL(url).origin);
    } catch {
      return false;
    }
  }

  /** Absolute URL of `path` (see `RequestOptions.path`). */
  url(path: string, root = false, query?: Record<string, QueryValue>): URL {
    const url = /^https?:\/\//i.test(path) ? new URL(path) : new URL(joinUrl(root ? this.rootUrl : this.baseUrl, path));
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    return url;
  }

  /**
   * Send a request, retrying where safe (see `retry.ts`). Resolves with the
   * 2xx response, JSON or binary by its Content-Type; rejects with an
   * `ApiError` subclass for a non-2xx status, `TimeoutError`,
   * `ConnectionError` or `AbortError`.
   */
  request(options: RequestOptions): Promise<ApiResponse> {
    if (!publish.httpRequestStart.hasSubscribers && !publish.httpRequestEnd.hasSubscribers) return this.#request(options);
    return this.#observed(options);
  }

  /** `request()` with its start and end published (`http:request:start`, `http:request:end`): path and status, never the query or the key. */
  async #observed(options: RequestOptions): Promise<ApiResponse> {
    const url = this.url(options.path, options.root ?? false);
    const request: HttpRequestInfo = { method: options.method ?? HttpMethod.get, origin: url.origin, path: url.pathname };
    publish.httpRequestStart.publish({ request });
    try {
      const res = await this.#request(options);
      publish.httpRequestEnd.publish({ request, status: res.status, retries: res.retries, error: undefined });
      return res;
    } catch (err) {
      const error = err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', String(err));
      publish.httpRequestEnd.publish({ request, status: err instanceof ApiError ? err.status : undefined, retries: 0, error });
      throw err;
    }
  }

  async #request(options: RequestOptions): Promise<ApiResponse> {
    const method = options.method ?? HttpMethod.get;
    const url = this.url(options.path, options.root ?? false, options.query);
    const encoded = encodeBody(options.body);
    const headers: Record<string, string> = { 'user-agent': this.#userAgent };
    if (encoded.contentType) headers['content-type'] = encoded.contentType;
    for (const [k, v] of Object.entries(options.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
    const resendSafe = isResendSafe(method, headers, options.idempotent);
    const policy = { ...this.#policy, maxRetries: options.maxRetries ?? this.#policy.maxRetries };
    const context = `${method} ${url.pathname}`;
    const started = this.#now();
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const deadline = started + (options.deadlineMs ?? this.#deadlineMs ?? timeoutMs * (policy.maxRetries + 1) + policy.maxRetryAfterMs * policy.maxRetries);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

    // p-retry runs the attempts; decideRetry (the spec's resend rules,
    // Retry-After, the deadline) decides after each failure, and the wait it
    // names is slept in onFailedAttempt, so p-retry's own delay schedule and
    // count are off (minTimeout 0, retries unbounded): the budget is counted
    // here, because a 409 in progress is waited out without spending it.
    let retryAfterMs: number | undefined;
    let budgeted = 0;
    let inProgressWaits = 0;
    const budget = this.#budget;
    const seat = options.generation ? budget.seat({ priority: options.priority ?? Priority.interactive, queueTimeoutMs: options.queueTimeoutMs ?? this.#queueTimeoutMs, signal: options.signal }) : undefined;
    try {
      const outcome = await pRetry(
        async (attemptNumber) => {
          // The deployment's wait first (a 429 of another request of this process to it; a retry waited its own
          // below), then a slot for a creation.
          const closed = attemptNumber === 1 ? budget.closedForMs() : 0;
          if (closed > 0) await this.#sleep(closed, options.signal);
          await seat?.take();
          // No attempt runs past the deadline.
          const attempted = await this.#attempt(method, url, headers, encoded.body, options, context, Math.max(1, Math.min(timeoutMs, deadline - this.#now())));
          if (!(attempted instanceof Failed)) return { value: attempted, retries: attemptNumber - 1 };
          retryAfterMs = attempted.retryAfterMs;
          throw attempted.error;
        },
        {
          retries: Number.POSITIVE_INFINITY,
          minTimeout: 0,
          onFailedAttempt: async ({ error: failure, attemptNumber }) => {
            // Only a service's answer or no answer may be retried; errors of our own (invalid
            // JSON, too many redirects, anything #attempt threw) are not transient.
            if (!(failure instanceof ApiError || failure instanceof ConnectionError || failure instanceof TimeoutError)) throw failure;
            const status = failure instanceof ApiError ? failure.status : undefined;
            const remainingMs = deadline - this.#now();
            const decision = decideRetry({ status, code: failure.code, retryAfterMs, resendSafe, attempt: budgeted, inProgressWaits, remainingMs }, policy, this.#random());
            if (!decision.retry) {
              if (status === 409 && decision.reason === 'deadline') {
                throw new TimeoutError(
                  `${context}: the server still had this request in progress ${seconds(this.#now() - started)} after it was first sent` +
                    `${retryAfterMs === undefined ? '' : ` and asked to wait ${seconds(retryAfterMs)} more`}, past the request's deadline of ${seconds(deadline - started)}` +
                    ' (resending the same request id later is not charged twice)',
                  { retryable: true, cause: failure },
                );
              }
              // Say the real wait: a timeout after retries took several attempts' time, not one.
              if (failure instanceof TimeoutError && attemptNumber > 1) {
                throw new TimeoutError(`${context}: no answer after ${attemptNumber} attempts in ${seconds(this.#now() - started)} (each attempt waited ${timeoutMs} ms)`, { retryable: true, cause: failure });
              }
              throw failure;
            }
            if (decision.budgeted) budgeted++;
            else inProgressWaits++;
            // A refusal closes the deployment for everyone: this request waits as long as the longest wait any
            // request was given, and a creation gives its slot back (teaching the budget) and lines up first again.
            if (status === 429 && seat) seat.refused(decision.delayMs);
            else if (status === 429) budget.pause(decision.delayMs);
            const info: RetryInfo = { attempt: attemptNumber, error: failure, delayMs: decision.delayMs, method, path: url.pathname };
            this.#onRetry?.(info);
            options.onRetry?.(info);
            await this.#sleep(status === 429 ? Math.max(decision.delayMs, budget.closedForMs()) : decision.delayMs, options.signal);
          },
        },
      );
      return { ...outcome.value, retries: outcome.retries } as ApiResponse;
    } finally {
      seat?.release();
    }
  }

  /** `request()` that requires a JSON response. */
  async json(options: RequestOptions): Promise<JsonResponse> {
    const res = await this.request(options);
    if (res.kind !== 'json') {
      throw new VoxpipeError(ClientErrorCode.unexpectedResponse, `${options.method ?? 'GET'} ${this.url(options.path, options.root).pathname} returned ${res.contentType || 'no Content-Type'}, expected JSON`, { requestId: res.requestId });
    }
    return res;
  }

  /** `request()` that requires a binary (non-JSON) response, e.g. audio. */
  async binary(options: RequestOptions): Promise<BinaryResponse> {
    const res = await this.request(options);
    if (res.kind !== 'binary') {
      throw new VoxpipeError(ClientErrorCode.unexpectedResponse, `${options.method ?? 'GET'} ${this.url(options.path, options.root).pathname} returned JSON, expected binary content`, { requestId: res.requestId });
    }
    return res;
  }

  /**
   * GET a file by URL: absolute, or a path relative to `{root_url}` (download
   * and preview routes live there). The key goes with the first hop and with
   * every redirect that stays on the service's origins, never to another host.
   */
  download(url: string, options: { signal?: AbortSignal | undefined; query?: Record<string, QueryValue>; timeoutMs?: number } = {}): Promise<BinaryResponse> {
    return this.binary({ path: url, root: true, ...options });
  }

  async #attempt(method: string, url: URL, headers: Record<string, string>, body: BodyInit | undefined, options: RequestOptions, context: string, timeoutMs: number): Promise<Attempted | Failed> {
    if (options.signal?.aborted) throw abortErrorOf(options.signal);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = (): void => controller.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.#fetchFollowing(method, url, headers, body, controller.signal, context);
      const contentType = res.headers.get('content-type') ?? '';
      const meta = { status: res.status, headers: res.headers, url: res.url || url.href, requestId: requestIdFromHeaders(res.headers) };
      if (!res.ok) return new Failed(apiErrorFromResponse(res.status, res.headers, await res.text(), context, this.#now()), parseRetryAfterMs(res.headers.get('retry-after'), this.#now()));
      if (method === HttpMethod.head || res.status === 204) {
        await res.body?.cancel();
        return { ...meta, kind: 'json', data: null };
      }
      const bytes = Buffer.from(await res.arrayBuffer());
      if (!isJsonContentType(contentType)) return { ...meta, kind: 'binary', data: bytes, contentType };
      if (bytes.length === 0) return { ...meta, kind: 'json', data: null };
      try {
        return { ...meta, kind: 'json', data: JSON.parse(bytes.toString('utf8')) as unknown };
      } catch {
        return new Failed(new VoxpipeError(ClientErrorCode.invalidResponse, `${context} returned invalid JSON`, { requestId: meta.requestId }));
      }
    } catch (err) {
      if (options.signal?.aborted) throw abortErrorOf(options.signal);
      if (timedOut) return new Failed(new TimeoutError(`${context} timed out after ${timeoutMs} ms`, { retryable: true }));
      if (err instanceof VoxpipeError) return new Failed(err);
      const reason = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
      // Name the host (never the key: it is only ever in a header).
      return new Failed(new ConnectionError(ClientErrorCode.connectionFailed, `${context} failed: cannot reach ${url.host}: ${reason}`, { retryable: true, cause: err }));
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Fetch with manual redirects, so the key is sent only to the service's origins. */
  async #fetchFollowing(method: string, url: URL, headers: Record<string, string>, body: BodyInit | undefined, signal: AbortSignal, context: string): Promise<Response> {
    let current = url;
    let currentMethod = method;
    let currentBody = body;
    const hopHeaders = { ...headers };
    for (let hop = 0; ; hop++) {
      const sent: Record<string, string> = { ...hopHeaders };
      if (this.#apiKey !== undefined && this.isServiceUrl(current)) sent['authorization'] = `Bearer ${this.#apiKey}`;
      const res = await this.#fetch(current, { method: currentMethod, headers: sent, body: currentBody ?? null, redirect: 'manual', signal });
      const location = res.headers.get('location');
      if (!REDIRECT_STATUSES.has(res.status) || !location) return res;
      await res.body?.cancel();
      if (hop >= this.#maxRedirects) throw new VoxpipeError(ClientErrorCode.tooManyRedirects, `${context}: more than ${this.#maxRedirects} redirects`);
      current = new URL(location, current);
      // 303, and 301/302 after a POST, turn into a GET without a body (as browsers and fetch do).
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && currentMethod === HttpMethod.post)) {
        currentMethod = HttpMethod.get;
        currentBody = undefined;
        delete hopHeaders['content-type'];
      }
    }
  }
}
