/**
 * `voxpipe serve` on a persistent store (`--data DIR`, PGlite; `--database
 * URL`, PostgreSQL) killed with SIGKILL and restarted on the same store: a
 * request cut mid-segment resumes byte-exact with one charge per segment,
 * and a job cut mid-work ends once, charged once. (What every store keeps
 * across a reopen: contract.test.ts.)
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteStore } from '../../../src/server/store/pglite.js';
import { PostgresStore } from '../../../src/server/store/postgres.js';
import type { SqlStore } from '../../../src/server/store/sql.js';
import { startServer } from '../../../src/server/index.js';
import { createSpeechStream } from '../../../src/speech.js';
import { speakText } from '../../helpers/speak.js';
import { serviceConfigOf } from '../../../src/service.js';
import { createClient } from '../../../src/http/index.js';
import { available, DATABASE_URL, skipped, testSchemas } from '../../helpers/postgres.js';
import { spawnServe } from '../../helpers/serve-process.js';

const KEY = 'sk-pglite-test';
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-pglite-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Where a served store lives: `serve` arguments for a name, and the store itself to inspect afterwards. */
interface Backend {
  args(name: string): string[];
  open(name: string): Promise<SqlStore>;
}

const schemaOf = testSchemas('kill');
const BACKENDS: [string, Backend, boolean][] = [
  ['--data DIR (PGlite)', { args: (name) => ['--data', join(dir, name)], open: (name) => PgliteStore.open(join(dir, name)) }, true],
  [
    `--database URL (PostgreSQL)${skipped}`,
    { args: (name) => ['--database', DATABASE_URL!, '--database-schema', schemaOf(name)], open: (name) => PostgresStore.open(DATABASE_URL!, { schema: schemaOf(name) }) },
    available,
  ],
];

/** `voxpipe serve` on the store `where` names, on `port` (0: any). */
const serve = (where: string[], accounts: string, port = 0) => spawnServe(KEY, ['--engine', 'tone', '--port', String(port), ...where, '--accounts', accounts, '--faults', '{"latencyMs":15}']);

describe.each(BACKENDS)('voxpipe serve %s, killed with SIGKILL mid-request', (_name, backend, available) => {
  it.runIf(available)('restarted on the same store and port: the client resumes byte-exact, one charge per segment', { timeout: 120_000 }, async () => {
    const text = 'The first sentence is spoken before the kill. The second one is cut in the middle. The third comes after the restart.';
    const reference = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'pg' }] });
    let expected: Buffer;
    try {
      expected = (await speakText(serviceConfigOf(reference, KEY), text, { format: 'pcm', transport: 'realtime' })).audio;
    } finally {
      await reference.close();
    }

    const where = backend.args('served');
    const accounts = join(dir, 'accounts.json');
    await writeFile(accounts, JSON.stringify([{ apiKey: KEY, userId: 'pg', credits: 1e6, apiQuota: 1e6 }]));
    const first = await serve(where, accounts);
    const port = Number(new URL(first.config.rootUrl).port);
    const speech = await createSpeechStream(first.config, { format: 'pcm', transport: 'realtime', realtime: { backoff: { baseMs: 100, maxMs: 500 }, maxResumeMs: 60_000, maxRetries: 30 } });
    const parts: Buffer[] = [];
    let completed = 0;
    let restarted: Promise<{ child: ChildProcess }> | undefined;
    speech.on('segment', () => (completed += 1));
    speech.on('data', (c: Buffer) => {
      parts.push(c);
      if (completed >= 1 && !restarted) {
        first.child.kill('SIGKILL');
        restarted = new Promise<void>((resolve) => first.child.once('exit', () => resolve())).then(() => serve(where, accounts, port));
      }
    });
    speech.end(text);
    const error = await new Promise<unknown>((resolve) => {
      speech.on('end', () => resolve(undefined));
      speech.on('error', resolve);
    });
    expect(restarted).toBeDefined();
    const second = await restarted!;
    second.child.kill('SIGTERM');
    await new Promise<void>((resolve) => second.child.once('exit', () => resolve()));
    expect(error).toBeUndefined();
    expect(speech.summary().resumed).toBeGreaterThanOrEqual(1);
    expect(Buffer.concat(parts).equals(expected)).toBe(true);

    // The ledger on disk: one live charge per segment of the request.
    const store = await backend.open('served');
    try {
      const requestId = speech.summary().requestId;
      const live = [...store.ledger.values()].filter((e) => e.refId.includes(requestId) && e.state !== 'released');
      const segments = speech.summary().segments.length;
      expect(new Set(live.map((e) => e.refId)).size).toBe(live.length);
      expect(live.length).toBe(segments);
    } finally {
      await store.close();
    }
  });
});

describe.each(BACKENDS)('voxpipe serve %s, killed with SIGKILL mid-job', (_name, backend, available) => {
  it.runIf(available)('restarted on the same store: the accepted job ends succeeded, charged once, and its audio downloads', { timeout: 120_000 }, async () => {
    const where = backend.args('jobs');
    const accounts = join(dir, 'accounts-jobs.json');
    await writeFile(accounts, JSON.stringify([{ apiKey: KEY, userId: 'pg', credits: 1e6, apiQuota: 1e6 }]));
    // 15 ms before every engine chunk: the job takes seconds, so the kill lands mid-job.
    const first = await serve(where, accounts);
    const text = Array.from({ length: 3 }, (_, i) => `Sentence number ${i + 1} of a job that is cut by a kill.`).join(' ');
    const client = createClient({ apiKey: KEY, baseUrl: first.config.baseUrl, rootUrl: first.config.rootUrl });
    const job = await client.jobs.create({ text, voiceId: (await client.voices.list())[0]!.voiceId });
    let seen = job.status;
    for (let i = 0; i < 500 && seen !== 'processing'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      seen = (await client.jobs.get(job.id)).status;
    }
    expect(seen).toBe('processing');
    first.child.kill('SIGKILL');
    await new Promise<void>((resolve) => first.child.once('exit', () => resolve()));

    const second = await serve(where, accounts);
    try {
      const again = createClient({ apiKey: KEY, baseUrl: second.config.baseUrl, rootUrl: second.config.rootUrl });
      const done = await again.jobs.wait(job.id, { intervalMs: 50, maxIntervalMs: 200 });
      expect(done.status).toBe('succeeded');
      const file = await again.jobs.download(done);
      expect(file.data.length).toBeGreaterThan(1000);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise<void>((resolve) => second.child.once('exit', () => resolve()));
    }

    const store = await backend.open('jobs');
    try {
      const charges = [...store.ledger.values()].filter((e) => e.refId === `job:${job.id}`);
      expect(charges).toHaveLength(1);
      expect(charges[0]!.state).toBe('committed');
      expect(store.accounts.get('pg')!.credits).toBe(1e6 - charges[0]!.amount);
    } finally {
      await store.close();
    }
  });
});
