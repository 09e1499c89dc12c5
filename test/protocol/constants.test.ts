import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/constants.js';

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
