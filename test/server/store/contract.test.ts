/**
 * The store contract: what the server may assume of any Store,
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
import { InsufficientBalance, Ledger } from '../../../src/server/ledger.js';
import { MemoryStore } from '../../../src/server/store/memory.js';
import { PgliteStore } from '../../../src/server/store/pglite.js';
import { PostgresStore } from '../../../src/server/store/postgres.js';
import type { SqlStore } from '../../../src/server/store/sql.js';
import type { Store } from '../../../src/server/store/types.js';
import { CopyingStore } from './copying-store.js';
import { DATABASE_URL, available as postgresAvailable } from '../../helpers/postgres.js';


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
    expect((await ledger.hold(read(), 'credits', 30, 'ref-1', 'test')).charged).toBe(true);
    expect((await ledger.hold(read(), 'credits', 30, 'ref-1', 'test')).charged).toBe(false);
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

  it.runIf(available)('the ledger: holds are atomic with their balance check — concurrent holds charge exactly what fits, a short one is refused whole', async () => {
    const opened = await engine.fresh();
    const store = opened.store;
    store.accounts.set('u', accountFromSeed({ apiKey: 'sk-contract-tx', userId: 'u', credits: 7, apiQuota: 3 }));
    const ledger = new Ledger(store);
    const read = () => store.accounts.get('u')!;
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => ledger.hold(read(), 'credits', 1, `tx-${i}`, 'test').then((r) => (r.charged ? 'charged' : 'existing'), (e: unknown) => (e instanceof InsufficientBalance ? `short:${e.available}` : String(e)))),
    );
    expect(outcomes.filter((o) => o === 'charged')).toHaveLength(7);
    expect(outcomes.filter((o) => o === 'short:0')).toHaveLength(5);
    expect(read().credits).toBe(0);
    // A hold larger than the balance takes nothing and records nothing.
    await expect(ledger.hold(read(), 'quota', 4, 'too-big', 'test')).rejects.toMatchObject({ needed: 4, available: 3 });
    expect(read().apiQuota).toBe(3);
    expect(store.ledger.get('too-big')).toBeUndefined();
    // One refId held at once from several calls: charged once.
    const same = await Promise.all([1, 2, 3].map(() => ledger.hold(read(), 'quota', 2, 'same', 'test')));
    expect(same.filter((r) => r.charged)).toHaveLength(1);
    expect(read().apiQuota).toBe(1);
    // Released twice: refunded once; what a reopened store holds agrees.
    expect([ledger.release('same'), ledger.release('same')]).toEqual([true, false]);
    ledger.commit('tx-0');
    await store.flush?.();
    expect(read().apiQuota).toBe(3);
    if (opened.reopen) {
      await opened.close();
      const again = await opened.reopen();
      expect(again.accounts.get('u')).toMatchObject({ credits: 0, apiQuota: 3 });
      expect(again.ledger.get('same')!.state).toBe('released');
      expect(again.ledger.get('tx-0')!.state).toBe('committed');
      expect([...again.ledger.values()].filter((e) => e.state !== 'released')).toHaveLength(7);
      await again.close();
    } else await opened.close();
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
  it.runIf(available)('keeps records, their order, Buffers and ledger states across a close and a reopen', { timeout: 60_000 }, async () => {
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
    await ledger.hold(store.accounts.get('u')!, 'credits', 30, 'ref-1', 'test');
    ledger.commit('ref-1');
    await store.flush();
    if (engine === pglite) {
      // While it is open, a second process (here: a second open) is refused with a typed error.
      const refused = await opened.reopen!().then((s) => s.close().then(() => undefined), (e: unknown) => e);
      expect(refused).toMatchObject({ code: 'data_dir_in_use', kind: 'local' });
    }
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

/**
 * Several processes on one PostgreSQL store (here: several opens of one
 * schema, each its own connection, as each process has).
 */
