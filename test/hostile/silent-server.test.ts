/**
 * A server that accepts connections and never answers. Every phase
 * ends in a typed TimeoutError within its deadline, and the message states
 * the real wait (attempts included).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchCapabilities } from '../../src/discovery.js';
import { TimeoutError } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import { ReliableSession } from '../../src/realtime/reliable/session.js';

let silent: Server;
let url: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

async function timed<T>(run: () => Promise<T>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

describe('a server that never answers', () => {
  it('REST: a TimeoutError after the retries, naming the attempts and the whole wait', async () => {
    const client = new HttpClient({ apiKey: 'sk-silent-test', baseUrl: `${url}/api/open/v1`, timeoutMs: 200, maxRetries: 1, initialRetryDelayMs: 10 });
    const { error, ms } = await timed(() => client.json({ path: '/profile' }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/no answer after 2 attempts in \d+\.\d s \(each attempt waited 200 ms\)/);
    expect(ms).toBeLessThan(3_000);
  });

  it('discovery: a TimeoutError within its per-read deadline', async () => {
    const config = { apiKey: 'sk-silent-test', baseUrl: `${url}/api/open/v1`, rootUrl: url, wsUrl: url.replace('http', 'ws'), rtHttpUrl: url };
    const { error, ms } = await timed(() => fetchCapabilities(config, { timeoutMs: 200 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(ms).toBeLessThan(3_000);
  });

  it('realtime: the connect deadline ends in a TimeoutError', async () => {
    const session = new ReliableSession({
      wsUrl: url.replace('http', 'ws'),
      rtHttpUrl: url,
      apiKey: 'sk-silent-test',
      request: { voice_id: 'v', model: 'm', format: 'pcm' },
      connectTimeoutMs: 300,
    });
    const { error, ms } = await timed(() => session.open());
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('300 ms');
    expect(ms).toBeLessThan(3_000);
  });
});
