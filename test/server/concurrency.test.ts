/**
 * The reference server's cap on an account's concurrent generations
 * (`maxConcurrentGenerations`): a realtime upgrade beyond it is refused with
 * HTTP 429 `rate_limited` and `Retry-After` before 101, a charging creation
 * beyond it gets the same 429, each account counts its own, and a connection
 * stops counting when its request finished or it closed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../src/server/index.js';
import { RealtimeTestClient } from '../helpers/realtime-client.js';
import { cleanUp, KEY_A, KEY_B, openClient, REQUEST, startTestServer, VOICE_ID } from './realtime/fixtures.js';

let server: ReferenceServer;
const clients: RealtimeTestClient[] = [];

beforeEach(async () => {
  server = await startTestServer({ maxConcurrentGenerations: 2 });
});
afterEach(() => cleanUp(server, clients));

async function open(apiKey = KEY_A): Promise<RealtimeTestClient> {
  const client = await openClient(server, apiKey);
  clients.push(client);
  return client;
}

describe('a cap on concurrent generations', () => {
  it('refuses a realtime upgrade beyond the cap with 429 rate_limited and Retry-After, per account', async () => {
    await open();
    await open();
    const refusal = await RealtimeTestClient.refused(server.wsUrl, { apiKey: KEY_A });
    expect(refusal.status).toBe(429);
    expect(refusal.body.error?.code).toBe('rate_limited');
    expect(Number(refusal.headers['retry-after'])).toBeGreaterThan(0);
    // Another account runs its own generations.
    await open(KEY_B);
    expect(server.concurrency.stats()).toMatchObject({ running: 3, peak: 2, refused: 1, max: 2 });
  });

  it('answers a charging creation beyond the cap with the same 429', async () => {
    await open();
    await open();
    const res = await fetch(`${server.baseUrl}/speech/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Over the cap.', voiceId: VOICE_ID }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    // Reads are not generations.
    const usage = await fetch(`${server.baseUrl}/usage`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(usage.status).toBe(200);
  });

  it('counts a connection until its request finished or it closed', async () => {
    const first = await open();
    const second = await open();
    first.send({ event: 'start', mode: 'simple', request: REQUEST });
    await first.next('ready');
    first.send({ event: 'input', text: 'Done soon.', commit: true });
    await first.next('finish');
    // Finished: a new generation is admitted while the first connection is still open.
    await open();
    second.close();
    await second.closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    await open();
    expect(server.concurrency.stats()).toMatchObject({ refused: 0, peak: 2 });
  });
});