describe('shared store contract: PostgreSQL' + (DATABASE_URL ? '' : ' (skipped: no PostgreSQL reachable; set VOXPIPE_TEST_DATABASE_URL)'), () => {
  const available = postgresAvailable;

  it.runIf(available)('what one process wrote, deleted or changed the other reads after sync, in creation order', { timeout: 60_000 }, async () => {
    const a = (await postgres.fresh()).store as SqlStore;
    const b = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
    try {
      const fromA = a.collection<{ n: number; audio?: Buffer }>('things');
      fromA.set('x', { n: 1, audio: Buffer.from([9]) });
      fromA.set('y', { n: 2 });
      await a.flush();
      await b.sync();
      const inB = b.collection<{ n: number; audio?: Buffer }>('things');
      expect([...inB.values()].map((v) => v.n)).toEqual([1, 2]);
      expect([...inB.get('x')!.audio!]).toEqual([9]);
      fromA.delete('x');
      fromA.set('y', { n: 3 });
      await a.flush();
      await b.sync();
      expect(inB.get('x')).toBeUndefined();
      expect(inB.get('y')).toEqual({ n: 3 });
      // And back: B's change reaches A; A's own writes do not come back over newer local ones.
      inB.set('z', { n: 4 });
      await b.flush();
      fromA.set('y', { n: 5 });
      await a.sync();
      expect(fromA.get('z')).toEqual({ n: 4 });
      expect(fromA.get('y')).toEqual({ n: 5 });
      await a.flush();
      await b.sync();
      expect(inB.get('y')).toEqual({ n: 5 });
      // A sync does not wait for this process's own writes: a record it is
      // writing keeps its value when an older one of another process is read.
      inB.set('w', { n: 6 });
      await b.flush();
      fromA.set('w', { n: 7 });
      await a.sync();
      expect(fromA.get('w')).toEqual({ n: 7 });
      await a.flush();
      await b.sync();
      expect(inB.get('w')).toEqual({ n: 7 });
      // The tombstone of 'x' stays while a process may still have to read it...
      const third = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
      await third.close();
      expect(await tombstones(schemaOf(a))).toBe(1);
    } finally {
      await b.close();
      await a.close();
    }
    // ...and goes when a process opens the store with no other one running.
    const alone = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
    expect(alone.collection('things').get('x')).toBeUndefined();
    expect(await tombstones(schemaOf(a))).toBe(0);
    await alone.close();
  });

  it.runIf(available)('two processes charging one account at once: every charge counts, no refund is given twice', { timeout: 60_000 }, async () => {
    const a = (await postgres.fresh()).store as SqlStore;
    a.accounts.set('u', accountFromSeed({ apiKey: 'sk-contract-shared', userId: 'u', credits: 10_000 }));
    await a.flush();
    const b = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
    try {
      const ledgers = [new Ledger(a), new Ledger(b)];
      const stores = [a, b];
      // Interleaved: each process charges from the balance it last saw, and writes while the other does.
      for (let i = 0; i < 40; i++) {
        const which = i % 2;
        void ledgers[which]!.hold(stores[which]!.accounts.get('u')!, 'credits', 7, `ref-${i}`, 'test');
        if (i % 5 === 0) await stores[1 - which]!.flush();
      }
      await Promise.all([a.flush(), b.flush()]);
      await Promise.all([a.sync(), b.sync()]);
      expect(a.accounts.get('u')!.credits).toBe(10_000 - 40 * 7);
      expect(b.accounts.get('u')!.credits).toBe(10_000 - 40 * 7);
      // A refund given by one process: the other, after sync, sees it released and gives nothing.
      expect(ledgers[0]!.release('ref-1')).toBe(true);
      await a.flush();
      await b.sync();
      expect(ledgers[1]!.release('ref-1')).toBe(false);
      expect(b.accounts.get('u')!.credits).toBe(10_000 - 39 * 7);
      const third = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
      expect(third.accounts.get('u')!.credits).toBe(10_000 - 39 * 7);
      expect([...third.ledger.values()].filter((e) => e.state !== 'released')).toHaveLength(39);
      await third.close();
      // Both release one hold at once, neither having read the other's: the database refunds it once,
      // and the process whose release came second has its view corrected.
      expect([ledgers[0]!.release('ref-2'), ledgers[1]!.release('ref-2')]).toEqual([true, true]);
      await Promise.all([a.flush(), b.flush()]);
      await Promise.all([a.sync(), b.sync()]);
      expect(a.accounts.get('u')!.credits).toBe(10_000 - 38 * 7);
      expect(b.accounts.get('u')!.credits).toBe(10_000 - 38 * 7);
      // A commit racing a release: the release stands on both.
      ledgers[0]!.commit('ref-3');
      ledgers[1]!.release('ref-3');
      await Promise.all([a.flush(), b.flush()]);
      await Promise.all([a.sync(), b.sync()]);
      const fourth = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
      expect(fourth.accounts.get('u')!.credits).toBe(10_000 - 37 * 7);
      expect(fourth.ledger.get('ref-3')!.state).toBe('released');
      expect(fourth.ledger.get('ref-2')!.state).toBe('released');
      await fourth.close();
    } finally {
      await b.close();
      await a.close();
    }
  });

  it.runIf(available)('a claim is held by one process until it lets go or ends; a process is alive while its store is open', { timeout: 60_000 }, async () => {
    const a = (await postgres.fresh()).store as SqlStore;
    const b = await PostgresStore.open(DATABASE_URL!, { schema: schemaOf(a) });
    try {
      const release = await a.processes!.claim('task:1');
      expect(release).toBeTypeOf('function');
      expect(await a.processes!.claim('task:1')).toBeUndefined(); // not twice in one process either
      expect(await b.processes!.claim('task:1')).toBeUndefined();
      await release!();
      const inB = await b.processes!.claim('task:1');
      expect(inB).toBeTypeOf('function');
      expect(await a.processes!.alive(b.processes!.ownerId)).toBe(true);
      expect(await b.processes!.alive(b.processes!.ownerId)).toBe(true);
      // B ends holding its claim: the claim and B's liveness end with it.
      await b.close();
      expect(await a.processes!.alive(b.processes!.ownerId)).toBe(false);
      expect(await a.processes!.claim('task:1')).toBeTypeOf('function');
    } finally {
      await b.close();
      await a.close();
    }
  });
});

/** Deleted records still kept for other processes to read, in a schema. */
async function tombstones(schema: string): Promise<number> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    const rows = (await admin.query(`select count(*)::int as n from ${schema}.entries where value is null`)).rows as { n: number }[];
    return rows[0]!.n;
  } finally {
    await admin.end();
  }
}

/** The database schema a PostgreSQL test store was opened on. */
function schemaOf(store: SqlStore): string {
  return (store as PostgresStore).schema;
}
