/**
 * The store contract (issue 15): what the server may assume of any Store,
 * on every engine: in memory, a database-like test store (copies in and
 * out, `copying-store.ts`: every change must be written back with `set`, or
 * a SQL store would lose it), PGlite, and PostgreSQL.
 *
 * PostgreSQL runs where VOXPIPE_TEST_DATABASE_URL names one (`.ci/run` sets
 * it up); elsewhere its block is skipped, and its title says why.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accountFromSeed } from '../../../src/server/app.js';
import { Ledger } from '../../../src/server/ledger.js';
import { MemoryStore } from '../../../src/server/store/memory.js';
import { PgliteStore } from '../../../src/server/store/pglite.js';
import { PostgresStore } from '../../../src/server/store/postgres.js';
import type { SqlStore } from '../../../src/server/store/sql.js';
import type { Store } from '../../../src/server/store/types.js';
import { CopyingStore } from './copying-store.js';

const DATABASE_URL = process.env['VOXPIPE_TEST_DATABASE_URL'];

/** One engine: how to open a fresh store, and (for a persistent one) the same store again. */
interface Engine {
  fresh(): Promise<{ store: Store; reopen?: () => Promise<SqlStore>; close(): Promise<void> }>;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const memory: Engine = { fresh: async () => ({ store: new MemoryStore(), close: async () => undefined }) };
const copying: Engine = { fresh: async () => ({ store: new CopyingStore(), close: async () => undefined }) };
const pglite: Engine = {
  async fresh() {
    const dir = await mkdtemp(join(tmpdir(), 'voxpipe-contract-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const store = await PgliteStore.open(dir);
    return { store, reopen: () => PgliteStore.open(dir), close: () => store.close() };
  },
};
const postgres: Engine = {
  async fresh() {
    // A schema of its own per store, dropped at the end.
    const schema = `voxpipe_test_${randomBytes(6).toString('hex')}`;
    cleanups.push(async () => {
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });
    const store = await PostgresStore.open(DATABASE_URL!, { schema });
    return { store, reopen: () => PostgresStore.open(DATABASE_URL!, { schema }), close: () => store.close() };
  },
};

const ENGINES: [string, Engine, boolean][] = [
  ['memory', memory, true],
  ['copying (database-like)', copying, true],
  ['PGlite', pglite, true],
  [DATABASE_URL ? 'PostgreSQL' : 'PostgreSQL (skipped: no PostgreSQL reachable; set VOXPIPE_TEST_DATABASE_URL=postgres://user:password@host:port/database)', postgres, DATABASE_URL !== undefined],
];

describe.each(ENGINES)('store contract: %s', (_name, engine, available) => {
  it.runIf(available)('collections keep what was set, in creation order, and forget what was deleted', async () => {
    const opened = await engine.fresh();
    const c = opened.store.collection<{ n: number }>('things');
    c.set('a', { n: 1 });
    c.set('b', { n: 2 });
    c.set('a', { n: 3 });
    expect(c.get('a')).toEqual({ n: 3 });
    expect([...c.values()].map((v) => v.n)).toEqual([3, 2]);
    expect(c.delete('b')).toBe(true);
    expect(c.delete('b')).toBe(false);
    expect(c.size).toBe(1);
    await opened.close();
  });

  it.runIf(available)('the ledger: a hold charges once per refId, a commit sticks, a release refunds exactly once', async () => {
    const opened = await engine.fresh();
    const store = opened.store;
    const account = accountFromSeed({ apiKey: 'sk-contract', userId: 'u', credits: 100, apiQuota: 10 });
    store.accounts.set(account.userId, account);
    const ledger = new Ledger(store);
    const read = () => store.accounts.get('u')!;
    expect(ledger.hold(read(), 'credits', 30, 'ref-1', 'test').charged).toBe(true);
    expect(ledger.hold(read(), 'credits', 30, 'ref-1', 'test').charged).toBe(false);
    expect(read().credits).toBe(70);
    ledger.commit('ref-1');
    expect(store.ledger.get('ref-1')!.state).toBe('committed');
    expect(ledger.release('ref-1')).toBe(true);
    expect(ledger.release('ref-1')).toBe(false);
    expect(store.ledger.get('ref-1')!.state).toBe('released');
    expect(read().credits).toBe(100);
    expect(ledger.totalCharged('u', 'credits')).toBe(0);
    await opened.close();
  });

  it.runIf(available)('the server on it: realtime (with a resume), sync TTS and a TTS job work, each charged once', { timeout: 60_000 }, async () => {
    const { startServer } = await import('../../../src/server/index.js');
    const { serviceConfigOf } = await import('../../../src/service.js');
    const { createSpeechStream } = await import('../../../src/speech.js');
    const { createClient } = await import('../../../src/http/index.js');
    const opened = await engine.fresh();
    const server = await startServer({ engine: 'tone', store: opened.store, accounts: [{ apiKey: 'sk-store-contract', userId: 'cs' }] });
    try {
      const config = serviceConfigOf(server, 'sk-store-contract');
      const speak = async (transport: 'realtime' | 'sync') => {
        const speech = await createSpeechStream(config, { format: 'pcm', transport });
        speech.end('A database keeps only what is written back. Every time.');
        let bytes = 0;
        for await (const c of speech) bytes += (c as Buffer).length;
        return { bytes, requestId: speech.summary().requestId };
      };
      const plain = await speak('realtime');
      server.faults.set({ realtimeClose: { afterAudioFrames: 2, code: 1012 } });
      const resumed = await speak('realtime');
      expect(resumed.bytes).toBe(plain.bytes);
      const sync = await speak('sync');
      expect(sync.bytes).toBe(plain.bytes);
      const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, rootUrl: config.rootUrl });
      const job = await client.jobs.create({ text: 'A job on a database-like store.', voiceId: (await client.voices.list())[0]!.voiceId });
      const done = await client.jobs.wait(job.id, { intervalMs: 20 });
      expect(done.status).toBe('succeeded');
      // One live charge per realtime segment of the resumed request: the commit was written back.
      const charges = server.ctx.ledger.entriesOf('cs').filter((e) => e.refId.includes(resumed.requestId) && e.state !== 'released');
      expect(charges.length).toBeGreaterThan(0);
      expect(new Set(charges.map((e) => e.refId)).size).toBe(charges.length);
      expect(charges.every((e) => e.state === 'committed')).toBe(true);
    } finally {
      await server.close();
      await opened.close();
    }
  });
});

describe.each(ENGINES.filter(([, engine]) => engine === pglite || engine === postgres))('persistent store contract: %s', (_name, engine, available) => {
  it.runIf(available)('keeps records, their order, Buffers and ledger states across a close and a reopen; one process at a time', { timeout: 60_000 }, async () => {
    const opened = await engine.fresh();
    const store = opened.store as SqlStore;
    const things = store.collection<{ n: number; audio?: Buffer }>('things');
    things.set('b', { n: 1, audio: Buffer.from([1, 2, 3]) });
    things.set('a', { n: 2 });
    things.set('b', { n: 3, audio: Buffer.from([4, 5]) });
    things.set('gone', { n: 4 });
    things.delete('gone');
    // The server's composite keys hold NUL (`user\u0000key`); a text column cannot, so keys are escaped.
    const odd = 'user\u0000key \\0 back\\slash';
    const oddValues = store.collection<{ text: string }>('odd');
    oddValues.set(odd, { text: 'nul \u0000 inside' });
    oddValues.set('plain', { text: 'x' });
    oddValues.delete('plain');
    store.accounts.set('u', accountFromSeed({ apiKey: 'sk-contract-reopen', userId: 'u', credits: 100 }));
    const ledger = new Ledger(store);
    ledger.hold(store.accounts.get('u')!, 'credits', 30, 'ref-1', 'test');
    ledger.commit('ref-1');
    await store.flush();
    // While it is open, a second process (here: a second open) is refused with a typed error.
    const refused = await opened.reopen!().then((s) => s.close().then(() => undefined), (e: unknown) => e);
    expect(refused).toMatchObject({ code: expect.stringMatching(/^(data_dir|database)_in_use$/), kind: 'local' });
    await opened.close();

    const again = await opened.reopen!();
    const back = again.collection<{ n: number; audio?: Buffer }>('things');
    expect([...back.values()].map((v) => v.n)).toEqual([3, 2]);
    expect(Buffer.isBuffer(back.get('b')!.audio)).toBe(true);
    expect([...back.get('b')!.audio!]).toEqual([4, 5]);
    expect(back.get('gone')).toBeUndefined();
    const oddBack = again.collection<{ text: string }>('odd');
    expect([...oddBack.values()]).toEqual([{ text: 'nul \u0000 inside' }]);
    expect(oddBack.get(odd)).toEqual({ text: 'nul \u0000 inside' });
    expect(again.accounts.get('u')!.credits).toBe(70);
    expect(again.ledger.get('ref-1')!.state).toBe('committed');
    expect(new Ledger(again).release('ref-1')).toBe(true);
    await again.close();
    const third = await opened.reopen!();
    expect(third.ledger.get('ref-1')!.state).toBe('released');
    expect(third.accounts.get('u')!.credits).toBe(100);
    expect(new Ledger(third).release('ref-1')).toBe(false);
    await third.close();
  });
});
