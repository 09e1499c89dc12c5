import { describe, expect, it } from 'vitest';
import { backoffDelayMs, decideRetry, isResendSafe, parseRetryAfterMs, type FailureInfo, type RetryPolicy } from '../../src/http/retry.js';

const policy: RetryPolicy = { maxRetries: 2, initialDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };
const failure = (f: Partial<FailureInfo>): FailureInfo => ({ status: 500, code: undefined, retryAfterMs: undefined, resendSafe: true, attempt: 0, ...f });

describe('parseRetryAfterMs', () => {
  it('reads delta-seconds, including fractions', () => {
    expect(parseRetryAfterMs('2')).toBe(2_000);
    expect(parseRetryAfterMs(' 1.5 ')).toBe(1_500);
    expect(parseRetryAfterMs('0')).toBe(0);
  });
  it('reads an HTTP date relative to now, never negative', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfterMs('Wed, 21 Oct 2015 07:28:03 GMT', now)).toBe(3_000);
    expect(parseRetryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
  });
  it('ignores absent and unreadable values', () => {
    expect(parseRetryAfterMs(null)).toBeUndefined();
    expect(parseRetryAfterMs('')).toBeUndefined();
    expect(parseRetryAfterMs('soon')).toBeUndefined();
    expect(parseRetryAfterMs('-3')).toBeUndefined();
  });
});

describe('backoffDelayMs', () => {
  it('grows exponentially with equal jitter and is capped', () => {
    // 1 is the first retry (one convention with the realtime machine).
    expect(backoffDelayMs(1, policy, 0)).toBe(250);
    expect(backoffDelayMs(1, policy, 0.999999)).toBe(500);
    expect(backoffDelayMs(4, policy, 0)).toBe(2_000);
    expect(backoffDelayMs(11, policy, 0.999999)).toBe(8_000);
    expect(backoffDelayMs(11, policy, 0)).toBe(4_000);
  });
});

describe('isResendSafe', () => {
  it('allows reads and idempotent writes', () => {
    for (const m of ['GET', 'HEAD', 'PUT', 'DELETE', 'get']) expect(isResendSafe(m, {})).toBe(true);
  });
  it('allows a POST only with X-Request-Id or Idempotency-Key', () => {
    expect(isResendSafe('POST', {})).toBe(false);
    expect(isResendSafe('POST', { 'content-type': 'application/json' })).toBe(false);
    expect(isResendSafe('POST', { 'X-Request-Id': 'r1' })).toBe(true);
    expect(isResendSafe('POST', { 'idempotency-key': 'k1' })).toBe(true);
  });
  it('lets the caller override either way', () => {
    expect(isResendSafe('POST', {}, true)).toBe(true);
    expect(isResendSafe('GET', {}, false)).toBe(false);
  });
});

describe('decideRetry', () => {
  it('retries 429 after Retry-After even for a POST without an id (it was refused)', () => {
    expect(decideRetry(failure({ status: 429, retryAfterMs: 2_000, resendSafe: false }), policy, 0)).toEqual({ retry: true, delayMs: 2_000, budgeted: true });
    expect(decideRetry(failure({ status: 429, resendSafe: false }), policy, 0)).toEqual({ retry: true, delayMs: 250, budgeted: true });
  });
  it('does not wait for a Retry-After beyond the cap', () => {
    expect(decideRetry(failure({ status: 429, retryAfterMs: 120_000 }), policy, 0)).toEqual({ retry: false });
  });
  it('retries 5xx and network failures only when resending is safe', () => {
    expect(decideRetry(failure({ status: 503 }), policy, 0)).toEqual({ retry: true, delayMs: 250, budgeted: true });
    expect(decideRetry(failure({ status: undefined }), policy, 0)).toEqual({ retry: true, delayMs: 250, budgeted: true });
    expect(decideRetry(failure({ status: 500, resendSafe: false }), policy, 0)).toEqual({ retry: false });
    expect(decideRetry(failure({ status: undefined, resendSafe: false }), policy, 0)).toEqual({ retry: false });
  });
  it('honours a Retry-After on a 503 when it is longer than the backoff', () => {
    expect(decideRetry(failure({ status: 503, retryAfterMs: 3_000 }), policy, 0)).toEqual({ retry: true, delayMs: 3_000, budgeted: true });
  });
  it('stops after maxRetries', () => {
    expect(decideRetry(failure({ status: 503, attempt: 2 }), policy, 0)).toEqual({ retry: false });
    expect(decideRetry(failure({ status: 429, attempt: 2 }), policy, 0)).toEqual({ retry: false });
  });
  it('waits and resends 409 ERR_REQUEST_IN_PROGRESS only; other 4xx never', () => {
    expect(decideRetry(failure({ status: 409, code: 'ERR_REQUEST_IN_PROGRESS' }), policy, 0)).toEqual({ retry: true, delayMs: 250, budgeted: false });
    expect(decideRetry(failure({ status: 409, code: 'ERR_REQUEST_ALREADY_COMPLETED' }), policy, 0)).toEqual({ retry: false });
    for (const status of [400, 401, 402, 403, 404, 422]) expect(decideRetry(failure({ status }), policy, 0)).toEqual({ retry: false });
  });
  it('waits out a 409 in progress beyond the retry budget, for as long as Retry-After says, bounded by the deadline only (spec 3.6, 7.2)', () => {
    const inProgress = (more: Partial<FailureInfo>) => failure({ status: 409, code: 'ERR_REQUEST_IN_PROGRESS', attempt: 2, ...more });
    expect(decideRetry(inProgress({ retryAfterMs: 90_000, inProgressWaits: 40 }), policy, 0)).toEqual({ retry: true, delayMs: 90_000, budgeted: false });
    expect(decideRetry(inProgress({ retryAfterMs: 5_000, remainingMs: 6_000 }), policy, 0)).toEqual({ retry: true, delayMs: 5_000, budgeted: false });
    expect(decideRetry(inProgress({ retryAfterMs: 5_000, remainingMs: 4_000 }), policy, 0)).toEqual({ retry: false, reason: 'deadline' });
    // Without Retry-After, the backoff of its own count of waits.
    expect(decideRetry(inProgress({ inProgressWaits: 2 }), policy, 0)).toEqual({ retry: true, delayMs: 1_000, budgeted: false });
    // A request without an id may not be resent.
    expect(decideRetry(inProgress({ resendSafe: false }), policy, 0)).toEqual({ retry: false });
  });
  it('makes no retry whose wait ends past the deadline', () => {
    expect(decideRetry(failure({ status: 503, retryAfterMs: 3_000, remainingMs: 2_000 }), policy, 0)).toEqual({ retry: false, reason: 'deadline' });
    expect(decideRetry(failure({ status: 429, retryAfterMs: 3_000, remainingMs: 4_000 }), policy, 0)).toEqual({ retry: true, delayMs: 3_000, budgeted: true });
  });
});
