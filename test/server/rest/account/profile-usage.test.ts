import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { CLONE_CREDITS } from '../../../../src/server/rest/account/settings.js';
import { errorOf, fileServer, get, ledgerSum, newAccount, post, referenceWav, startAccountServer, startServerPlain, VOICE } from './helpers.js';

let server: ReferenceServer;
let profileUrl: string;
let usageUrl: string;

beforeAll(async () => {
  server = await startAccountServer();
  profileUrl = `${server.baseUrl}/profile`;
  usageUrl = `${server.baseUrl}/usage`;
});
afterAll(async () => {
  await server.close();
});

describe('GET /profile', () => {
  it('gives user_id, api_quota_remaining, tier and credits, and only a hint of the webhook secret', async () => {
    const a = newAccount(server, { tier: 'pro', credits: 1234, apiQuota: 99 });
    const res = await get(profileUrl, { key: a.key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ user_id: a.userId, api_quota_remaining: 99, tier: 'pro', credits: 1234, webhookUrl: null });
    const secret = server.ctx.store.accounts.get(a.userId)!.webhookSecret;
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(body['webhookSecretHint']).toBe(`whsec_...${secret.slice(-4)}`);
  });

  it('answers 200 on an empty account (a lightweight check) and 401 without or with a bad key', async () => {
    const poor = newAccount(server, { credits: 0, apiQuota: 0 });
    expect((await get(profileUrl, { key: poor.key })).status).toBe(200);
    expect((await get(profileUrl, { key: null })).status).toBe(401);
    expect((await get(profileUrl, { key: 'sk-nobody-here' })).status).toBe(401);
  });
});

