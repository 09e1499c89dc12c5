/**
 * Several server processes on one PostgreSQL store behave as one service:
 * a reliable request started on one process and resumed
 * after its connection dropped continues byte-exact on another, charged once
 * per segment; the request-status route and task lists answer the same from
 * every process; a task runs on one process only, and one whose process
 * died runs once more elsewhere; `serve --workers N` does all of it behind
 * one port.
 *
 * Needs a PostgreSQL (VOXPIPE_TEST_DATABASE_URL; `.ci/run` sets one up):
 * without one the tests are skipped, and their titles say so.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceConfig } from '../../../src/config.js';
import { createClient } from '../../../src/http/index.js';
import { TaskRunner } from '../../../src/server/rest/common/task-runner.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { PostgresStore } from '../../../src/server/store/postgres.js';
import { serviceConfigOf } from '../../../src/service.js';
import { createSpeechStream } from '../../../src/speech.js';
import { DATABASE_URL, available, skipped, testSchemas } from '../../helpers/postgres.js';
import { BIN, spawnServe, stopServe, type ServeProcess } from '../../helpers/serve-process.js';
import { speakText } from '../../helpers/speak.js';

const KEY = 'sk-workers-test';
const schemaFor = testSchemas('workers');

let dir: string;
let accounts: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-workers-'));
  accounts = join(dir, 'accounts.json');
  await writeFile(accounts, JSON.stringify([{ apiKey: KEY, userId: 'w', credits: 1e6, apiQuota: 1e6 }]));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Served = ServeProcess;

/** `voxpipe serve` with `args` on the schema. */
const serve = (schema: string, args: string[]) => spawnServe(KEY, ['--engine', 'tone', '--database', DATABASE_URL!, '--database-schema', schema, '--accounts', accounts, ...args]);
const stop = (served: Served) => stopServe(served);

/**
 * A TCP proxy in front of two processes: the first WebSocket upgrade goes to
 * `first`, every other connection (HTTP, later upgrades) to `rest`; it
 * counts where upgrades went.
 */
