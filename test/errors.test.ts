/**
 * The one redaction of structured data (issue 27: `redactDeep` was defined
 * and applied twice): every error's `details` go through it in the
 * `VoxpipeError` constructor, whoever builds the error.
 */
import { describe, expect, it } from 'vitest';
import { registerSecret, VoxpipeError } from '../src/errors.js';
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
});
