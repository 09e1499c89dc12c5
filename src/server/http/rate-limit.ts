/**
 * Per-account rate limiting (spec 7.2: 429 on creating, polling and
 * downloading; the values are not specified). Off unless configured, so
 * tests and users can exercise their clients' 429 handling: a token bucket
 * per account, refilled continuously, answering 429 `rate_limited` with
 * `Retry-After` in whole seconds.
 */
import { ApiErrorCode, HttpError } from './errors.js';

export interface RateLimitOptions {
  /** Sustained requests per second per account. */
  requestsPerSecond: number;
  /** Requests allowed at once; default `requestsPerSecond`. */
  burst?: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions, private readonly nowMs: () => number = () => Date.now()) {
    if (!(options.requestsPerSecond > 0)) throw new RangeError('requestsPerSecond must be positive');
    this.#rate = options.requestsPerSecond;
    this.#burst = Math.max(1, options.burst ?? options.requestsPerSecond);
  }

  /** Take one token for `key`, or throw 429 with the wait in `Retry-After`. */
  take(key: string): void {
    const now = this.nowMs();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, updatedMs: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.updatedMs) / 1000) * this.#rate);
    bucket.updatedMs = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    const waitSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate));
    throw new HttpError(429, ApiErrorCode.rateLimited, `rate limit of ${this.#rate} requests per second exceeded; retry after ${waitSeconds} s`, {}, { 'retry-after': String(waitSeconds) });
  }
}
