/**
 * Promises kept across `voxpipe serve` processes on one PostgreSQL (issue
 * 28): a webhook delivery waiting for its next attempt on a process that is
 * killed is sent once, by another process, when it is due; a browser ticket
 * redeemed on two processes at once authenticates one connection only; a
 * burst of sync TTS requests spread over both against a short balance charges
 * exactly what fits and never overdraws it.
 *
 * Spawns the built CLI (`npm run build` first). Needs a PostgreSQL
 * (VOXPIPE_TEST_DATABASE_URL; `.ci/run` sets one up): without one the tests
 * are skipped, and their titles say so.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REALTIME_PATHS } from '../../../src/protocol/constants.js';
import { WEBHOOK_ATTEMPT_HEADER, WEBHOOK_EVENT_ID_HEADER } from '../../../src/protocol/webhooks.js';
import { PostgresStore } from '../../../src/server/store/postgres.js';
import { DATABASE_URL, available, skipped, testSchemas } from '../../helpers/postgres.js';
import { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { spawnServe, stopServe } from '../../helpers/serve-process.js';
import { VOICE } from '../rest/helpers.js';

const KEY = 'sk-shared-deliveries';
const schemaFor = testSchemas('deliv');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-deliveries-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function accountsFile(seed: Record<string, unknown>): Promise<string> {
  const file = join(dir, `accounts-${randomBytes(3).toString('hex')}.json`);
  await writeFile(file, JSON.stringify([{ apiKey: KEY, userId: 'd', credits: 1e6, apiQuota: 1e6, ...seed }]));
  return file;
}

/** `voxpipe serve` on the schema. */
const serve = async (schema: string, accounts: string, env: Record<string, string> = {}) =>
  spawnServe(KEY, ['--engine', 'tone', '--allow-private-urls', '--database', DATABASE_URL!, '--database-schema', schema, '--accounts', accounts], env);

const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`webhook deliveries on a store shared by two processes${skipped}`, () => {
  it.runIf(available)('a process killed with a retry pending: the delivery arrives once, from the other', { timeout: 90_000 }, async () => {
    // The receiver refuses the first attempt; every later one is accepted.
    const arrivals: { eventId: string; attempt: string; at: number }[] = [];
    let firstArrived!: () => void;
    const first = new Promise<void>((resolve) => (firstArrived = resolve));
    const receiver: Server = createServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push({ eventId: String(req.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()]), attempt: String(req.headers[WEBHOOK_ATTEMPT_HEADER.toLowerCase()]), at: Date.now() });
        res.writeHead(arrivals.length === 1 ? 500 : 204).end();
        if (arrivals.length === 1) firstArrived();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const webhookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const schema = schemaFor('webhook');
    const accounts = await accountsFile({ webhookUrl });
    // The retry is due 4 s after the first attempt.
    const env = { VOXPIPE_WEBHOOK_RETRY_DELAY_MS: '4000', VOXPIPE_WEBHOOK_MAX_ATTEMPTS: '5' };
    const a = await serve(schema, accounts, env);
    const b = await serve(schema, accounts, env);
    try {
      const voices = (await (await fetch(`${a.config.baseUrl}/voices`, { headers: auth })).json()) as Record<string, unknown>;
      const list = (voices['voices'] ?? voices['data'] ?? voices['items'] ?? voices) as { voiceId?: string; voice_id?: string; id?: string }[];
      const voiceId = list[0]?.voiceId ?? list[0]?.voice_id ?? list[0]?.id;
      const created = await fetch(`${a.config.baseUrl}/speech/tts/jobs`, { method: 'POST', headers: auth, body: JSON.stringify({ text: 'A job whose webhook outlives its process.', voiceId }) });
      expect(created.status).toBe(202);
      await first;
      // The first attempt was refused: A keeps the schedule, then dies before the retry is due.
      await sleep(500);
      await stopServe(a, 'SIGKILL');
      const killedAt = Date.now();
      for (let i = 0; i < 200 && arrivals.length < 2; i++) await sleep(50);
      // Nothing more after the accepted one.
      await sleep(2_500);
      expect(arrivals).toHaveLength(2);
      expect(arrivals[1]!.eventId).toBe(arrivals[0]!.eventId);
      expect(arrivals[1]!.attempt).toBe('2');
      expect(arrivals[1]!.at).toBeGreaterThan(killedAt);
      const store = await PostgresStore.open(DATABASE_URL!, { schema });
      try {
        const deliveries = [...store.collection<{ state: string; attempts: number }>('webhook-deliveries').values()];
        expect(deliveries.map((d) => [d.state, d.attempts])).toEqual([['delivered', 2]]);
      } finally {
        await store.close();
      }
    } finally {
      await stopServe(a);
      await stopServe(b);
      receiver.close();
    }
  });
});

describe(`browser tickets and holds on two processes${skipped}`, () => {
  it.runIf(available)('a ticket redeemed on both processes at once authenticates one connection', { timeout: 90_000 }, async () => {
    const schema = schemaFor('ticket');
    const accounts = await accountsFile({});
    const a = await serve(schema, accounts);
    const b = await serve(schema, accounts);
    const clients: RealtimeTestClient[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const res = await fetch(`${a.config.rtHttpUrl}${REALTIME_PATHS.browserTickets}`, { method: 'POST', headers: auth, body: JSON.stringify({ origin: 'https://app.example.com' }) });
        expect(res.status).toBe(200);
        const token = ((await res.json()) as { ticket: string }).ticket;
        // The ticket is bound to the Host it was asked from: both upgrades name A's.
        const host = new URL(a.config.rtHttpUrl).host;
        const pair = await Promise.all([a, b].map((s) => RealtimeTestClient.connect(s.config.wsUrl, { headers: { Origin: 'https://app.example.com', Host: host } })));
        clients.push(...pair);
        for (const client of pair) client.send({ event: 'auth', event_id: 'a1', token });
        const outcomes = await Promise.all(pair.map((client) => Promise.race([client.next('authenticated').then(() => 'authenticated'), client.next('error').then((e) => String(e['code']))])));
        expect(outcomes.sort()).toEqual(['authenticated', 'authentication_failed']);
      }
    } finally {
      for (const c of clients) c.close();
      await stopServe(a);
      await stopServe(b);
    }
  });

  it.runIf(available)('sync TTS bursts on both processes against a short balance: exactly what fits is charged, the rest is 402, never below zero', { timeout: 90_000 }, async () => {
    const schema = schemaFor('burst');
    // 10 characters a request; 73 credits: 7 fit.
    const accounts = await accountsFile({ credits: 73 });
    const a = await serve(schema, accounts);
    const b = await serve(schema, accounts);
    try {
      const statuses = await Promise.all(
        Array.from({ length: 16 }, (_, i) => fetch(`${(i % 2 ? a : b).config.baseUrl}/speech/tts`, { method: 'POST', headers: auth, body: JSON.stringify({ text: 'ten chars.', voiceId: VOICE, format: 'wav' }) }).then(async (r) => (await r.arrayBuffer(), r.status))),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(7);
      expect(statuses.filter((s) => s === 402)).toHaveLength(9);
      const store = await PostgresStore.open(DATABASE_URL!, { schema });
      try {
        expect(store.accounts.get('d')!.credits).toBe(3);
      } finally {
        await store.close();
      }
    } finally {
      await stopServe(a);
      await stopServe(b);
    }
  });
});
