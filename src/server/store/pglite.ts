/**
 * The store on PGlite (PostgreSQL compiled to WebAssembly, a data directory
 * on disk, no native build): the CLI's embedded default and
 * `voxpipe serve --data DIR`. The SQL and the write-through cache are
 * `sql.ts`, shared with PostgreSQL.
 *
 * One process per data directory: PGlite is single-user, so `open` takes the
 * directory's lock (`lock.ts`) and fails with `data_dir_in_use` while another
 * live process holds it.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { lockDataDir } from './lock.js';
import { SqlStore, type SqlDatabase } from './sql.js';

/**
 * The database lives in `DIR/pg`, next to the lock (`DIR/voxpipe.lock`):
 * PostgreSQL's initdb wants a directory of its own.
 */
function databaseDir(dir: string): string {
  return join(dir, 'pg');
}

/** Whether `dir` already holds a store (creating one takes a few seconds the first time). */
export function hasStore(dir: string): boolean {
  return existsSync(join(databaseDir(dir), 'PG_VERSION'));
}

/** A write-ahead log segment's file name: timeline, then the segment's number (16 hex digits). */
const WAL_SEGMENT = /^([0-9A-F]{8})([0-9A-F]{16})$/;

export class PgliteStore extends SqlStore {
  /** The database's write-ahead log (`DIR/pg/pg_wal`). */
  readonly #walDir: string;

  private constructor(db: SqlDatabase, release: () => Promise<void>, dir: string) {
    super(db, release);
    this.#walDir = join(databaseDir(dir), 'pg_wal');
  }

  /** Open (creating if needed) the store in `dir` and load every record. */
  static async open(dir: string): Promise<PgliteStore> {
    await mkdir(dir, { recursive: true });
    const unlock = await lockDataDir(dir);
    let db: SqlDatabase | undefined;
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      db = (await PGlite.create(databaseDir(dir))) as unknown as SqlDatabase;
      const store = new PgliteStore(db, unlock, dir);
      await store.load();
      return store;
    } catch (err) {
      await db?.close().catch(() => undefined);
      await unlock();
      throw err;
    }
  }

  /** Bytes of the write-ahead log on disk. */
  async walBytes(): Promise<number> {
    let total = 0;
    for (const name of await readdir(this.#walDir).catch(() => [] as string[])) {
      if (WAL_SEGMENT.test(name)) total += (await stat(join(this.#walDir, name)).catch(() => ({ size: 0 }))).size;
    }
    return total;
  }

  /**
   * Give the write-ahead log's space back: a checkpoint (PGlite runs no
   * checkpointer of its own, so without one the log only grows), then the
   * segments past the one being written are removed. A checkpoint renames
   * the segments it no longer needs to future names and keeps them for
   * reuse, up to PGlite's built-in `min_wal_size` (80 MB) or what the
   * busiest stretch wrote: those files hold no record, PostgreSQL creates a
   * segment it does not find, and this process is the only one writing
   * (between two queries of its queue), so removing them is safe. The
   * segment after the current one stays, in case the shutdown record
   * crosses into it.
   */
  checkpoint(): Promise<void> {
    return this.maintain(async (db) => {
      await db.query('checkpoint');
      const rows = (await db.query('select pg_walfile_name(pg_current_wal_insert_lsn()) as name')).rows as { name: string }[];
      const current = WAL_SEGMENT.exec(rows[0]?.name ?? '');
      if (!current) return;
      const keepUpTo = BigInt(`0x${current[2]}`) + 1n;
      for (const name of await readdir(this.#walDir).catch(() => [] as string[])) {
        const segment = WAL_SEGMENT.exec(name);
        if (segment && segment[1] === current[1] && BigInt(`0x${segment[2]}`) > keepUpTo) await unlink(join(this.#walDir, name)).catch(() => undefined);
      }
    });
  }

  /**
   * Give back the space of deleted and rewritten records: PostgreSQL keeps
   * their pages until VACUUM FULL rewrites the table (and PGlite runs no
   * autovacuum), then the write-ahead log that rewrite wrote
   * (`checkpoint`). It holds the database for as long as the rewrite takes
   * (well under a second for a table of tens of megabytes).
   */
  async reclaim(): Promise<void> {
    await this.maintain((db) => db.query('vacuum full entries'));
    await this.checkpoint();
  }
}
