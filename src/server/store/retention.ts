/**
 * Retention for a store that outlives its process (the CLI's data directory,
 * issue 25): what a server keeps only to answer for a while, audio above all,
 * is deleted once it is older than the retention, and the space it held is
 * given back to the file system (PostgreSQL keeps deleted rows' pages until a
 * VACUUM FULL rewrites the table, and write-ahead log segments until a
 * checkpoint lets them go).
 *
 * Kept whatever its age: accounts, the ledger (usage), voices and designs,
 * idempotency keys, webhook deliveries, and anything still running.
 * Dropped past the retention: stored audio and media files (sync `cache:
 * true` and job results), finished realtime requests with their audio,
 * finished tasks (jobs), and the sync `X-Request-Id` records.
 */
import type { SqlDatabase, SqlStore } from './sql.js';
import type { Collection } from './types.js';

/** What one collection's records say about their age: the time they can be dropped after, or undefined to keep. */
type AgeOf = (record: Record<string, unknown>) => string | undefined;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The collections retention applies to, and how old each record is. */
function ageRule(collection: string): AgeOf | undefined {
  if (collection === 'audio-files' || collection === 'media-files') return (r) => str(r['createdAt']);
  if (collection === 'realtime-requests') return (r) => (r['state'] === 'running' ? undefined : str(r['updatedAt']));
  if (collection === 'sync-tts-request-ids') return (r) => (r['state'] === 'in_progress' ? undefined : str(r['updatedAt']));
  // Tasks: once they ended (completedAt is set for every terminal state).
  if (collection.startsWith('tasks:')) return (r) => str(r['completedAt']) ?? undefined;
  return undefined;
}

/** A realtime request's audio, keyed `[request key, segment id]` (realtime/request-store.ts). */
const REALTIME_AUDIO = 'realtime-audio';

export interface PruneResult {
  /** Records deleted, per collection. */
  deleted: Record<string, number>;
  /** Their total. */
  total: number;
  /** The database's size on disk before and after (bytes, as PostgreSQL counts it). */
  databaseBytesBefore: number;
  databaseBytesAfter: number;
}

type Entries<T> = Collection<T> & { entries(): IterableIterator<[string, T]> };

/**
 * Delete what is older than `olderThanMs` (0: everything retention applies
 * to that is finished), then give the space back. The caller owns the store.
 */
export async function pruneStore(store: SqlStore, olderThanMs: number, now: number = Date.now()): Promise<PruneResult> {
  const cutoff = now - olderThanMs;
  const databaseBytesBefore = await store.maintain(databaseBytes);
  const names = await store.maintain(async (db) => ((await db.query('select distinct collection from entries where value is not null')).rows as { collection: string }[]).map((r) => r.collection));
  const deleted: Record<string, number> = {};
  const count = (name: string) => (deleted[name] = (deleted[name] ?? 0) + 1);
  for (const name of names) {
    const rule = ageRule(name);
    if (!rule) continue;
    const collection = store.collection<Record<string, unknown>>(name) as Entries<Record<string, unknown>>;
    for (const [key, record] of [...collection.entries()]) {
      const at = rule(record);
      if (at === undefined) continue;
      const ms = Date.parse(at);
      if (Number.isFinite(ms) && ms <= cutoff && collection.delete(key)) count(name);
    }
  }
  // A realtime request's audio goes with its request (and audio left by one deleted before).
  if (names.includes(REALTIME_AUDIO)) {
    const requests = store.collection<unknown>('realtime-requests');
    const audio = store.collection<Buffer>(REALTIME_AUDIO) as Entries<Buffer>;
    for (const [key] of [...audio.entries()]) {
      let requestKey: unknown;
      try {
        requestKey = (JSON.parse(key) as unknown[])[0];
      } catch {
        continue;
      }
      if (typeof requestKey === 'string' && requests.get(requestKey) === undefined && audio.delete(key)) count(REALTIME_AUDIO);
    }
  }
  const total = Object.values(deleted).reduce((a, b) => a + b, 0);
  if (total > 0) await store.maintain(reclaim);
  await store.flush();
  const databaseBytesAfter = await store.maintain(databaseBytes);
  return { deleted, total, databaseBytesBefore, databaseBytesAfter };
}

/** Rewrite the table without its dead rows, then let the write-ahead log go (each its own statement: VACUUM runs outside a transaction). */
export async function reclaim(db: SqlDatabase): Promise<void> {
  await db.query('vacuum full entries');
  await db.query('checkpoint');
}

async function databaseBytes(db: SqlDatabase): Promise<number> {
  const rows = (await db.query('select pg_database_size(current_database())::text as bytes')).rows as { bytes: string }[];
  return Number(rows[0]?.bytes ?? 0);
}
