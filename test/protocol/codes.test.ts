/**
 * The error catalogue: one module holds every code with its kind;
 * failover reads the kind. A code literal anywhere in src/ that the
 * catalogue does not know fails here, so the lists cannot drift apart again.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AbortError, ApiError, ProtocolError, TimeoutError, UnavailableError} from '../../src/errors.js';
import { ConnectionError, ResumeError, VoxpipeError } from '../../src/errors.js';
import {
  ALL_CODES,
  ApiErrorCode,
  ClientErrorCode,
  codeKind,
  ErrorCode,
  HttpAudioErrorCode,
  isKnownCode,
  LocalErrorCode,
  ResumeErrorCode,
  SinkErrorCode,
  type ConnectionErrorCode,
  type KnownCode,
  type ProtocolErrorCode,
} from '../../src/protocol/codes.js';
import { shouldFailover } from '../../src/stream/speech-stream.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the error catalogue', () => {
  it('holds every named code map', () => {
    for (const map of [ErrorCode, ApiErrorCode, ClientErrorCode, ResumeErrorCode, SinkErrorCode, HttpAudioErrorCode, LocalErrorCode]) {
      for (const code of Object.values(map)) expect(ALL_CODES, code).toContain(code);
    }
  });

  it('knows every code literal an error is raised with in src/', () => {
    const raised = /(?:VoxpipeError|ConnectionError|TimeoutError|ProtocolError|ResumeError|UnavailableError|RealtimeServerError|RealtimeFailure)\(\s*'([A-Za-z_]+)'|HttpError\(\s*\d+\s*,\s*'([A-Za-z_]+)'/g;
    const unknown: string[] = [];
    let seen = 0;
    for (const file of sources(SRC)) {
      for (const m of readFileSync(file, 'utf8').matchAll(raised)) {
        seen++;
        const code = m[1] ?? m[2]!;
        if (!isKnownCode(code)) unknown.push(`${file.slice(SRC.length + 1)}: ${code}`);
      }
    }
    expect(seen).toBeGreaterThan(20);
    expect(unknown).toEqual([]);
  });

  it('failover reads the kind: refused requests, accounts and aborts stay; the path failing moves', () => {
    expect(codeKind('voice_not_found')).toBe('request');
    expect(codeKind('insufficient_credits')).toBe('account');
    expect(codeKind('a_deployment_own_code')).toBe('transient');
    expect(shouldFailover(new VoxpipeError('voice_not_found', 'x'))).toBe(false);
    expect(shouldFailover(new VoxpipeError('quota_exceeded', 'x'))).toBe(false);
    expect(shouldFailover(new VoxpipeError('unauthorized', 'x'))).toBe(false);
    expect(shouldFailover(new VoxpipeError('aborted', 'x'))).toBe(false);
    expect(shouldFailover(new ConnectionError('connection_closed', 'x'))).toBe(true);
    expect(shouldFailover(new VoxpipeError('provider_unavailable', 'x'))).toBe(true);
    expect(shouldFailover(new VoxpipeError('invalid_server_frame', 'x'))).toBe(true);
    expect(shouldFailover(new VoxpipeError('a_deployment_own_code', 'x'))).toBe(true);
    // The request completed before a queued segment was sent: HTTP can still speak that segment.
    expect(shouldFailover(new ResumeError('request_completed', 'x'))).toBe(true);
    expect(new VoxpipeError('segment_too_large', 'x').kind).toBe('request');
  });
});

describe('each error class narrows code to its own codes (checked by npm run typecheck)', () => {
  it('code is a union a switch can be exhaustive over', () => {
    expectTypeOf<TimeoutError['code']>().toEqualTypeOf<'timeout'>();
    expectTypeOf<AbortError['code']>().toEqualTypeOf<'aborted'>();
    expectTypeOf<UnavailableError['code']>().toEqualTypeOf<'unavailable'>();
    expectTypeOf<ResumeError['code']>().toEqualTypeOf<ResumeErrorCode>();
    expectTypeOf<ConnectionError['code']>().toEqualTypeOf<ConnectionErrorCode>();
    expectTypeOf<ProtocolError['code']>().toEqualTypeOf<ProtocolErrorCode>();
    // A deployment's own code is kept as given, so ApiError and the base class stay open: a known code or any string.
    expectTypeOf<'voice_not_found'>().toMatchTypeOf<ApiError['code']>();
    expectTypeOf<'a_deployments_own_code'>().toMatchTypeOf<VoxpipeError['code']>();
    // Every value of each narrowed union is in the catalogue.
    for (const code of [...Object.values(ResumeErrorCode), 'timeout', 'aborted', 'unavailable', 'connection_failed', 'connection_closed', 'connect_timeout', 'keepalive_timeout', 'ticket_failed', 'request_interrupted', 'invalid_server_frame'] satisfies KnownCode[]) {
      expect(isKnownCode(code), code).toBe(true);
    }
  });
});
