/**
 * A PGlite store gives its disk back (`PgliteStore.reclaim`, `checkpoint`;
 * `pruneStore` in retention.ts): PGlite runs no checkpointer and keeps the
 * write-ahead log segments a checkpoint frees for reuse, so without them a
 * store that once held a lot stays that size. After the space is given
 * back, the store reopens with every record that was kept.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteStore } from '../../../src/server/store/pglite.js';
import { pruneStore } from '../../../src/server/store/retention.js';

const MiB = 1_048_576;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-reclaim-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bytesUnder(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await bytesUnder(join(path, entry));
  return total;
}

describe('a PGlite store gives its disk back', () => {
  it('a finished request past its resume window goes, and the directory, write-ahead log included, is back to its size before it', { timeout: 120_000 }, async () => {
    const store = await PgliteStore.open(dir);
    try {
      store.collection<{ n: number }>('voices').set('kept', { n: 1 });
      await store.flush();
      await store.reclaim();
      const before = await bytesUnder(dir);
      const walBefore = await store.walBytes();

      // A finished realtime request with 40 MiB of audio kept for its resume, written a segment at a time.
      const ended = new Date(Date.now() - 60_000).toISOString();
      const requestKey = JSON.stringify(['site', 'user', 'req-1']);
      store.collection('realtime-requests').set(requestKey, { state: 'completed', updatedAt: ended, segments: [] });
      for (let i = 0; i < 40; i++) {
        store.collection<Buffer>('realtime-audio').set(JSON.stringify([requestKey, `seg-${i}`]), Buffer.alloc(MiB, i));
        await store.flush();
      }
      expect(await store.walBytes()).toBeGreaterThan(walBefore + 32 * MiB);
      expect(await bytesUnder(dir)).toBeGreaterThan(before + 40 * MiB);

      // Within the retention (24 h) but past the resume window (30 s).
      const result = await pruneStore(store, { olderThanMs: 24 * 3_600_000, resumeWindowMs: 30_000 });
      expect(result.deleted).toEqual({ 'realtime-requests': 1, 'realtime-audio': 40 });
      expect(await store.walBytes()).toBeLessThanOrEqual(walBefore + MiB);
      expect(await bytesUnder(dir)).toBeLessThanOrEqual(before + MiB);
    } finally {
      await store.close();
    }
    const reopened = await PgliteStore.open(dir);
    try {
      expect(reopened.collection('voices').get('kept')).toEqual({ n: 1 });
      expect(reopened.collection('realtime-audio').size).toBe(0);
      reopened.collection<{ n: number }>('voices').set('after', { n: 2 });
      await reopened.flush();
    } finally {
      await reopened.close();
    }
  });
});
