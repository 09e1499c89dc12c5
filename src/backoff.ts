/**
 * The one backoff of voxpipe: exponential with jitter (spec 7.7), one
 * attempt convention (1 is the first retry). The reliable machine, the REST
 * client and the reference server's webhook deliveries each pass their own
 * policy. Pure: the random number comes from the caller, so the state
 * machine that uses it stays deterministic under test.
 */

/** How long to wait before each retry. */
export interface BackoffPolicy {
  /** Delay before the first retry; default 200 ms. */
  baseMs: number;
  /** Growth per attempt; default 2. */
  factor: number;
  /** Largest delay before jitter; default 5_000 ms. */
  maxMs: number;
  /**
   * Share of the delay that is random, 0 to 1; default 0.5 ("equal jitter":
   * the delay lies between half and all of the exponential value), so
   * clients that failed together do not reconnect together.
   */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: 200, // 200 ms
  factor: 2,
  maxMs: 5_000, // 5 s
  jitter: 0.5,
};

/** Resolve a partial policy once, with the defaults above. */
export function resolveBackoff(policy: Partial<BackoffPolicy> = {}): BackoffPolicy {
  const jitter = policy.jitter ?? DEFAULT_BACKOFF.jitter;
  return {
    baseMs: Math.max(0, policy.baseMs ?? DEFAULT_BACKOFF.baseMs),
    factor: Math.max(1, policy.factor ?? DEFAULT_BACKOFF.factor),
    maxMs: Math.max(0, policy.maxMs ?? DEFAULT_BACKOFF.maxMs),
    jitter: Math.min(1, Math.max(0, jitter)),
  };
}

/**
 * Delay before retry number `attempt` (1 for the first retry).
 * @param random a number in [0, 1), e.g. `Math.random()`
 */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy, random: number): number {
  const exponential = Math.min(policy.maxMs, policy.baseMs * policy.factor ** Math.max(0, attempt - 1));
  const r = Math.min(1, Math.max(0, random));
  return Math.round(exponential * (1 - policy.jitter) + exponential * policy.jitter * r);
}