async function splitProxy(first: number, rest: number): Promise<{ server: Server; config: ServiceConfig; upgrades: number[] }> {
  const upgrades: number[] = [];
  const server = createServer((client: Socket) => {
    client.once('data', (head: Buffer) => {
      const isUpgrade = /^upgrade:\s*websocket/im.test(head.toString('latin1'));
      const port = isUpgrade && !upgrades.includes(first) ? first : rest;
      if (isUpgrade) upgrades.push(port);
      const upstream = connect(port, '127.0.0.1', () => {
        upstream.write(head);
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Every URL of the service through the proxy.
  const via = `127.0.0.1:${(server.address() as { port: number }).port}`;
  const config: ServiceConfig = { apiKey: KEY, baseUrl: `http://${via}/api/open/v1`, rootUrl: `http://${via}`, wsUrl: `ws://${via}`, rtHttpUrl: `http://${via}` };
  return { server, config, upgrades };
}

const portOf = (served: Served) => Number(new URL(served.config.rootUrl).port);
const TEXT = 'The first sentence starts on one process. The second is cut when its connection drops. The third ends on the other process.';

/** The audio a single in-memory server gives for TEXT: what every path must give, byte for byte. */
async function referenceAudio(): Promise<Buffer> {
  const reference = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'w' }] });
  try {
    return (await speakText(serviceConfigOf(reference, KEY), TEXT, { format: 'pcm', transport: 'realtime' })).audio;
  } finally {
    await reference.close();
  }
}

/** Live (not refunded) ledger charges of a request, read from the shared store by a third process. */
async function liveCharges(schema: string, requestId: string): Promise<string[]> {
  const store = await PostgresStore.open(DATABASE_URL!, { schema });
  try {
    return [...store.ledger.values()].filter((e) => e.refId.includes(requestId) && e.state !== 'released').map((e) => e.refId);
  } finally {
    await store.close();
  }
}

describe(`two voxpipe serve processes on one PostgreSQL${skipped}`, () => {
  it.runIf(available)('a request dropped on one process resumes on the other byte-exact, one charge per segment; status and task lists answer the same from both', { timeout: 120_000 }, async () => {
    const expected = await referenceAudio();
    const schema = schemaFor('pair');
    // A drops the connection after a few audio frames; B has no faults.
    const a = await serve(schema, ['--faults', '{"latencyMs":10,"realtimeDrop":{"afterAudioFrames":12}}']);
    const b = await serve(schema, ['--faults', '{"latencyMs":10}']);
    const proxy = await splitProxy(portOf(a), portOf(b));
    try {
      const { config } = proxy;
      const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', realtime: { backoff: { baseMs: 50, maxMs: 300 }, maxResumeMs: 30_000, maxRetries: 20 } });
      speech.end(TEXT);
      const parts: Buffer[] = [];
      for await (const c of speech) parts.push(c as Buffer);
      const summary = speech.summary();
      expect(proxy.upgrades[0]).toBe(portOf(a));
      expect(proxy.upgrades.slice(1)).toContain(portOf(b));
      expect(summary.resumed).toBeGreaterThanOrEqual(1);
      expect(Buffer.concat(parts).equals(expected)).toBe(true);
      const charges = await liveCharges(schema, summary.requestId!);
      expect(new Set(charges).size).toBe(charges.length);
      expect(charges).toHaveLength(summary.segments.length);

      // The request-status route, read from each process directly: the same answer.
      const status = async (served: Served) => {
        const res = await fetch(`${served.config.rtHttpUrl}/v2/tts/requests/${encodeURIComponent(summary.requestId!)}`, { headers: { authorization: `Bearer ${KEY}` } });
        expect(res.status).toBe(200);
        const body = (await res.json()) as Record<string, unknown>;
        delete body['request_id_echo'];
        return body;
      };
      const [fromA, fromB] = [await status(a), await status(b)];
      expect(fromA).toEqual(fromB);
      expect(fromA).toMatchObject({ state: 'completed' });

      // A job created on A: B lists it, waits for it and downloads it; A's list is B's.
      const onA = createClient({ apiKey: KEY, baseUrl: a.config.baseUrl, rootUrl: a.config.rootUrl });
      const onB = createClient({ apiKey: KEY, baseUrl: b.config.baseUrl, rootUrl: b.config.rootUrl });
      const job = await onA.jobs.create({ text: 'A job made on one process and read on the other.', voiceId: (await onA.voices.list())[0]!.voiceId });
      const done = await onB.jobs.wait(job.id, { intervalMs: 50, maxIntervalMs: 200 });
      expect(done.status).toBe('succeeded');
      expect((await onB.jobs.download(done)).data.length).toBeGreaterThan(1000);
      const ids = async (client: typeof onA) => (await client.jobs.list()).items.map((t) => `${t.id}:${t.status}`);
      expect(await ids(onA)).toEqual(await ids(onB));
      expect(await ids(onA)).toContain(`${job.id}:succeeded`);
    } finally {
      proxy.server.close();
      await stop(a);
      await stop(b);
    }
  });
});

describe(`a process killed mid-request, its peer alive${skipped}`, () => {
  it.runIf(available)('the live process recovers the request and the client resumes on it byte-exact, one charge per segment', { timeout: 120_000 }, async () => {
    const expected = await referenceAudio();
    const schema = schemaFor('killed');
    const a = await serve(schema, ['--faults', '{"latencyMs":15}']);
    const b = await serve(schema, ['--faults', '{"latencyMs":15}']);
    const proxy = await splitProxy(portOf(a), portOf(b));
    try {
      const { config } = proxy;
      const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', realtime: { backoff: { baseMs: 100, maxMs: 500 }, maxResumeMs: 60_000, maxRetries: 40 } });
      const parts: Buffer[] = [];
      let completed = 0;
      speech.on('segment', () => (completed += 1));
      speech.on('data', (c: Buffer) => {
        parts.push(c);
        // Mid-request, after the first segment: A dies without a word; B never stopped.
        if (completed >= 1 && a.child.exitCode === null && !a.child.killed) a.child.kill('SIGKILL');
      });
      speech.end(TEXT);
      const error = await new Promise<unknown>((resolve) => {
        speech.on('end', () => resolve(undefined));
        speech.on('error', resolve);
      });
      expect(error).toBeUndefined();
      expect(a.child.killed).toBe(true);
      expect(proxy.upgrades[0]).toBe(portOf(a));
      expect(proxy.upgrades.slice(1)).toContain(portOf(b));
      expect(speech.summary().resumed).toBeGreaterThanOrEqual(1);
      expect(Buffer.concat(parts).equals(expected)).toBe(true);
      const charges = await liveCharges(schema, speech.summary().requestId!);
      expect(new Set(charges).size).toBe(charges.length);
      expect(charges).toHaveLength(speech.summary().segments.length);
    } finally {
      proxy.server.close();
      await stop(a);
      await stop(b);
    }
  });
});

describe(`a task on a store shared by several processes${skipped}`, () => {
  it.runIf(available)('runs on one process only; one whose process died runs once more on another, charged once', { timeout: 60_000 }, async () => {
    const schema = schemaFor('tasks');
    const opened: PostgresStore[] = [];
    const servers: ReferenceServer[] = [];
    const runners: TaskRunner<{ n: number }, { by: string }>[] = [];
    const runs = new Map<string, string[]>();
    /** A server on the shared schema with a `count` task family whose worker records which process ran what. */
    const start = async (name: string, hang: boolean) => {
      const store = await PostgresStore.open(DATABASE_URL!, { schema });
      opened.push(store);
      // The dying one, left running without its database, says so every second: not this test's subject.
      const server = await startServer({ engine: 'tone', store, accounts: [{ apiKey: KEY, userId: 'w', credits: 1e6 }], ...(hang && { log: () => undefined }) });
      servers.push(server);
      const runner = new TaskRunner<{ n: number }, { by: string }>(server.ctx, {
        type: 'count',
        startDelayMs: 5,
        worker: async ({ task, signal }) => {
          runs.set(task.taskId, [...(runs.get(task.taskId) ?? []), name]);
          // The dying process never finishes its tasks.
          if (hang) await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
          await new Promise((r) => setTimeout(r, 20));
          return { result: { by: name } };
        },
      });
      runners.push(runner);
      return { store, server, runner };
    };

    const dying = await start('dying', true);
    const account = dying.server.ctx.store.accounts.get('w')!;
    const accepted = await Promise.all(Array.from({ length: 8 }, async (_, n) => (await dying.runner.create(account, { n }, { requestId: `req-${n}`, charge: { currency: 'credits', amount: 10 } })).taskId));
    // Every task claimed and started by the dying process (a loaded machine may take more than a moment).
    for (let waited = 0; waited < 10_000 && !accepted.every((id) => dying.runner.peek(id)!.state === 'processing'); waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(accepted.every((id) => dying.runner.peek(id)!.state === 'processing')).toBe(true);
    await dying.store.flush();
    // Its connection ends as a killed process's does: its claims are let go.
    await dying.store.close();

    try {
      // Two live processes race for the dead one's tasks (each looks every second).
      const [p, q] = await Promise.all([start('p', false), start('q', false)]);
      // And each creates tasks of its own meanwhile.
      const own = await Promise.all([p, q].flatMap((s, i) => Array.from({ length: 5 }, async (_, n) => (await s.runner.create(s.server.ctx.store.accounts.get('w')!, { n }, { requestId: `own-${i}-${n}`, charge: { currency: 'credits', amount: 10 } })).taskId)));
      const all = [...accepted, ...own];
      const deadline = Date.now() + 30_000;
      const ended = () => all.every((id) => [p, q].some((s) => s.runner.peek(id)?.state === 'succeeded'));
      while (!ended() && Date.now() < deadline) {
        await Promise.all([p.store.sync(), q.store.sync()]);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(ended()).toBe(true);
      for (const id of accepted) expect(runs.get(id)!.filter((who) => who !== 'dying')).toHaveLength(1);
      for (const id of own) expect(runs.get(id)).toHaveLength(1);
      // Both live processes took some of the dead one's tasks, or one took all: either way, each ran once.
      await Promise.all([p.store.flush(), q.store.flush()]);
      await p.store.sync();
      const charges = [...p.store.ledger.values()].filter((e) => all.some((id) => e.refId === `job:${id}`));
      expect(charges).toHaveLength(all.length);
      expect(charges.every((e) => e.state === 'committed')).toBe(true);
      expect(p.store.accounts.get('w')!.credits).toBe(1e6 - 10 * all.length);
    } finally {
      // Not a module of the server: closed by hand.
      for (const r of runners) await r.close();
      for (const s of servers.reverse()) await s.close().catch(() => undefined);
      for (const s of opened) await s.close().catch(() => undefined);
    }
  });
});

describe(`a client's key on a store shared by several processes${skipped}`, () => {
  it.runIf(available)('the same X-Request-Id or Idempotency-Key sent to two processes at once runs once, charged once', { timeout: 60_000 }, async () => {
    const schema = schemaFor('keys');
    const stores = [await PostgresStore.open(DATABASE_URL!, { schema }), await PostgresStore.open(DATABASE_URL!, { schema })];
    const servers = await Promise.all(stores.map((store) => startServer({ engine: 'tone', store, accounts: [{ apiKey: KEY, userId: 'w', credits: 1e6 }], faults: { latencyMs: 10 } })));
    try {
      const voiceId = (await createClient({ apiKey: KEY, baseUrl: servers[0]!.baseUrl }).voices.list())[0]!.voiceId;
      const post = (server: ReferenceServer, path: string, headers: Record<string, string>, body: unknown) =>
        fetch(`${server.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

      // Sync TTS, one X-Request-Id, three requests on each process at once: one generation.
      const syncReplies = await Promise.all(Array.from({ length: 6 }, (_, i) => post(servers[i % 2]!, '/speech/tts', { 'x-request-id': 'one-generation' }, { text: 'Said once, whichever process hears it first.', voiceId })));
      const statuses = syncReplies.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(5);

      // A TTS job, one Idempotency-Key, on both processes at once: one task; a repeat afterwards replays it.
      const jobReplies = await Promise.all(Array.from({ length: 6 }, (_, i) => post(servers[i % 2]!, '/speech/tts/jobs', { 'idempotency-key': 'one-job' }, { text: 'One job for one key.', voiceId })));
      const created = await Promise.all(jobReplies.filter((r) => r.status === 202).map(async (r) => JSON.stringify(await r.json())));
      expect(jobReplies.every((r) => r.status === 202 || r.status === 409)).toBe(true);
      expect(new Set(created).size).toBe(1);
      const again = await post(servers[1]!, '/speech/tts/jobs', { 'idempotency-key': 'one-job' }, { text: 'One job for one key.', voiceId });
      expect(again.status).toBe(202);
      expect(JSON.stringify(await again.json())).toBe(created[0]);

      await Promise.all(stores.map((s) => s.flush()));
      const reader = await PostgresStore.open(DATABASE_URL!, { schema });
      try {
        expect([...reader.ledger.values()].filter((e) => e.refId.startsWith('sync:'))).toHaveLength(1);
        expect([...reader.ledger.values()].filter((e) => e.refId.startsWith('job:'))).toHaveLength(1);
      } finally {
        await reader.close();
      }
    } finally {
      for (const server of servers) await server.close();
      for (const store of stores) await store.close();
    }
  });
});

describe(`voxpipe serve --workers 2${skipped}`, () => {
  it.runIf(available)('one port, one service: requests dropped on each worker resume byte-exact, charges add up across workers', { timeout: 120_000 }, async () => {
    const expected = await referenceAudio();
    const schema = schemaFor('cluster');
    // Each worker drops one connection: a resume lands on whichever worker takes it.
    const served = await serve(schema, ['--workers', '2', '--faults', '{"latencyMs":5,"realtimeDrop":{"afterAudioFrames":10}}']);
    try {
      expect(served.stderr()).toMatch(/2 worker processes \(pids \d+, \d+\)/);
      const results = await Promise.all(
        Array.from({ length: 4 }, () => speakText(served.config, TEXT, { format: 'pcm', transport: 'realtime', realtime: { backoff: { baseMs: 50, maxMs: 300 }, maxResumeMs: 30_000, maxRetries: 20 } })),
      );
      for (const r of results) expect(r.audio.equals(expected)).toBe(true);
      expect(results.reduce((n, r) => n + r.summary.resumed, 0)).toBeGreaterThanOrEqual(1);
      // Sync TTS on both workers at once (HTTP keeps no affinity): every charge counts once.
      const client = createClient({ apiKey: KEY, baseUrl: served.config.baseUrl, rootUrl: served.config.rootUrl });
      const voiceId = (await client.voices.list())[0]!.voiceId;
      await Promise.all(Array.from({ length: 8 }, (_, i) => client.tts.synthesize({ text: `Sync request ${i}.`, voiceId })));
      for (const r of results) {
        const charges = await liveCharges(schema, r.summary.requestId!);
        expect(charges).toHaveLength(r.summary.segments.length);
      }
      // A worker that dies is replaced, and the service goes on answering.
      const pids = /pids (\d+), (\d+)/.exec(served.stderr())!.slice(1).map(Number);
      process.kill(pids[0]!, 'SIGKILL');
      for (let i = 0; i < 100 && !/starting another/.test(served.stderr()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(served.stderr()).toMatch(new RegExp(`worker ${pids[0]} stopped \\(SIGKILL\\); starting another`));
      for (let i = 0; i < 4; i++) expect((await speakText(served.config, 'Still here.', { format: 'pcm', transport: 'realtime' })).audio.length).toBeGreaterThan(0);
      const store = await PostgresStore.open(DATABASE_URL!, { schema });
      try {
        const account = store.accounts.get('w')!;
        const live = [...store.ledger.values()].filter((e) => e.userId === 'w' && e.state !== 'released');
        const sum = (currency: string) => live.filter((e) => e.currency === currency).reduce((n, e) => n + e.amount, 0);
        expect(sum('credits')).toBeGreaterThan(0);
        expect(account.credits).toBe(1e6 - sum('credits'));
        expect(account.apiQuota).toBe(1e6 - sum('quota'));
      } finally {
        await store.close();
      }
    } finally {
      await stop(served);
    }
  });

  it('refuses --workers without a shared --database, naming the problem', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--workers', '2', '--ephemeral'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(err).toMatch(/invalid_arguments: --workers N needs --database/);
  });
});
