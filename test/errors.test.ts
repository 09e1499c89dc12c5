/**
 * The one redaction of structured data (`redactDeep` was defined
 * and applied twice): every error's `details` go through it in the
 * `VoxpipeError` constructor, whoever builds the error.
 */
import { describe, expect, it } from 'vitest';
import { redact, redactDeep, registerSecret, VoxpipeError } from '../src/errors.js';
import { apiErrorFromResponse } from '../src/http/api-error.js';

const KEY = 'sk-deeply-echoed-secret-98765';
registerSecret(KEY);

/** `{ a: { a: ... { a: leaf } } }`, `levels` deep. */
function nested(levels: number, leaf: unknown): unknown {
  let out = leaf;
  for (let i = 0; i < levels; i++) out = { a: out };
  return out;
}

describe('redaction of error details', () => {
  it('removes a key at any depth: what lies past the walked levels is dropped, not passed on', () => {
    for (const levels of [0, 3, 7, 8, 20]) {
      const err = new VoxpipeError('internal_error', 'boom', { details: { echo: nested(levels, [`Bearer ${KEY}`]) } });
      expect(JSON.stringify(err.details)).not.toContain(KEY);
    }
    const shallow = new VoxpipeError('internal_error', 'boom', { details: { echo: nested(2, `key ${KEY}`) } });
    expect(shallow.details).toEqual({ echo: { a: { a: 'key [redacted]' } } });
  });

  it('an error built from a REST body is redacted by the same path (deep extra properties included)', () => {
    const body = JSON.stringify({ error: { code: 'unauthorized', message: 'no', echo: nested(12, KEY) } });
    const err = apiErrorFromResponse(401, new Headers(), body, 'GET /profile');
    expect(JSON.stringify(err)).not.toContain(KEY);
    expect(JSON.stringify(err.details)).not.toContain(KEY);
  });

  it('copy on write: what holds no secret comes back as it is; what holds one is a copy with it redacted, the input untouched', () => {
    const clean = { event: 'input_ack', sequence: 3, list: ['a', { b: 'tokenless words' }], nested: { x: 'plain text' } };
    expect(redactDeep(clean)).toBe(clean);
    const dirty = { event: 'error', list: ['fine', { b: `Bearer ${KEY}` }], keep: { x: 'plain' } };
    const out = redactDeep(dirty) as typeof dirty;
    expect(out).not.toBe(dirty);
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(out.keep).toBe(dirty.keep); // untouched branches are shared
    expect((dirty.list[1] as { b: string }).b).toBe(`Bearer ${KEY}`); // the input is not changed
    // The patterns still apply without a registered secret: each needs its trigger word.
    expect(redact('authorization: abcdef123')).toBe('authorization: [redacted]');
    expect(redact('use sk-abcdef please')).toBe('use [redacted] please');
    expect(redact('an api_key=zzzz9999 here')).toBe('an api_key=[redacted] here');
    expect(redact('nothing secret here at all')).toBe('nothing secret here at all');
  });
});
