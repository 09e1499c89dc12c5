import { describe, expect, it } from 'vitest';
import { AuthenticationError, BadRequestError, ConflictError, InsufficientCreditsError, InternalServerError, NotFoundError, PermissionDeniedError, RateLimitError, registerSecret, UnprocessableError } from '../../src/errors.js';
import { apiErrorFromResponse } from '../../src/http/api-error.js';

const headers = (h: Record<string, string> = {}) => new Headers(h);

describe('apiErrorFromResponse', () => {
  it('reads the wrapped body and keeps every extra property', () => {
    const body = JSON.stringify({ error: { code: 'invalid_request', message: 'model not supported', requestId: 'req_1', supportedModels: ['a', 'b'], field: 'modelId' } });
    const err = apiErrorFromResponse(400, headers(), body, 'POST /speech/tts');
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', message: 'model not supported', requestId: 'req_1', retryable: false });
    expect(err.details).toEqual({ supportedModels: ['a', 'b'], field: 'modelId' });
  });

  it('reads the flat body', () => {
    const err = apiErrorFromResponse(404, headers(), JSON.stringify({ code: 'not_found', message: 'no such task', requestId: 'req_2', taskId: 't1' }), 'GET /x');
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'not_found', message: 'no such task', requestId: 'req_2' });
    expect(err.details).toEqual({ taskId: 't1' });
  });

  it('keeps unknown codes and chooses the class from the status', () => {
    const cases = [
      [401, AuthenticationError],
      [402, InsufficientCreditsError],
      [403, PermissionDeniedError],
      [409, ConflictError],
      [422, UnprocessableError],
      [503, InternalServerError],
    ] as const;
    for (const [status, cls] of cases) {
      const err = apiErrorFromResponse(status, headers(), JSON.stringify({ error: { code: 'ERR_SOMETHING_NEW', message: 'm' } }), 'GET /x');
      expect(err).toBeInstanceOf(cls);
      // A 401 has one code on every path; the body's own is kept as details.serverCode.
      expect(err.code).toBe(status === 401 ? 'unauthorized' : 'ERR_SOMETHING_NEW');
      if (status === 401) expect(err.details).toMatchObject({ serverCode: 'ERR_SOMETHING_NEW' });
      expect(err.status).toBe(status);
    }
  });

  it('marks 429 and 5xx retryable and reads Retry-After into retryAfterMs', () => {
    const err = apiErrorFromResponse(429, headers({ 'retry-after': '3' }), JSON.stringify({ error: { code: 'rate_limited', message: 'slow down' } }), 'GET /x');
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(3_000);
    expect(err.retryable).toBe(true);
  });

  it('falls back to the status for the code, the request-id header, and quotes a non-JSON body', () => {
    const err = apiErrorFromResponse(502, headers({ 'x-svc-request-id': 'req_h' }), '<html>Bad gateway</html>', 'GET /speech/tts/jobs');
    expect(err.code).toBe('internal_error');
    expect(err.requestId).toBe('req_h');
    expect(err.message).toContain('GET /speech/tts/jobs failed with HTTP 502');
    expect(err.message).toContain('Bad gateway');
    const e401 = apiErrorFromResponse(401, headers(), '', 'GET /profile');
    expect(e401.code).toBe('unauthorized');
  });

  it('turns an HTML error page into one line: status, content type and a short whitespace-collapsed excerpt', () => {
    const page = '<!DOCTYPE html>\n<html>\n<head><title>500 Internal Server Error</title>\n<style>body { color: red; }</style></head>\n<body>\n  <h1>Internal   Server Error</h1>\n  <p>The upstream &amp; its\tproxy failed.</p>\n' + '<p>filler</p>\n'.repeat(200) + '</body>\n</html>\n';
    const err = apiErrorFromResponse(500, headers({ 'content-type': 'text/html; charset=utf-8' }), page, 'POST /speech/tts');
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.code).toBe('internal_error');
    expect(err.message).not.toMatch(/[\r\n\t]/);
    expect(err.message).not.toMatch(/<|color: red/);
    expect(err.message).toMatch(/^POST \/speech\/tts failed with HTTP 500 \(text\/html\): 500 Internal Server Error Internal Server Error The upstream & its proxy failed\. filler/);
    expect(err.message.length).toBeLessThan(200);
    expect(err.message.endsWith('…')).toBe(true);
  });

  it('a plain-text body and a JSON message with newlines are one line too', () => {
    const text = apiErrorFromResponse(502, headers({ 'content-type': 'text/plain' }), 'Bad gateway\r\n\r\n  upstream timed out\n', 'GET /voices');
    expect(text.message).toBe('GET /voices failed with HTTP 502 (text/plain): Bad gateway upstream timed out');
    const json = apiErrorFromResponse(500, headers({ 'content-type': 'application/json' }), JSON.stringify({ error: { code: 'internal_error', message: 'line one\nline two' } }), 'GET /x');
    expect(json.message).toBe('line one line two');
  });

  it('cuts an echoed key out before the excerpt is cut, so no part of it survives', () => {
    const key = 'sk-excerpt-secret-0123456789abcdef';
    registerSecret(key);
    const body = `${'x '.repeat(55)}${key} and more`;
    const err = apiErrorFromResponse(500, headers({ 'content-type': 'text/plain' }), body, 'GET /x');
    expect(err.message).not.toContain(key.slice(0, 8));
  });

  it('keeps siblings of the error wrapper (e.g. success: false)', () => {
    const err = apiErrorFromResponse(422, headers(), JSON.stringify({ success: false, error: { code: 'unprocessable_media', message: 'no audio track' } }), 'POST /media/lip-sync/jobs');
    expect(err.details).toEqual({ success: false });
    expect(err.code).toBe('unprocessable_media');
  });

  it('redacts a key the server echoed, in the message and in extra properties', () => {
    const key = 'sk-echoed-secret-123456';
    registerSecret(key);
    const body = JSON.stringify({ error: { code: 'unauthorized', message: `invalid key ${key}`, echo: { authorization: `Bearer ${key}` } } });
    const err = apiErrorFromResponse(401, headers(), body, 'GET /profile');
    expect(err.message).not.toContain(key);
    expect(JSON.stringify(err)).not.toContain(key);
    expect(JSON.stringify(err.details)).toContain('[redacted]');
  });
});
