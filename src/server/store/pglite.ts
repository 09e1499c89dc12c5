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
import { mkdir } from 'node:fs/promises';
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

export class PgliteStore extends SqlStore {
  /** Open (creating if needed) the store in `dir` and load every record. */
  static async open(dir: string): Promise<PgliteStore> {
    await mkdir(dir, { recursive: true });
    const unlock = await lockDataDir(dir);
    let db: SqlDatabase | undefined;
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      db = (await PGlite.create(databaseDir(dir))) as unknown as SqlDatabase;
      const store = new PgliteStore(db, unlock);
      await store.load();
      return store;
    } catch (err) {
      await db?.close().catch(() => undefined);
      await unlock();
      throw err;
    }
  }
}
