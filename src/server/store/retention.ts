/**
 * Retention for a store that outlives its process (the CLI's data directory):
 * what a server keeps only to answer for a while is deleted once it is
 * older than its window, and the space it held is given back to the file
 * system (`PgliteStore.reclaim`: VACUUM FULL, CHECKPOINT, the write-ahead
 * log's spare segments removed).
 *
 * Kept whatever its age: accounts, the ledger (usage), voices and designs,
 * idempotency keys, webhook deliveries, and anything still running.
 * Dropped past the resume window (minutes): finished realtime requests with
 * the audio kept for their resume and manifest, by far the largest records.
 * Dropped past the retention (hours): stored audio and media files (sync
 * `cache: true` and job results), finished tasks (jobs), and the sync
 * `X-Request-Id` records.
 */
import type { PgliteStore } from './pglite.js';
import type { SqlDatabase } from './sql.js';
import type { Collection } from './types.js';

/** What one collection's records say about their age: the time they can be dropped after, or undefined to keep. */
type AgeOf = (record: Record<string, unknown>) => string | undefined;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A realtime request's journal, keyed by site, account and request id (realtime/request-store.ts). */
const REALTIME_REQUESTS = 'realtime-requests';
/** A realtime request's audio, keyed `[request key, segment id]`. */
const REALTIME_AUDIO = 'realtime-audio';

/** The collections retention applies to, and how old each record is. */
function ageRule(collection: string): AgeOf | undefined {
  if (collection === 'audio-files' || collection === 'media-files') return (r) => str(r['createdAt']);
  if (collection === REALTIME_REQUESTS) return finishedAt;
  if (collection === 'sync-tts-request-ids') return (r) => (r['state'] === 'in_progress' ? undefined : str(r['updatedAt']));
  // Tasks: once they ended (completedAt is set for every terminal state).
  if (collection.startsWith('tasks:')) return (r) => str(r['completedAt']) ?? undefined;
  return undefined;
}

/** When a realtime request finished, or undefined while it runs. */
function finishedAt(record: Record<string, unknown>): string | undefined {
  return record['state'] === 'running' ? undefined : str(record['updatedAt']);
}

/** How long what is pruned is kept. */
export interface RetentionWindows {
  /** Finished tasks, stored audio and media files, sync request ids (ms; 0: all that ended). */
  olderThanMs: number;
  /** Finished realtime requests and their audio (ms); the shorter of the two applies to them. */
  resumeWindowMs: number;
}

export interface PruneResult {
  /** Records deleted, per collection. */
  deleted: Record<string, number>;
  /** Their total. */
  total: number;
  /** The database's size on disk before and after (bytes, as PostgreSQL counts it: its tables, not the write-ahead log). */
  databaseBytesBefore: number;
  databaseBytesAfter: number;
}

type Entries<T> = Collection<T> & { entries(): IterableIterator<[string, T]> };

/**
 * Whether a finished realtime request is older than `resumeWindowMs`: the
 * daemon prunes as soon as one is, so its audio does not wait for the
 * next hourly run.
 */
export function resumeWindowPassed(store: PgliteStore, resumeWindowMs: number, now: number = Date.now()): boolean {
  for (const record of store.collection<Record<string, unknown>>(REALTIME_REQUESTS).values()) {
    const at = Date.parse(finishedAt(record) ?? '');
    if (Number.isFinite(at) && at <= now - resumeWindowMs) return true;
  }
  return false;
}

/**
 * Delete what is older than its window, then give the space back when
 * anything was deleted or `reclaim` says so (records rewritten or deleted
 * by the server since leave dead pages too). The caller owns the store.
 */
export async function pruneStore(store: PgliteStore, windows: RetentionWindows, options: { reclaim?: boolean; now?: number } = {}): Promise<PruneResult> {
  const now = options.now ?? Date.now();
  const cutoff = now - windows.olderThanMs;
  const realtimeCutoff = now - Math.min(windows.olderThanMs, windows.resumeWindowMs);
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
      if (Number.isFinite(ms) && ms <= (name === REALTIME_REQUESTS ? realtimeCutoff : cutoff) && collection.delete(key)) count(name);
    }
  }
  // A realtime request's audio goes with its request (and audio left by one deleted before).
  if (names.includes(REALTIME_AUDIO)) {
    const requests = store.collection<unknown>(REALTIME_REQUESTS);
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
  await store.flush();
  if (total > 0 || options.reclaim) await store.reclaim();
  const databaseBytesAfter = await store.maintain(databaseBytes);
  return { deleted, total, databaseBytesBefore, databaseBytesAfter };
}

async function databaseBytes(db: SqlDatabase): Promise<number> {
  const rows = (await db.query('select pg_database_size(current_database())::text as bytes')).rows as { bytes: string }[];
  return Number(rows[0]?.bytes ?? 0);
}
