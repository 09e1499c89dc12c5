import { describe, expect, it } from 'vitest';
import { CloseCode, ErrorCode, isRecoverableClose } from '../../src/protocol/constants.js';

describe('isRecoverableClose (spec 7.7: only 1012 and 1013)', () => {
  it.each([
    [1000, false],
    [1001, false],
    [1002, false],
    [1005, false],
    [1006, false],
    [1008, false],
    [1009, false],
    [1011, false],
    [1012, true],
    [1013, true],
    [1014, false],
    [4000, false],
    [4013, false],
  ])('close %i -> %s', (code, expected) => {
    expect(isRecoverableClose(code)).toBe(expected);
  });

  it('names 1012 and 1013 as the restart and try-again codes', () => {
    expect(CloseCode.serviceRestart).toBe(1012);
    expect(CloseCode.tryAgainLater).toBe(1013);
  });
});

describe('ErrorCode', () => {
  it('holds exactly the realtime codes of spec 7.6', () => {
    expect(new Set(Object.values(ErrorCode))).toEqual(
      new Set([
        'authentication_failed', 'authentication_required', 'already_authenticated', 'permission_denied',
        'invalid_message', 'invalid_messagepack', 'invalid_state', 'idempotency_conflict', 'empty_segment', 'segment_too_large',
        'session_limit_exceeded', 'quota_exceeded', 'client_backpressure',
        'unsupported_parameter', 'voice_not_found', 'model_not_found',
        'provider_unavailable', 'provider_timeout', 'generation_failed',
        'billing_failed', 'connection_closed', 'internal_error',
      ]),
    );
  });
});
