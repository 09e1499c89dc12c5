/**
 * A persistent store on PGlite (PostgreSQL compiled to WebAssembly, a data
 * directory on disk, no native build): `voxpipe serve --data DIR`.
 *
 * The server's `Store` interface is synchronous, so this is a write-through
 * cache: every record is loaded into memory when the store opens, reads are
 * served from memory, and every `set` and `delete` is written to one table
 * (`entries`: collection, key, JSON value) in order, in the background.
 * `flush()` waits for the writes; `close()` flushes and closes the database.
 * A process killed between a change and its write loses that change (the
 * last few milliseconds); everything written before is there on restart, and
 * the realtime module marks the requests the dead process was generating
 * `failed_retryable` (`recoverOrphans`).
 *
 * One process per data directory: PGlite is single-user, so `open` takes the
 * directory's lock (`lock.ts`) and fails with `data_dir_in_use` while another
 * live process holds it. Several processes on one service need PostgreSQL.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Account, Collection, LedgerEntry, Store } from './types.js';
import { MemoryCollection } from './memory.js';
import { lockDataDir } from './lock.js';

/** Creation order survives a restart (`seq`), as the in-memory store keeps it; an update keeps a record's place. */
/** What goes into the JSON column: Buffers as `{ "$buffer": base64 }`. */
function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    if (Buffer.isBuffer(raw)) return { $buffer: raw.toString('base64') };
    return v;
  });
}

function decode(text: string): unknown {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && typeof (v as { $buffer?: unknown }).$buffer === 'string' && Object.keys(v).length === 1) {
      return Buffer.from((v as { $buffer: string }).$buffer, 'base64');
    }
    return v;
  });
}

interface Database {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  exec(sql: string): Promise<unknown>;
  close(): Promise<void>;
}

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

const ACCOUNTS = 'accounts';
const LEDGER = 'ledger';
const SCHEMA = `
  create table if not exists entries (
    seq bigint generated always as identity,
    collection text not null,
    key text not null,
    value text not null,
    primary key (collection, key)
  );
  create table if not exists schema_version (version integer not null);
`;
const SCHEMA_VERSION = 1;

class PersistentCollection<T> implements Collection<T> {
  readonly #memory = new MemoryCollection<T>();
  constructor(private readonly name: string, private readonly write: (sql: string, params: unknown[]) => void) {}

  load(key: string, value: T): void {
    this.#memory.set(key, value);
  }
  get(key: string): T | undefined {
    return this.#memory.get(key);
  }
  set(key: string, value: T): void {
    this.#memory.set(key, value);
    this.write('insert into entries (collection, key, value) values ($1, $2, $3) on conflict (collection, key) do update set value = excluded.value', [this.name, key, encode(value)]);
  }
  delete(key: string): boolean {
    const had = this.#memory.delete(key);
    if (had) this.write('delete from entries where collection = $1 and key = $2', [this.name, key]);
    return had;
  }
  values(): IterableIterator<T> {
    return this.#memory.values();
  }
  get size(): number {
    return this.#memory.size;
  }
}

export class PgliteStore implements Store {
  readonly accounts: PersistentCollection<Account>;
  readonly ledger: PersistentCollection<LedgerEntry>;
  readonly #collections = new Map<string, PersistentCollection<unknown>>();
  readonly #db: Database;
  /** Queues one statement after the ones before it (writes land in the order the changes were made). */
  readonly #write: (sql: string, params: unknown[]) => void;
  #writes: Promise<void> = Promise.resolve();
  #failed: unknown;

  readonly #unlock: () => Promise<void>;

  private constructor(db: Database, unlock: () => Promise<void>) {
    this.#db = db;
    this.#unlock = unlock;
    const write = (sql: string, params: unknown[]) => {
      this.#writes = this.#writes.then(
        () => this.#db.query(sql, params).then(() => undefined),
      ).catch((err: unknown) => {
        this.#failed ??= err;
      });
    };
    this.#write = write;
    this.accounts = new PersistentCollection<Account>(ACCOUNTS, write);
    this.ledger = new PersistentCollection<LedgerEntry>(LEDGER, write);
  }

  /** Open (creating if needed) the store in `dir` and load every record. */
  static async open(dir: string): Promise<PgliteStore> {
    await mkdir(dir, { recursive: true });
    const unlock = await lockDataDir(dir);
    let db: Database | undefined;
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      db = (await PGlite.create(databaseDir(dir))) as unknown as Database;
      await db.exec(SCHEMA);
      const version = (await db.query('select version from schema_version')).rows as { version: number }[];
      if (version.length === 0) await db.query('insert into schema_version (version) values ($1)', [SCHEMA_VERSION]);
      const store = new PgliteStore(db, unlock);
      const rows = (await db.query('select collection, key, value from entries order by seq')).rows as { collection: string; key: string; value: string }[];
      for (const row of rows) store.#collectionOf(row.collection).load(row.key, decode(row.value));
      return store;
    } catch (err) {
      await db?.close().catch(() => undefined);
      await unlock();
      throw err;
    }
  }

  #collectionOf(name: string): PersistentCollection<unknown> {
    if (name === ACCOUNTS) return this.accounts as PersistentCollection<unknown>;
    if (name === LEDGER) return this.ledger as PersistentCollection<unknown>;
    let c = this.#collections.get(name);
    if (!c) this.#collections.set(name, (c = new PersistentCollection<unknown>(name, this.#write)));
    return c;
  }

  collection<T>(name: string): Collection<T> {
    return this.#collectionOf(name) as Collection<T>;
  }

  /** Wait until every change so far is on disk; throws the first write error, if any. */
  async flush(): Promise<void> {
    await this.#writes;
    if (this.#failed !== undefined) throw this.#failed;
  }

  #closed: Promise<void> | undefined;

  /** Flush, close the database and release the directory (once; later calls wait for the first). */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#writes;
      await this.#db.close();
      await this.#unlock();
    })();
    return this.#closed;
  }
}
