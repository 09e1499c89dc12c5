/**
 * The PGlite store (`voxpipe serve --data DIR`, issue 15, first part): what
 * is written is there after a restart, in the same order, Buffers intact;
 * and a `voxpipe serve --data` killed with SIGKILL mid-request, restarted on
 * the same directory and port, lets the client resume byte-exact with one
 * charge per segment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/server/ledger.js';
import { PgliteStore } from '../../../src/server/store/pglite.js';
import { accountFromSeed } from '../../../src/server/app.js';
import { startServer } from '../../../src/server/index.js';
import { createSpeechStream } from '../../../src/speech.js';
import type { ServiceConfig } from '../../../src/config.js';
import { speakText } from '../../helpers/speak.js';
import { serviceConfigOf } from '../../../src/service.js';
import { createClient } from '../../../src/http/index.js';

const BIN = fileURLToPath(new URL('../../../bin/voxpipe.js', import.meta.url));
const KEY = 'sk-pglite-test';
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-pglite-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('PgliteStore', () => {
  it('keeps records, their order and Buffers across a close and a reopen; the ledger refunds once', { timeout: 60_000 }, async () => {
    const path = join(dir, 'unit');
    const store = await PgliteStore.open(path);
    const things = store.collection<{ n: number; audio?: Buffer }>('things');
    things.set('b', { n: 1, audio: Buffer.from([1, 2, 3]) });
    things.set('a', { n: 2 });
    things.set('b', { n: 3, audio: Buffer.from([4, 5]) });
    things.set('gone', { n: 4 });
    things.delete('gone');
    const account = accountFromSeed({ apiKey: KEY, userId: 'u', credits: 100 });
    store.accounts.set('u', account);
    const ledger = new Ledger(store);
    ledger.hold(store.accounts.get('u')!, 'credits', 30, 'ref-1', 'test');
    ledger.commit('ref-1');
    await store.close();

    const again = await PgliteStore.open(path);
    const back = again.collection<{ n: number; audio?: Buffer }>('things');
    expect([...back.values()].map((v) => v.n)).toEqual([3, 2]);
    expect(Buffer.isBuffer(back.get('b')!.audio)).toBe(true);
    expect([...back.get('b')!.audio!]).toEqual([4, 5]);
    expect(back.get('gone')).toBeUndefined();
    expect(again.accounts.get('u')!.credits).toBe(70);
    expect(again.ledger.get('ref-1')!.state).toBe('committed');
    expect(new Ledger(again).release('ref-1')).toBe(true);
    await again.close();
    const third = await PgliteStore.open(path);
    expect(third.ledger.get('ref-1')!.state).toBe('released');
    expect(third.accounts.get('u')!.credits).toBe(100);
    await third.close();
  });
});

async function serve(dataDir: string, accounts: string, port = 0): Promise<{ child: ChildProcess; config: ServiceConfig }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--engine', 'tone', '--port', String(port), '--data', dataDir, '--accounts', accounts, '--faults', '{"latencyMs":15}'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.resume();
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  const l = JSON.parse(line) as Record<string, string>;
  return { child, config: { apiKey: KEY, baseUrl: l['baseUrl']!, rootUrl: l['rootUrl']!, wsUrl: l['wsUrl']!, rtHttpUrl: l['rtHttpUrl']! } };
}

describe('voxpipe serve --data, killed with SIGKILL mid-request', () => {
  it('restarted on the same directory and port: the client resumes byte-exact, one charge per segment', { timeout: 120_000 }, async () => {
    const text = 'The first sentence is spoken before the kill. The second one is cut in the middle. The third comes after the restart.';
    const reference = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'pg' }] });
    let expected: Buffer;
    try {
      expected = (await speakText(serviceConfigOf(reference, KEY), text, { format: 'pcm', transport: 'realtime' })).audio;
    } finally {
      await reference.close();
    }

    const dataDir = join(dir, 'served');
    const accounts = join(dir, 'accounts.json');
    await writeFile(accounts, JSON.stringify([{ apiKey: KEY, userId: 'pg', credits: 1e6, apiQuota: 1e6 }]));
    const first = await serve(dataDir, accounts);
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
        restarted = new Promise<void>((resolve) => first.child.once('exit', () => resolve())).then(() => serve(dataDir, accounts, port));
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
    const store = await PgliteStore.open(dataDir);
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

describe('voxpipe serve --data, killed with SIGKILL mid-job', () => {
  it('restarted on the same directory: the accepted job ends succeeded, charged once, and its audio downloads', { timeout: 120_000 }, async () => {
    const dataDir = join(dir, 'jobs');
    const accounts = join(dir, 'accounts-jobs.json');
    await writeFile(accounts, JSON.stringify([{ apiKey: KEY, userId: 'pg', credits: 1e6, apiQuota: 1e6 }]));
    // 15 ms before every engine chunk: the job takes seconds, so the kill lands mid-job.
    const first = await serve(dataDir, accounts);
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

    const second = await serve(dataDir, accounts);
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

    const store = await PgliteStore.open(dataDir);
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
