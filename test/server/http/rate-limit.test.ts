import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/server/http/rate-limit.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { createClient } from '../../../src/http/index.js';

describe('RateLimiter', () => {
  it('allows the burst, then refuses with the wait, then refills', () => {
    let now = 0;
    const limiter = new RateLimiter({ requestsPerSecond: 2, burst: 2 }, () => now);
    limiter.take('a');
    limiter.take('a');
    expect(() => limiter.take('a')).toThrowError(/rate limit/);
    try {
      limiter.take('a');
    } catch (err) {
      expect((err as { status: number }).status).toBe(429);
      expect((err as { headers: Record<string, string> }).headers['retry-after']).toBe('1');
    }
    // Another account has its own bucket.
    limiter.take('b');
    now = 500; // half a second refills one token at 2/s
    limiter.take('a');
    expect(() => limiter.take('a')).toThrow();
  });
});

describe('429 over HTTP', () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startServer({ engine: 'tone', rateLimit: { requestsPerSecond: 2, burst: 1 } });
  });
  afterAll(() => server.close());

  it('answers 429 rate_limited with Retry-After, and the client waits it out', async () => {
    const get = () => fetch(`${server.baseUrl}/profile`, { headers: { authorization: 'Bearer sk-local-dev' } });
    expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('rate_limited');

    const retries: number[] = [];
    const client = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, onRetry: (info) => retries.push(info.delayMs) });
    const profile = await client.profile.get();
    expect(profile).toBeDefined();
    // It was limited and waited the server's Retry-After (1 s) before succeeding.
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries[0]).toBeGreaterThanOrEqual(1_000);
  });
});