describe('POST /profile', () => {
  it('sets the webhookUrl and returns the full signing secret once; GET then shows the URL only', async () => {
    const a = newAccount(server);
    const res = await post(profileUrl, { webhookUrl: 'http://127.0.0.1:9/hooks' }, { key: a.key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    const secret = server.ctx.store.accounts.get(a.userId)!.webhookSecret;
    expect(body).toMatchObject({ user_id: a.userId, webhookUrl: 'http://127.0.0.1:9/hooks', webhookSecret: secret });
    const after = (await (await get(profileUrl, { key: a.key })).json()) as Record<string, unknown>;
    expect(after['webhookUrl']).toBe('http://127.0.0.1:9/hooks');
    expect(after['webhookSecret']).toBeUndefined();
  });

  it('rotates the secret on request and removes the URL with null', async () => {
    const a = newAccount(server);
    const before = server.ctx.store.accounts.get(a.userId)!.webhookSecret;
    const rotated = (await (await post(profileUrl, { webhookUrl: 'https://hooks.example.com/x', rotateWebhookSecret: true }, { key: a.key })).json()) as Record<string, string>;
    expect(rotated['webhookSecret']).not.toBe(before);
    expect(rotated['webhookSecret']).toBe(server.ctx.store.accounts.get(a.userId)!.webhookSecret);
    const cleared = (await (await post(profileUrl, { webhookUrl: null }, { key: a.key })).json()) as Record<string, unknown>;
    expect(cleared['webhookUrl']).toBeNull();
    expect(cleared['webhookSecret']).toBeUndefined();
  });

  const invalid: [string, unknown][] = [
    ['no webhookUrl', {}],
    ['a non-http URL', { webhookUrl: 'ftp://hooks.example.com/' }],
    ['not a URL', { webhookUrl: 'hooks' }],
    ['credentials in the URL', { webhookUrl: 'https://u:p@hooks.example.com/' }],
    ['a number', { webhookUrl: 42 }],
    ['an unknown field', { webhookUrl: 'https://hooks.example.com/', webhook_url: 'x' }],
    ['a server-controlled field', { webhookUrl: 'https://hooks.example.com/', credits: 10 ** 9 }],
  ];
  it.each(invalid)('400 for %s, nothing changed', async (_name, body) => {
    const a = newAccount(server, { credits: 10 });
    const res = await post(profileUrl, body, { key: a.key });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('invalid_request');
    const account = server.ctx.store.accounts.get(a.userId)!;
    expect(account.webhookUrl).toBeUndefined();
    expect(account.credits).toBe(10);
  });

  it('refuses loopback and LAN webhook URLs where the server does not allow private URLs', async () => {
    const strict = await startServerPlain();
    try {
      for (const webhookUrl of ['http://127.0.0.1:8080/h', 'http://localhost/h', 'http://192.168.1.5/h', 'http://[fe80::1]/h', 'http://169.254.169.254/latest']) {
        const res = await post(`${strict.baseUrl}/profile`, { webhookUrl });
        expect(res.status, webhookUrl).toBe(400);
      }
    } finally {
      await strict.close();
    }
  });

  it('401 without a key', async () => {
    expect((await post(profileUrl, { webhookUrl: 'https://hooks.example.com/' }, { key: null })).status).toBe(401);
  });
});

describe('GET /usage', () => {
  it('totals equal the ledger: charges counted, refunds excluded, newest entries first', async () => {
    const a = newAccount(server);
    const files = await fileServer({ 'ref.wav': { body: await referenceWav(120) }, 'bad.bin': { body: Buffer.from('not audio, sorry'), type: 'application/octet-stream' } });
    try {
      expect((await post(`${server.baseUrl}/speech/tts`, { text: 'Twelve chars', voiceId: VOICE, format: 'wav' }, { key: a.key })).status).toBe(200);
      expect((await post(`${server.baseUrl}/voices`, { name: 'v', audioUrl: `${files.url}/ref.wav` }, { key: a.key })).status).toBe(201);
      expect((await post(`${server.baseUrl}/voices`, { name: 'v', audioUrl: `${files.url}/bad.bin` }, { key: a.key })).status).toBe(422);
    } finally {
      await files.close();
    }
    const res = await get(usageUrl, { key: a.key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      balance: { credits: number; apiQuota: number };
      apiUsage: { totalCreditsCharged: number; totalQuotaCharged: number; totalCreditsRefunded: number; charges: number };
      ledger: { refId: string; amount: number; state: string; currency: string }[];
    };
    expect(body.apiUsage.totalCreditsCharged).toBe(12 + CLONE_CREDITS);
    expect(body.apiUsage.totalCreditsCharged).toBe(ledgerSum(server, a.userId, 'credits'));
    expect(body.apiUsage.totalCreditsCharged).toBe(1_000_000 - body.balance.credits);
    expect(body.apiUsage.totalCreditsRefunded).toBe(CLONE_CREDITS);
    expect(body.apiUsage.totalQuotaCharged).toBe(0);
    expect(body.apiUsage.charges).toBe(3);
    expect(body.ledger.map((e) => e.state)).toEqual(['released', 'committed', 'committed']);
    expect(body.ledger[2]).toMatchObject({ amount: 12, currency: 'credits' });
    expect(body.ledger.filter((e) => e.state !== 'released').reduce((s, e) => s + e.amount, 0)).toBe(body.apiUsage.totalCreditsCharged);
  });

  it('limits the ledger with limit (hasMore says more exist) and filters by currency', async () => {
    const a = newAccount(server);
    for (let i = 0; i < 3; i++) await post(`${server.baseUrl}/speech/tts`, { text: `Take ${i}`, voiceId: VOICE, format: 'wav' }, { key: a.key });
    const two = (await (await get(`${usageUrl}?limit=2`, { key: a.key })).json()) as { ledger: unknown[]; pagination: { hasMore: boolean } };
    expect(two.ledger).toHaveLength(2);
    expect(two.pagination.hasMore).toBe(true);
    const quota = (await (await get(`${usageUrl}?currency=quota`, { key: a.key })).json()) as { ledger: unknown[]; apiUsage: { totalCreditsCharged: number } };
    expect(quota.ledger).toHaveLength(0);
    expect(quota.apiUsage.totalCreditsCharged).toBe(18);
  });

  it('400 for a limit out of 1..100 or an unknown currency; 401 without a key', async () => {
    expect((await get(`${usageUrl}?limit=0`)).status).toBe(400);
    expect((await get(`${usageUrl}?limit=101`)).status).toBe(400);
    expect((await get(`${usageUrl}?currency=euro`)).status).toBe(400);
    expect((await get(usageUrl, { key: null })).status).toBe(401);
  });
});
