/**
 * One authenticated path, one answer to a wrong key. The real
 * reference server (port 0) gets a key it does not know on every path that
 * carries one (REST, the realtime status route, the WebSocket handshake,
 * discovery, browser tickets), and each reports the same class, the same
 * status and the same code, and never the key. Then the same server behind
 * a proxy that words each 401 its own way (as deployments do: a realtime
 * code, a plain-text page, a code of its own): still one code.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, type ApiError } from '../../src/errors.js';
import { deriveUrls, type ServiceConfig } from '../../src/config.js';
import { listVoices } from '../../src/discovery.js';
import { createClient } from '../../src/http/index.js';
import { connect } from '../../src/realtime/connection.js';
import { createBrowserTicket } from '../../src/realtime/browser-ticket.js';
import { fetchRequestStatus } from '../../src/realtime/status-client.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';

const GOOD = 'sk-test-unauthorized-good-0123';
const BAD = 'sk-test-unauthorized-wrong-4567';
let server: ReferenceServer;
let config: ServiceConfig;
let rewriting: Server;
let rewrittenConfig: ServiceConfig;

/** How the proxy words a 401, by path: each one differently. */
function rewritten401(path: string): { contentType: string; body: string } {
  if (path.startsWith('/v2/tts/live')) return { contentType: 'application/json', body: JSON.stringify({ error: { code: 'authentication_failed', message: 'bad key' } }) };
  if (path.startsWith('/v2/tts/requests/')) return { contentType: 'text/plain', body: 'Unauthorized' };
  if (path.startsWith('/v2/tts/browser-tickets')) return { contentType: 'application/json', body: JSON.stringify({ code: 'invalid_api_key', message: 'no such key' }) };
  return { contentType: 'application/json', body: JSON.stringify({ success: false, error: { code: 'ERR_AUTH', message: 'key rejected' } }) };
}

/** A proxy in front of the server that passes everything on, but rewords every 401 (handshakes included). */
async function startRewording(upstream: URL): Promise<Server> {
  const forward = (req: IncomingMessage, answer: (status: number, headers: Record<string, unknown>, body: IncomingMessage) => void): void => {
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (res) => answer(res.statusCode ?? 502, res.headers, res));
    up.on('upgrade', (_res, socket: Socket) => socket.destroy()); // a bad key never upgrades
    req.pipe(up);
  };
  const reword = (path: string, status: number, headers: Record<string, unknown>, body: IncomingMessage, write: (status: number, headers: Record<string, unknown>, body: string | IncomingMessage) => void): void => {
    if (status !== 401) return write(status, headers, body);
    body.resume();
    const { contentType, body: text } = rewritten401(path);
    write(401, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) }, text);
  };
  const proxy = createServer((req, res: ServerResponse) =>
    forward(req, (status, headers, body) =>
      reword(req.url ?? '/', status, headers, body, (s, h, b) => {
        res.writeHead(s, h as Record<string, string>);
        if (typeof b === 'string') res.end(b);
        else b.pipe(res);
      }),
    ),
  );
  proxy.on('upgrade', (req: IncomingMessage, socket: Socket) =>
    forward(req, (status, headers, body) =>
      reword(req.url ?? '/', status, headers, body, (s, h, b) => {
        const text = typeof b === 'string' ? b : '';
        socket.end(`HTTP/1.1 ${s} Refused\r\n${Object.entries(h).map(([k, v]) => `${k}: ${String(v)}`).join('\r\n')}\r\nconnection: close\r\n\r\n${text}`);
      }),
    ),
  );
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return proxy;
}

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: GOOD, userId: 'u1' }] });
  config = { apiKey: BAD, ...deriveUrls(server.baseUrl) };
  rewriting = await startRewording(new URL(server.rootUrl));
  rewrittenConfig = { apiKey: BAD, ...deriveUrls(`http://127.0.0.1:${(rewriting.address() as AddressInfo).port}`) };
});
afterAll(async () => {
  rewriting.closeAllConnections();
  await new Promise<void>((resolve) => rewriting.close(() => resolve()));
  await server.close();
});

const errorOf = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

/** The error each keyed path reports for the configured (wrong) key. */
async function errorsOf(c: ServiceConfig): Promise<Record<string, unknown>> {
  const status = await fetchRequestStatus('req-unknown', { rtHttpUrl: c.rtHttpUrl, apiKey: c.apiKey });
  return {
    rest: await errorOf(createClient({ apiKey: c.apiKey, baseUrl: c.baseUrl, maxRetries: 0 }).voices.list()),
    statusRoute: status.kind === 'error' ? status.error : status,
    handshake: await errorOf(connect({ wsUrl: c.wsUrl, apiKey: c.apiKey, onEvent: () => undefined, onClose: () => undefined })),
    discovery: await errorOf(listVoices(c)),
    ticket: await errorOf(createBrowserTicket({ rtHttpUrl: c.rtHttpUrl, apiKey: c.apiKey, origin: 'https://app.example.com' })),
  };
}

function expectOneAnswer(errors: Record<string, unknown>): void {
  for (const [path, error] of Object.entries(errors)) {
    expect(error, path).toBeInstanceOf(AuthenticationError);
    expect({ status: (error as ApiError).status, code: (error as ApiError).code, retryable: (error as ApiError).retryable }, path).toEqual({ status: 401, code: 'unauthorized', retryable: false });
    expect((error as Error).message, path).not.toContain(BAD);
  }
}

describe('a wrong key on every keyed path', () => {
  it('REST, status route, handshake, discovery and tickets: one class, status 401, code unauthorized', async () => {
    expectOneAnswer(await errorsOf(config));
  });

  it('the same when the deployment words each 401 differently (the body\'s own code kept as details.serverCode)', async () => {
    const errors = await errorsOf(rewrittenConfig);
    expectOneAnswer(errors);
    expect((errors['handshake'] as ApiError).details).toMatchObject({ serverCode: 'authentication_failed' });
    expect((errors['ticket'] as ApiError).details).toMatchObject({ serverCode: 'invalid_api_key' });
    expect((errors['rest'] as ApiError).details).toMatchObject({ serverCode: 'ERR_AUTH' });
    expect((errors['handshake'] as Error).message).toBe('realtime handshake GET /v2/tts/live refused with HTTP 401: bad key');
  });
});
