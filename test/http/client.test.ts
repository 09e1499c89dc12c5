import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError, AuthenticationError, ConflictError, ConnectionError, InternalServerError, RateLimitError, TimeoutError, VoxpipeError } from '../../src/errors.js';
import { HttpClient, deriveRootUrl, type RetryInfo } from '../../src/http/client.js';
import { json, recordingSleep, startFakeServer, type FakeServer } from './fake-server.js';

const KEY = 'sk-unit-test-key-0123456789';

let server: FakeServer;
let sleeper: ReturnType<typeof recordingSleep>;

function client(extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}): HttpClient {
  return new HttpClient({ apiKey: KEY, baseUrl: server.baseUrl, sleep: sleeper.sleep, random: () => 0, ...extra });
}

beforeEach(async () => {
  server = await startFakeServer();
  sleeper = recordingSleep();
});
afterEach(async () => {
  await server.close();
});

/** A sleep that advances a clock of its own (no real time passes): deadlines measured on `now`. */
function clockedSleep(): { delays: number[]; now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = Date.now();
  const delays: number[] = [];
  return { delays, now: () => t, sleep: async (ms: number) => void (delays.push(ms), (t += ms)) };
}

function assertNoKey(err: unknown): void {
  expect(err).toBeInstanceOf(VoxpipeError);
  const e = err as VoxpipeError;
  expect(e.message).not.toContain(KEY);
  expect(JSON.stringify(e)).not.toContain(KEY);
  expect(String(e.stack)).not.toContain(KEY);
  expect(inspect(e, { depth: 5 })).not.toContain(KEY);
}

describe('HttpClient basics', () => {
  it('derives rootUrl from the base URL', () => {
    expect(deriveRootUrl('http://h:1/api/open/v1')).toBe('http://h:1');
    expect(deriveRootUrl('https://h/proxy/api/open/v1/')).toBe('https://h/proxy');
    // Without the /api/open/v1 suffix the URL is the root, its path prefix kept (config.ts).
    expect(deriveRootUrl('https://h/other')).toBe('https://h/other');
    expect(new HttpClient({ apiKey: KEY, baseUrl: 'https://h/other' }).baseUrl).toBe('https://h/other/api/open/v1');
  });

  it('refuses to start without a key, and never exposes the key through the client object', () => {
    expect(() => new HttpClient({ apiKey: '', baseUrl: 'http://h/api/open/v1' })).toThrow(expect.objectContaining({ code: 'missing_api_key' }));
    const c = client();
    expect(JSON.stringify(c)).not.toContain(KEY);
    expect(inspect(c, { depth: 5 })).not.toContain(KEY);
  });

  it('sends the key as a Bearer header only, JSON-encodes bodies and adds query values', async () => {
    server.handle((_req, res) => json(res, 200, { ok: true }));
    const res = await client().json({ method: 'POST', path: '/speech/tts/jobs', query: { a: 1, b: undefined, c: 'x y' }, body: { text: 'hi' } });
    expect(res.data).toEqual({ ok: true });
    const req = server.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.url).toBe('/api/open/v1/speech/tts/jobs?a=1&c=x+y');
    expect(req.url).not.toContain(KEY);
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body.toString())).toEqual({ text: 'hi' });
  });

  it('branches on Content-Type for 2xx: binary audio versus JSON', async () => {
    const audio = Buffer.from([0x49, 0x44, 0x33, 1, 2, 3]);
    server.handle((req, res) => {
      if (req.url.endsWith('/bin')) {
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'x-request-id': 'req_b' });
        res.end(audio);
      } else json(res, 200, { a: 1 }, { 'content-type': 'application/json; charset=utf-8' });
    });
    const bin = await client().request({ path: '/bin' });
    expect(bin.kind).toBe('binary');
    expect(bin.kind === 'binary' && bin.data.equals(audio)).toBe(true);
    expect(bin.requestId).toBe('req_b');
    const js = await client().request({ path: '/js' });
    expect(js).toMatchObject({ kind: 'json', data: { a: 1 } });
    await expect(client().json({ path: '/bin' })).rejects.toMatchObject({ code: 'unexpected_response' });
  });

  it('resolves root paths against rootUrl', async () => {
    server.handle((_req, res) => json(res, 200, { voices: [] }));
    await client().json({ path: '/v1/audio/voices', root: true });
    expect(server.requests[0]!.url).toBe('/v1/audio/voices');
  });
});

