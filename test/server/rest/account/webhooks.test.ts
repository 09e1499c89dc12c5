import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { taskRunnerOf } from '../../../../src/server/rest/common/task-runner.js';
import { webhookDispatcherOf, type WebhookEvent } from '../../../../src/server/webhooks/dispatcher.js';
import { isPrivateAddress } from '../../../../src/server/net/public-url.js';
import { signWebhook, verifyWebhookSignature, WEBHOOK_TOLERANCE_MS } from '../../../../src/protocol/webhooks.js';
import { localServer, newAccount, post, startAccountServer, startServerPlain, until, VOICE } from './helpers.js';

describe('verifyWebhookSignature', () => {
  const secret = 'whsec_test';
  const body = '{"id":"evt_1","type":"task.succeeded"}';
  const now = 1_700_000_000_000;
  const t = now / 1000;

  it('accepts the signature of the body at a recent timestamp', () => {
    expect(verifyWebhookSignature(secret, signWebhook(secret, body, t), body, WEBHOOK_TOLERANCE_MS, now)).toBe(true);
    expect(verifyWebhookSignature(secret, signWebhook(secret, body, t - 60), Buffer.from(body), 300_000, now)).toBe(true);
  });

  it('refuses another body, another secret, a stale or future timestamp, and malformed headers', () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature(secret, header, `${body} `, 300_000, now)).toBe(false);
    expect(verifyWebhookSignature('whsec_other', header, body, 300_000, now)).toBe(false);
    expect(verifyWebhookSignature(secret, signWebhook(secret, body, t - 301), body, 300_000, now)).toBe(false);
    expect(verifyWebhookSignature(secret, signWebhook(secret, body, t + 301), body, 300_000, now)).toBe(false);
    // The timestamp is signed: changing it breaks the signature.
    expect(verifyWebhookSignature(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, 300_000, now)).toBe(false);
    for (const bad of [undefined, '', 'v1=abc', `t=${t}`, `t=${t},v1=zz`, 'garbage']) expect(verifyWebhookSignature(secret, bad, body, 300_000, now)).toBe(false);
  });

  it('accepts any of several v1 signatures (secret rotation)', () => {
    const old = signWebhook('whsec_old', body, t).split(',')[1]!;
    expect(verifyWebhookSignature(secret, `${signWebhook(secret, body, t)},${old}`, body, 300_000, now)).toBe(true);
    expect(verifyWebhookSignature('whsec_old', `${signWebhook(secret, body, t)},${old}`, body, 300_000, now)).toBe(true);
  });
});

describe('isPrivateAddress', () => {
  it.each(['127.0.0.1', '10.0.0.1', '172.20.1.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '224.0.0.1'])('%s is private', (a) => {
    expect(isPrivateAddress(a)).toBe(true);
  });
  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (a) => {
    expect(isPrivateAddress(a)).toBe(false);
  });
});

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
}

let server: ReferenceServer;

beforeAll(async () => {
  server = await startAccountServer();
  webhookDispatcherOf(server.ctx)!.configure({ initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 4, timeoutMs: 2_000 });
});
afterAll(async () => {
  await server.close();
});

/** A receiver answering with `statuses` in turn (the last one repeats). */
async function receiver(statuses: number[]) {
  const received: Received[] = [];
  const local = await localServer((req, res, body) => {
    const status = statuses[Math.min(received.length, statuses.length - 1)]!;
    received.push({ headers: req.headers, body: body.toString('utf8'), status });
    res.writeHead(status).end();
  });
  return { ...local, received };
}

/** An account whose webhook goes to `url`; returns its key, user id and secret. */
async function hookedAccount(url: string) {
  const a = newAccount(server);
  const res = await post(`${server.baseUrl}/profile`, { webhookUrl: url }, { key: a.key });
  const { webhookSecret } = (await res.json()) as { webhookSecret: string };
  return { ...a, secret: webhookSecret };
}

async function runTask(key: string, text: string): Promise<string> {
  const res = await post(`${server.baseUrl}/tts/tasks`, { text, voiceId: VOICE, format: 'wav' }, { key });
  expect(res.status).toBe(202);
  return ((await res.json()) as { taskId: string }).taskId;
}

