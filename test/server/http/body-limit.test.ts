/**
 * Body limits under hostile HTTP: a body over the limit gets a 413 with the
 * spec's error body on every POST route, answered so that a client still
 * writing reads it and writes the rest without EPIPE, on a keep-alive
 * connection or one it asked to close; a refused upgrade with a body leaves
 * no connection behind; what the server holds of bodies at once is bounded;
 * and a client that aborts mid-body is a debug line, not an internal error.
 */
import { EventEmitter } from 'node:events';
import { request, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REALTIME_PATHS, SUBPROTOCOL } from '../../../src/protocol/constants.js';
import { HeldBodies } from '../../../src/server/http/router.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { sendEarly, type EarlyRequest } from '../../fuzz/early-client.js';
import { DEV_API_KEY } from '../rest/helpers.js';

const THREE_MIB = 3 * 1024 * 1024;

describe('request body limits', () => {
  let server: ReferenceServer;
  const logged: string[] = [];
  const debugged: string[] = [];

  beforeAll(async () => {
    server = await startServer({ engine: 'tone', log: (where) => logged.push(where), debug: (line) => debugged.push(line) });
  });
  afterAll(async () => {
    await server.close();
  });

  /** POST `path` with a JSON body of `bytes` bytes over a real socket; resolves with the status and body. */
  function postBig(path: string, bytes: number): Promise<{ status: number; body: string }> {
    const body = Buffer.alloc(bytes, 0x20);
    body[0] = 0x7b; // '{' then spaces: a JSON body that is merely too large
    return new Promise((resolve, reject) => {
      const req = request(`${server.rootUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json', 'content-length': bytes } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject); // EPIPE / ECONNRESET fail the test
      req.end(body);
    });
  }

  it('a 3 MiB body to POST /images/tasks gets 413 with the error body', async () => {
    const { status, body } = await postBig('/api/open/v1/images/tasks', THREE_MIB);
    expect(status).toBe(413);
    const error = (JSON.parse(body) as { error: { code: string; message: string; requestId: string } }).error;
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(/exceeds 1048576 bytes/);
    expect(error.requestId).toMatch(/^req_/);
  });

  it('a 3 MiB body gets 413 on every POST route', async () => {
    const posts = server.router.routes.filter((r) => r.method === 'POST').map((r) => r.path.replace(/\{\w+\}/g, 'x'));
    expect(posts.length).toBeGreaterThan(20);
    const refused: string[] = [];
    for (const path of posts) {
      const { status } = await postBig(path, THREE_MIB);
      if (status !== 413) refused.push(`${path}: ${status}`);
    }
    expect(refused).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('every POST route answers a body over the limit, and a missing key, so that a client still writing on a connection it asked to close reads the answer and writes all of its body', async () => {
    const posts = server.router.routes.filter((r) => r.method === 'POST').map((r) => r.path.replace(/\{\w+\}/g, 'x'));
    const slowWriter = (target: string, headers: Record<string, string>): EarlyRequest => ({ method: 'POST', target, headers: { 'Content-Type': 'application/json', ...headers }, bodyBytes: THREE_MIB, chunked: false, close: true, chunkBytes: 64 * 1024, pauseMs: 2 });
    const wrong: string[] = [];
    for (const path of posts) {
      for (const [expected, headers] of [
        [413, { Authorization: `Bearer ${DEV_API_KEY}` }],
        [401, {}],
      ] as const) {
        const outcome = await sendEarly(server.port, slowWriter(path, headers));
        if (!outcome.answered || outcome.status !== expected || outcome.error !== undefined || !outcome.wroteAll) {
          wrong.push(`${path}: ${outcome.answered ? outcome.status : 'no whole answer'}, ${outcome.error ?? 'no error'}, ${outcome.sent} of ${THREE_MIB} bytes written`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('a refused upgrade that brings a body is answered, its body read into nothing, and its connection closed', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    const before = sockets();
    const outcome = await sendEarly(server.port, {
      method: 'GET',
      target: REALTIME_PATHS.live,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': SUBPROTOCOL, Authorization: 'Bearer unknown-key-0123' },
      bodyBytes: THREE_MIB,
      chunked: false,
      close: false,
      halfOpen: true,
    });
    expect(outcome).toMatchObject({ answered: true, status: 401, wroteAll: true, error: undefined });
    // The client has closed its side: the server's side follows instead of waiting for a read nobody makes.
    for (let i = 0; i < 100 && sockets() > before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sockets()).toBe(before);
  });

  it('the bodies held at once are bounded: a request whose body does not fit is refused, and its share comes back when its response closes', () => {
    const held = new HeldBodies(100);
    const first = new EventEmitter();
    const a = held.for(first as ServerResponse);
    const b = held.for(new EventEmitter() as ServerResponse);
    expect(a.take(60)).toBe(true);
    expect(b.take(50)).toBe(false);
    first.emit('close');
    expect(b.take(50)).toBe(true);
    expect(b.take(50)).toBe(true);
    expect(b.take(1)).toBe(false);
  });

  it('a chunked body (no Content-Length) over the limit gets 413 too', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.baseUrl}/speech/tts`, { method: 'POST', headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      for (let i = 0; i < 12; i++) req.write(chunk);
      req.end();
    });
    expect(status).toBe(413);
  });

  it('a client that aborts a sync TTS request mid-body is a debug line, not an internal error', async () => {
    const before = debugged.length;
    await new Promise<void>((resolve) => {
      const req = request(`${server.baseUrl}/speech/tts`, { method: 'POST', headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json', 'content-length': 10_000 } });
      req.on('error', () => resolve());
      req.write('{"text": "hello', () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    for (let i = 0; i < 100 && debugged.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(debugged.slice(before)).toEqual([expect.stringMatching(/^POST \/api\/open\/v1\/speech\/tts: the client closed the connection/)]);
    expect(logged).toEqual([]);
  });
});