describe('HttpClient retries', () => {
  it('retries a 429 after the Retry-After seconds, even for a POST without an id', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 429, { error: { code: 'rate_limited', message: 'slow' } }, { 'retry-after': '2' }) : json(res, 200, { ok: 1 })));
    const retries: RetryInfo[] = [];
    const res = await client({ onRetry: (r) => retries.push(r) }).json({ method: 'POST', path: '/speech/tts/jobs', body: { text: 'x' } });
    expect(res.data).toEqual({ ok: 1 });
    expect(res.retries).toBe(1);
    expect(server.requests).toHaveLength(2);
    expect(sleeper.delays).toEqual([2_000]);
    expect(retries[0]).toMatchObject({ attempt: 1, delayMs: 2_000, method: 'POST', path: '/api/open/v1/speech/tts/jobs' });
    expect(retries[0]!.error).toBeInstanceOf(RateLimitError);
  });

  it('honours a Retry-After HTTP date', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 429, { error: { code: 'rate_limited', message: 'slow' } }, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }) : json(res, 200, {})));
    await client().json({ path: '/x' });
    expect(sleeper.delays).toHaveLength(1);
    // The date has a one-second resolution: 59 to 60 s from now.
    expect(sleeper.delays[0]).toBeGreaterThan(58_000);
    expect(sleeper.delays[0]).toBeLessThanOrEqual(60_000);
  });

  it('gives up on 429 after maxRetries and exposes retryAfterMs', async () => {
    server.handle((_req, res) => json(res, 429, { error: { code: 'rate_limited', message: 'slow', requestId: 'req_429' } }, { 'retry-after': '1' }));
    const err = await client({ maxRetries: 1 }).json({ path: '/x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ retryAfterMs: 1_000, requestId: 'req_429', status: 429 });
    expect(server.requests).toHaveLength(2);
  });

  it('retries 5xx on a GET a limited number of times with exponential backoff', async () => {
    server.handle((_req, res) => json(res, 503, { error: { code: 'internal_error', message: 'down', requestId: 'req_5' } }));
    const err = await client({ maxRetries: 2 }).json({ path: '/speech/tts/jobs/t1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(3);
    expect(sleeper.delays).toEqual([250, 500]); // equal jitter with random() = 0: half of 500, half of 1000
  });

  it('honours a Retry-After sent with a 503 when it is longer than the backoff', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 503, { error: { code: 'internal_error', message: 'busy' } }, { 'retry-after': '4' }) : json(res, 200, {})));
    await client().json({ path: '/x' });
    expect(sleeper.delays).toEqual([4_000]);
  });

  it('never resends a charging POST without X-Request-Id or Idempotency-Key after a 500', async () => {
    server.handle((_req, res) => json(res, 500, { error: { code: 'internal_error', message: 'boom' } }));
    await expect(client().json({ method: 'POST', path: '/speech/tts/jobs', body: { text: 'x' } })).rejects.toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(1);
  });

  it('resends a POST that carries X-Request-Id after a 500, with the same id and body', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 500, { error: { code: 'internal_error', message: 'boom' } }) : json(res, 200, { audio_url: '/a' })));
    const res = await client().json({ method: 'POST', path: '/speech/tts', body: { text: 'x', cache: true }, headers: { 'X-Request-Id': 'stream-1:seg-1' } });
    expect(res.data).toEqual({ audio_url: '/a' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests.map((r) => r.headers['x-request-id'])).toEqual(['stream-1:seg-1', 'stream-1:seg-1']);
    expect(server.requests[1]!.body.toString()).toBe(server.requests[0]!.body.toString());
  });

  it('resends a POST with an Idempotency-Key after the connection dropped, but not one without', async () => {
    server.handle((req, res, i) => {
      if (i === 0 || !req.headers['idempotency-key']) res.socket?.destroy();
      else json(res, 202, { taskId: 't1', status: 'pending' });
    });
    const res = await client().json({ method: 'POST', path: '/media/images/jobs', body: {}, headers: { 'Idempotency-Key': 'k1' } });
    expect(res.status).toBe(202);
    expect(server.requests).toHaveLength(2);

    server.requests.length = 0;
    const err = await client().json({ method: 'POST', path: '/speech/tts/jobs', body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: 'connection_failed', retryable: true });
    expect(server.requests).toHaveLength(1);
    assertNoKey(err);
  });

  it('waits out 409 ERR_REQUEST_IN_PROGRESS for the same X-Request-Id, but not other 409 codes', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 409, { error: { code: 'ERR_REQUEST_IN_PROGRESS', message: 'running' } }) : json(res, 200, { audio_url: '/a' })));
    await client().json({ method: 'POST', path: '/speech/tts', body: {}, headers: { 'x-request-id': 'r' } });
    expect(server.requests).toHaveLength(2);

    server.requests.length = 0;
    server.handle((_req, res) => json(res, 409, { error: { code: 'ERR_REQUEST_ALREADY_COMPLETED', message: 'done' } }));
    await expect(client().json({ method: 'POST', path: '/speech/tts', body: {}, headers: { 'x-request-id': 'r' } })).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);
  });

  it('an HTML 500 page (a proxy in front of the service) is one error line: status, content type, a short excerpt', async () => {
    server.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n<center><h1>500 Internal Server Error</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n');
    });
    const err = await client({ maxRetries: 1 }).json({ path: '/voices' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as Error).message).toBe('GET /api/open/v1/voices failed with HTTP 500 (text/html): 500 Internal Server Error 500 Internal Server Error nginx');
    expect(server.requests).toHaveLength(2);
  });

  it('waits out a 409 in progress longer than the retry budget, as long as Retry-After says (seconds or a date), and resends the same id', async () => {
    const clock = clockedSleep();
    const inProgress = (retryAfter: string) => ({ error: { code: 'ERR_REQUEST_IN_PROGRESS', message: 'running' }, retryAfter });
    server.handle((_req, res, i) => {
      if (i >= 5) return json(res, 200, { audio_url: '/a' });
      const answer = inProgress(i < 4 ? '5' : new Date(clock.now() + 7_000).toUTCString());
      json(res, 409, { error: answer.error }, { 'retry-after': answer.retryAfter });
    });
    const retries: RetryInfo[] = [];
    const res = await client({ maxRetries: 1, sleep: clock.sleep, now: clock.now }).json({ method: 'POST', path: '/speech/tts', body: { text: 'x' }, headers: { 'x-request-id': 'same-id' }, onRetry: (r) => retries.push(r) });
    expect(res.data).toEqual({ audio_url: '/a' });
    expect(server.requests).toHaveLength(6);
    expect(new Set(server.requests.map((r) => r.headers['x-request-id']))).toEqual(new Set(['same-id']));
    expect(clock.delays.slice(0, 4)).toEqual([5_000, 5_000, 5_000, 5_000]);
    // An HTTP date has whole seconds: between 6 and 7 s after the clock's now.
    expect(clock.delays[4]).toBeGreaterThan(5_900);
    expect(clock.delays[4]).toBeLessThanOrEqual(7_000);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5]);
  });

  it("stops waiting for a 409 in progress at the request's own deadline, with a TimeoutError that says so", async () => {
    const clock = clockedSleep();
    server.handle((_req, res) => json(res, 409, { error: { code: 'ERR_REQUEST_IN_PROGRESS', message: 'running' } }, { 'retry-after': '5' }));
    const err = await client({ maxRetries: 5, sleep: clock.sleep, now: clock.now, deadlineMs: 12_000 })
      .json({ method: 'POST', path: '/speech/tts', body: {}, headers: { 'x-request-id': 'r' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/still had this request in progress 10\.0 s after it was first sent and asked to wait 5\.0 s more, past the request's deadline of 12\.0 s/);
    expect(clock.delays).toEqual([5_000, 5_000]);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry 4xx', async () => {
    server.handle((_req, res) => json(res, 400, { error: { code: 'invalid_request', message: 'bad' } }));
    await expect(client().json({ path: '/x' })).rejects.toMatchObject({ status: 400 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('HttpClient timeouts and abort', () => {
  it('turns a slow response into a TimeoutError (retried for a GET)', async () => {
    server.handle(() => undefined); // never answers
    const err = await client({ timeoutMs: 50, maxRetries: 1 }).json({ path: '/slow' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: 'timeout' });
    expect(server.requests).toHaveLength(2);
  });

  it('rejects with AbortError when the caller aborts, without retrying', async () => {
    const ac = new AbortController();
    // Aborted once the request is in (never answered): no timer racing the request.
    server.handle(() => ac.abort());
    const p = client().json({ path: '/slow', signal: ac.signal });
    await expect(p).rejects.toBeInstanceOf(AbortError);
    expect(server.requests).toHaveLength(1);
  });
});

describe('HttpClient never leaks the key', () => {
  it('keeps the key out of API errors even when a hostile server echoes it', async () => {
    server.handle((req, res) => json(res, 401, { error: { code: 'unauthorized', message: `bad key ${String(req.headers.authorization)}`, got: req.headers.authorization } }));
    const err = await client().json({ path: '/profile' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    assertNoKey(err);
  });

  it('keeps the key out of non-JSON error bodies quoted in messages', async () => {
    server.handle((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`proxy error for ${String(req.headers.authorization)}`);
    });
    const err = await client({ maxRetries: 0 }).json({ path: '/x' }).catch((e: unknown) => e);
    assertNoKey(err);
  });
});

describe('HttpClient redirects', () => {
  let foreign: FakeServer;
  beforeEach(async () => {
    foreign = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.end(Buffer.from('foreign-audio'));
    });
  });
  afterEach(async () => {
    await foreign.close();
  });

  it('sends the key on the first hop and on same-origin hops, never to a foreign host', async () => {
    server.handle((req, res) => {
      if (req.url.startsWith('/api/open/tts/jobs/t1/audio')) {
        res.writeHead(302, { location: '/signed/t1?sig=abc' });
        res.end();
      } else if (req.url.startsWith('/signed/t1')) {
        res.writeHead(307, { location: `${foreign.origin}/bucket/t1.mp3?sig=abc` });
        res.end();
      } else json(res, 404, {});
    });
    const file = await client().download('/api/open/tts/jobs/t1/audio');
    expect(file.data.toString()).toBe('foreign-audio');
    expect(file.url).toBe(`${foreign.origin}/bucket/t1.mp3?sig=abc`);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    expect(foreign.requests).toHaveLength(1);
    expect(foreign.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('fetches an absolute foreign URL without the key', async () => {
    await client().download(`${foreign.origin}/file.mp3`);
    expect(foreign.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('stops after maxRedirects', async () => {
    server.handle((_req, res) => {
      res.writeHead(302, { location: '/loop' });
      res.end();
    });
    await expect(client({ maxRedirects: 3 }).download('/loop')).rejects.toMatchObject({ code: 'too_many_redirects' });
    expect(server.requests).toHaveLength(4);
  });
});