describe('task webhooks', () => {
  it('one accepted delivery per terminal state despite a failed first attempt: same event, fresh valid signature', async () => {
    const hook = await receiver([500, 200]);
    try {
      const a = await hookedAccount(`${hook.url}/hooks`);
      const taskId = await runTask(a.key, 'Webhooks say hello.');
      const dispatcher = webhookDispatcherOf(server.ctx)!;
      await until(async () => hook.received.length, (n) => n >= 2);
      await dispatcher.idle();
      expect(hook.received.map((r) => r.status)).toEqual([500, 200]);
      const [first, second] = hook.received as [Received, Received];
      expect(second.body).toBe(first.body);
      expect(second.headers['x-voxpipe-event-id']).toBe(first.headers['x-voxpipe-event-id']);
      expect(first.headers['x-voxpipe-delivery-attempt']).toBe('1');
      expect(second.headers['x-voxpipe-delivery-attempt']).toBe('2');
      expect(second.headers['content-type']).toBe('application/json');
      expect(verifyWebhookSignature(a.secret, second.headers['x-voxpipe-signature'] as string, second.body)).toBe(true);
      expect(verifyWebhookSignature('whsec_wrong', second.headers['x-voxpipe-signature'] as string, second.body)).toBe(false);
      const event = JSON.parse(second.body) as WebhookEvent;
      expect(event).toMatchObject({ type: 'task.succeeded', data: { taskId, taskType: 'tts', status: 'succeeded', errorCode: null, creditsCharged: 19 } });
      expect(event.id).toBe(second.headers['x-voxpipe-event-id']);
      expect(dispatcher.deliveriesOf(a.userId)).toMatchObject([{ state: 'delivered', attempts: 2, lastStatus: 200 }]);

      // Reporting the same terminal state again sends nothing more.
      const runner = taskRunnerOf(server.ctx, 'tts')!;
      const task = runner.peek(taskId)!;
      expect(dispatcher.taskTerminal(task)).toBeUndefined();
      expect(runner.fail(taskId, 'late', 'a late failure report')).toBe(false);
      await runTask(a.key, 'A second task.'); // and a later event still arrives, after which the count is checked
      await until(async () => hook.received.length, (n) => n >= 3);
      await dispatcher.idle();
      expect(hook.received).toHaveLength(3);
      expect(hook.received.filter((r) => (JSON.parse(r.body) as WebhookEvent).data.taskId === taskId)).toHaveLength(2);
    } finally {
      await hook.close();
    }
  });

  it('a failed task sends task.failed with its error code, refunded', async () => {
    const hook = await receiver([204]);
    try {
      const a = await hookedAccount(`${hook.url}/h`);
      server.faults.set({ engineFailure: { match: 'webhook failure please' } });
      const taskId = await runTask(a.key, 'webhook failure please');
      await until(async () => hook.received.length, (n) => n >= 1);
      const event = JSON.parse(hook.received[0]!.body) as WebhookEvent;
      expect(event).toMatchObject({ type: 'task.failed', data: { taskId, status: 'failed', refunded: true, creditsCharged: 0 } });
      expect(event.data.errorCode).toEqual(expect.any(String));
      expect(verifyWebhookSignature(a.secret, hook.received[0]!.headers['x-voxpipe-signature'] as string, hook.received[0]!.body)).toBe(true);
    } finally {
      await hook.close();
    }
  });

  it('gives up after maxAttempts when the receiver keeps failing, and never follows redirects', async () => {
    const hook = await receiver([503]);
    const redirect = await receiver([302]);
    try {
      const a = await hookedAccount(`${hook.url}/down`);
      await runTask(a.key, 'Nobody listens.');
      const dispatcher = webhookDispatcherOf(server.ctx)!;
      await until(async () => dispatcher.deliveriesOf(a.userId)[0]?.state, (s) => s === 'failed', 400, 10);
      expect(hook.received).toHaveLength(4);
      expect(dispatcher.deliveriesOf(a.userId)[0]).toMatchObject({ attempts: 4, lastStatus: 503 });

      const b = await hookedAccount(`${redirect.url}/moved`);
      await runTask(b.key, 'Redirected.');
      await until(async () => dispatcher.deliveriesOf(b.userId)[0]?.state, (s) => s === 'failed', 400, 10);
      expect(redirect.received).toHaveLength(4);
    } finally {
      await hook.close();
      await redirect.close();
    }
  });

  it('no webhook URL, no delivery; network errors are retried like error answers', async () => {
    const a = newAccount(server);
    await runTask(a.key, 'Quiet.');
    const dispatcher = webhookDispatcherOf(server.ctx)!;
    await dispatcher.idle();
    expect(dispatcher.deliveriesOf(a.userId)).toEqual([]);

    const gone = await receiver([200]);
    const url = `${gone.url}/gone`;
    await gone.close(); // nothing listens there any more
    const b = await hookedAccount(url);
    await runTask(b.key, 'Into the void.');
    await until(async () => dispatcher.deliveriesOf(b.userId)[0]?.state, (s) => s === 'failed', 400, 10);
    expect(dispatcher.deliveriesOf(b.userId)[0]).toMatchObject({ attempts: 4, lastStatus: null, lastError: expect.stringMatching(/network error/) });
  });

  it('a server without allowPrivateUrls never calls a loopback webhook URL', async () => {
    const hook = await receiver([200]);
    const strict = await startServerPlain();
    try {
      const a = newAccount(strict);
      // Set directly: the profile route would refuse this URL on this server.
      strict.ctx.store.accounts.get(a.userId)!.webhookUrl = `${hook.url}/h`;
      const res = await post(`${strict.baseUrl}/tts/tasks`, { text: 'Private.', voiceId: VOICE, format: 'wav' }, { key: a.key });
      expect(res.status).toBe(202);
      const dispatcher = webhookDispatcherOf(strict.ctx)!;
      await until(async () => dispatcher.deliveriesOf(a.userId)[0]?.state, (s) => s === 'failed', 400, 10);
      expect(dispatcher.deliveriesOf(a.userId)[0]).toMatchObject({ attempts: 0, lastError: expect.stringMatching(/publicly reachable/) });
      expect(hook.received).toHaveLength(0);
    } finally {
      await strict.close();
      await hook.close();
    }
  });
});
