/**
 * A cap on the generations an account runs at once (spec 7.2: 429 "rate
 * limited" on creating; spec 8: the values are not shown), off unless
 * configured (`maxConcurrentGenerations`, `serve --max-concurrent N`), so
 * clients can be tested against a deployment that has one.
 *
 * What counts: a realtime connection authenticated by its handshake's key
 * (one generation per connection, spec 8), from the upgrade until it
 * closes, and a charging HTTP creation (sync TTS, compat speech, a job or
 * task created) while its request runs. Beyond the cap, a creation is
 * answered 429 `rate_limited` with `Retry-After`, and a realtime upgrade is
 * refused with the same HTTP 429 before `101` (spec 5.5: handshake failures
 * are HTTP responses): a client learns it before any generation started,
 * reads the same error as on REST, and nothing needs resuming.
 */
import { ApiErrorCode, HttpError } from './http/errors.js';

/** What the cap has seen, for tests and benches. */
export interface ConcurrencyStats {
  /** Generations running now, all accounts. */
  running: number;
  /** Most running at once for any one account. */
  peak: number;
  /** Generations admitted. */
  admitted: number;
  /** Refused with 429. */
  refused: number;
  /** The cap per account; null: none. */
  max: number | null;
}

/** `Retry-After` of a refusal, in whole seconds (HTTP's unit). */
const RETRY_AFTER_SECONDS = 1;

export class ConcurrencyCap {
  #max: number | undefined;
  readonly #running = new Map<string, number>();
  #total = 0;
  #peak = 0;
  #admitted = 0;
  #refused = 0;

  constructor(max: number | undefined) {
    this.#max = max;
  }

  /** Change the cap (tests); undefined: none. */
  set(max: number | undefined): void {
    this.#max = max;
  }

  /**
   * Count one generation of `userId`, or throw 429 when the account already
   * runs the cap. Returns its release, which counts once however often called.
   */
  take(userId: string): () => void {
    const running = this.#running.get(userId) ?? 0;
    const max = this.#max;
    if (max !== undefined && running >= max) {
      this.#refused++;
      throw new HttpError(
        429,
        ApiErrorCode.rateLimited,
        `this account runs ${running} generations, its limit of concurrent generations; retry after ${RETRY_AFTER_SECONDS} s`,
        {},
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    }
    this.#running.set(userId, running + 1);
    this.#total++;
    this.#admitted++;
    if (running + 1 > this.#peak) this.#peak = running + 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#running.get(userId) ?? 1) - 1;
      if (left > 0) this.#running.set(userId, left);
      else this.#running.delete(userId);
    };
  }

  stats(): ConcurrencyStats {
    return { running: this.#total, peak: this.#peak, admitted: this.#admitted, refused: this.#refused, max: this.#max ?? null };
  }
}
