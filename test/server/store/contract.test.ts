/**
 * The store contract (issue 15, first part): what the server may assume of
 * any Store, checked on the in-memory store and on a store that behaves
 * like a database (copies in and out, `copying-store.ts`). The point of the
 * second: every change the server makes must be written back with `set`,
 * or a SQL store would lose it.
 */
import { describe, expect, it } from 'vitest';
import { accountFromSeed } from '../../../src/server/app.js';
import { Ledger } from '../../../src/server/ledger.js';
import { MemoryStore } from '../../../src/server/store/memory.js';
import type { Store } from '../../../src/server/store/types.js';
import { CopyingStore } from './copying-store.js';

const STORES: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['copying (database-like)', () => new CopyingStore()],
];

describe.each(STORES)('store contract: %s', (_name, make) => {
  it('collections keep what was set, in creation order, and forget what was deleted', () => {
    const c = make().collection<{ n: number }>('things');
    c.set('a', { n: 1 });
    c.set('b', { n: 2 });
    c.set('a', { n: 3 });
    expect(c.get('a')).toEqual({ n: 3 });
    expect([...c.values()].map((v) => v.n)).toEqual([3, 2]);
    expect(c.delete('b')).toBe(true);
    expect(c.delete('b')).toBe(false);
    expect(c.size).toBe(1);
  });

  it('the ledger: a hold charges once per refId, a commit sticks, a release refunds exactly once', () => {
    const store = make();
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
  });
});

describe('the server on a database-like store (every change written back)', () => {
  it('realtime (with a resume), sync TTS and a TTS job work, each charged once', async () => {
    const { startServer } = await import('../../../src/server/index.js');
    const { serviceConfigOf } = await import('../../../src/service.js');
    const { createSpeechStream } = await import('../../../src/speech.js');
    const { createClient } = await import('../../../src/http/index.js');
    const server = await startServer({ engine: 'tone', store: new CopyingStore(), accounts: [{ apiKey: 'sk-copying-store', userId: 'cs' }] });
    try {
      const config = serviceConfigOf(server, 'sk-copying-store');
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
    }
  });
});
