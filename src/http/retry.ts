/**
 * The retry policy of the REST client, pure: which failures may be resent,
 * how long to wait, and what `Retry-After` means. The client core is the only
 * caller; resources never retry on their own.
 *
 * Safety rule (spec 4.1, 7.2, 8): a request the server may have executed is
 * resent only when resending cannot charge twice, i.e. it is a read (GET,
 * HEAD), an idempotent write (PUT, DELETE), or a charging POST that carries an
 * `X-Request-Id` or `Idempotency-Key` the server deduplicates on. A 429 was
 * refused before any work, so it is always safe to resend after the wait.
 */
import { backoffDelayMs as sharedBackoffDelayMs } from '../backoff.js';
import { HEADERS } from '../protocol/rest.js';

/** HTTP methods the client sends. */
export const HttpMethod = {
  get: 'GET',
  head: 'HEAD',
  post: 'POST',
  put: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
} as const;
export type HttpMethod = (typeof HttpMethod)[keyof typeof HttpMethod];

/** Headers whose presence makes a POST safe to resend (the server deduplicates on them). */
export const IDEMPOTENCY_HEADERS = [HEADERS.requestId, HEADERS.idempotencyKey] as const;

/** 409 code meaning "the same request id is still running": wait and ask again (spec 3.6). */
export const REQUEST_IN_PROGRESS = 'ERR_REQUEST_IN_PROGRESS';

const SAFE_METHODS: readonly string[] = [HttpMethod.get, HttpMethod.head, HttpMethod.put, HttpMethod.delete];

/**
 * Whether a request may be sent again after the server may have executed it
 * (5xx, network failure, timeout).
 * @param explicit caller's override (`RequestOptions.idempotent`); wins when set
 */
export function isResendSafe(method: string, headers: Readonly<Record<string, string>>, explicit?: boolean): boolean {
  if (explicit !== undefined) return explicit;
  if (SAFE_METHODS.includes(method.toUpperCase())) return true;
  const names = Object.keys(headers).map((h) => h.toLowerCase());
  return IDEMPOTENCY_HEADERS.some((h) => names.includes(h));
}

/** Backoff settings (all in ms). */
export interface BackoffOptions {
  /** Delay before the first retry; default 500 ms. */
  initialDelayMs: number;
  /** Cap of the exponential delay; default 8_000 ms. */
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialDelayMs: 500, // 0.5 s
  maxDelayMs: 8_000, // 8 s
};

/**
 * The REST client's backoff: the shared one (`src/backoff.ts`, equal jitter:
 * half the exponential delay fixed, half random) with this client's delays.
 * @param attempt 1 for the first retry
 * @param random a number in [0, 1); `Math.random()` by default
 */
export function backoffDelayMs(attempt: number, options: BackoffOptions = DEFAULT_BACKOFF, random: number = Math.random()): number {
  return sharedBackoffDelayMs(attempt, { baseMs: options.initialDelayMs, factor: 2, maxMs: options.maxDelayMs, jitter: 0.5 }, random);
}

/**
 * Milliseconds a `Retry-After` header asks for: delta-seconds (`"2"`,
 * `"1.5"`) or an HTTP date. Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date names its weekday and month; bare numbers like "-3" are not dates.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * What the client should do after a failed attempt: retry after `delayMs`
 * (`budgeted`: the retry counts against `maxRetries`; a 409 in progress does
 * not), or stop (`deadline`: a retry would end past the request's deadline).
 */
export type RetryDecision = { retry: false; reason?: 'deadline' } | { retry: true; delayMs: number; budgeted: boolean };

export interface FailureInfo {
  /** HTTP status, or undefined for a network failure or timeout. */
  status: number | undefined;
  /** Error code of the body (for 409). */
  code: string | undefined;
  /** From `Retry-After`, when the server sent it. */
  retryAfterMs: number | undefined;
  /** Whether the request may be resent after possible execution (see `isResendSafe`). */
  resendSafe: boolean;
  /** Retries already made that count against `maxRetries`. */
  attempt: number;
  /** Waits on a 409 `ERR_REQUEST_IN_PROGRESS` already made (they do not count against `maxRetries`); default 0. */
  inProgressWaits?: number;
  /** Time left before the request's deadline, ms; undefined: no deadline. */
  remainingMs?: number;
}

export interface RetryPolicy extends BackoffOptions {
  /** Retries after the first attempt; default 2. */
  maxRetries: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown; default 60_000 ms. Not applied to a 409 in progress, which the deadline bounds. */
  maxRetryAfterMs: number;
}

/**
 * Decide whether to retry. 429: always (it was refused), waiting `Retry-After`
 * when given. 5xx, network failures and timeouts: only when `resendSafe`.
 * 409 `ERR_REQUEST_IN_PROGRESS` (spec 3.6, 7.2 "follow the code"): the same
 * request id is still being generated, so it is waited out for as long as the
 * server says (`Retry-After`, else the backoff) and asked again, however many
 * times, bounded by the request's deadline and not by `maxRetries`.
 * Everything else: never. No retry is made whose wait ends past the deadline.
 */
export function decideRetry(failure: FailureInfo, policy: RetryPolicy, random: number = Math.random()): RetryDecision {
  const left = failure.remainingMs ?? Number.POSITIVE_INFINITY;
  const after = (delayMs: number, budgeted: boolean): RetryDecision => (delayMs < left ? { retry: true, delayMs, budgeted } : { retry: false, reason: 'deadline' });
  const { status } = failure;
  if (status === 409) {
    if (failure.code !== REQUEST_IN_PROGRESS || !failure.resendSafe) return { retry: false };
    return after(failure.retryAfterMs ?? backoffDelayMs((failure.inProgressWaits ?? 0) + 1, policy, random), false);
  }
  if (failure.attempt >= policy.maxRetries) return { retry: false };
  const backoff = backoffDelayMs(failure.attempt + 1, policy, random);
  if (status === 429) {
    if (failure.retryAfterMs !== undefined) {
      return failure.retryAfterMs > policy.maxRetryAfterMs ? { retry: false } : after(failure.retryAfterMs, true);
    }
    return after(backoff, true);
  }
  if (status === undefined || status >= 500) {
    if (!failure.resendSafe) return { retry: false };
    const wait = Math.max(backoff, failure.retryAfterMs ?? 0);
    return wait > policy.maxRetryAfterMs ? { retry: false } : after(wait, true);
  }
  return { retry: false };
}
