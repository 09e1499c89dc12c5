/** Profile and usage against a local fake serving the spec's documented shapes (2.1, 4.9). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError } from '../../../src/errors.js';
import { createClient, type VoxpipeClient } from '../../../src/http/index.js';
import { json, startFakeServer, type FakeServer } from '../fake-server.js';

let server: FakeServer;
let client: VoxpipeClient;

beforeEach(async () => {
  server = await startFakeServer();
  client = createClient({ apiKey: 'sk-account-test-0000', baseUrl: server.baseUrl, initialRetryDelayMs: 1 });
});
afterEach(async () => {
  await server.close();
});

describe('client.profile', () => {
  it('reads the snake_case profile and keeps unknown fields', async () => {
    server.handle((_req, res) => json(res, 200, { user_id: 'u1', api_quota_remaining: 900, tier: 'pro', credits: 1200, region: 'eu' }));
    const p = await client.profile.get();
    expect(p).toMatchObject({ userId: 'u1', apiQuotaRemaining: 900, tier: 'pro', credits: 1200 });
    expect(p.raw['region']).toBe('eu');
  });

  it('updates the webhook URL; the update is safe to resend after a 5xx', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 503, { error: { code: 'internal_error', message: 'x' } }) : json(res, 200, { user_id: 'u1', webhookUrl: 'https://hooks/x' })));
    const p = await client.profile.update({ webhookUrl: 'https://hooks/x' });
    expect(p.webhookUrl).toBe('https://hooks/x');
    expect(server.requests).toHaveLength(2);
    expect(JSON.parse(server.requests[1]!.body.toString())).toEqual({ webhookUrl: 'https://hooks/x' });
  });

  it('401 is an AuthenticationError', async () => {
    server.handle((_req, res) => json(res, 401, { code: 'unauthorized', message: 'invalid API key', requestId: 'r' }));
    await expect(client.profile.get()).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe('client.usage', () => {
  it('reads apiUsage.totalCreditsCharged and keeps the rest', async () => {
    server.handle((_req, res) => json(res, 200, { balance: { credits: 5 }, apiUsage: { totalCreditsCharged: 42 }, ledger: [] }));
    const u = await client.usage.get();
    expect(u.totalCreditsCharged).toBe(42);
    expect(u.raw['balance']).toEqual({ credits: 5 });
  });
});
