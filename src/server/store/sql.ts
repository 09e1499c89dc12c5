/**
 * The server's store on SQL: one schema for both engines, PGlite (an
 * embedded data directory, `pglite.ts`) and PostgreSQL (`postgres.ts`).
 *
 * The server's `Store` interface is synchronous, so this is a write-through
 * cache: every record is loaded into memory when the store opens, reads are
 * served from memory, and every `set` and `delete` is written to one table
 * (`entries`: collection, key, JSON value) in order, in the background.
 * `flush()` waits for the writes; `close()` flushes and closes the database.
 * A process killed between a change and its write loses that change (the
 * last few milliseconds); everything written before is there on restart, and
 * the server picks up what the dead process left: realtime requests it was
 * generating read `failed_retryable` (`recoverOrphans`), tasks it had
 * accepted run again (`TaskRunner`).
 *
 * Because the cache is the truth while the process runs, one server process
 * owns a store at a time; each engine enforces that (a directory lock, an
 * advisory lock). Several processes sharing one service need the store's
 * operations to be transactions in the database itself: not done yet.
 */
import type { Account, Collection, LedgerEntry, Store } from './types.js';
import { MemoryCollection } from './memory.js';

/** What both engines offer: parameterized queries in order on one connection. */
export interface SqlDatabase {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  /** Several statements, no parameters. */
  exec(sql: string): Promise<unknown>;
  close(): Promise<void>;
}

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

/**
 * Keys go into a `text` column, which cannot hold NUL, while the server's
 * composite keys use it as a separator (`user\u0000key`): NUL is written
 * `\0` and a backslash `\\`, so every other key is stored as it is.
 */
function encodeKey(key: string): string {
  return key.replaceAll('\\', '\\\\').replaceAll('\u0000', '\\0');
}

function decodeKey(text: string): string {
  return text.replace(/\\(\\|0)/g, (_m, c: string) => (c === '0' ? '\u0000' : '\\'));
}

const ACCOUNTS = 'accounts';
const LEDGER = 'ledger';
/** Creation order survives a restart (`seq`), as the in-memory store keeps it; an update keeps a record's place. */
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
    this.write('insert into entries (collection, key, value) values ($1, $2, $3) on conflict (collection, key) do update set value = excluded.value', [this.name, encodeKey(key), encode(value)]);
  }
  delete(key: string): boolean {
    const had = this.#memory.delete(key);
    if (had) this.write('delete from entries where collection = $1 and key = $2', [this.name, encodeKey(key)]);
    return had;
  }
  values(): IterableIterator<T> {
    return this.#memory.values();
  }
  get size(): number {
    return this.#memory.size;
  }
}

export class SqlStore implements Store {
  readonly accounts: PersistentCollection<Account>;
  readonly ledger: PersistentCollection<LedgerEntry>;
  readonly #collections = new Map<string, PersistentCollection<unknown>>();
  readonly #db: SqlDatabase;
  /** Queues one statement after the ones before it (writes land in the order the changes were made). */
  readonly #write: (sql: string, params: unknown[]) => void;
  #writes: Promise<void> = Promise.resolve();
  #failed: unknown;
  readonly #release: () => Promise<void>;
  #closed: Promise<void> | undefined;

  /** `release` lets go of whatever made this process the store's one owner (a lock). */
  protected constructor(db: SqlDatabase, release: () => Promise<void>) {
    this.#db = db;
    this.#release = release;
    const write = (sql: string, params: unknown[]) => {
      this.#writes = this.#writes.then(() => this.#db.query(sql, params).then(() => undefined)).catch((err: unknown) => {
        this.#failed ??= err;
      });
    };
    this.#write = write;
    this.accounts = new PersistentCollection<Account>(ACCOUNTS, write);
    this.ledger = new PersistentCollection<LedgerEntry>(LEDGER, write);
  }

  /** Create the schema if needed and load every record into the cache. */
  protected async load(): Promise<void> {
    await this.#db.exec(SCHEMA);
    const version = (await this.#db.query('select version from schema_version')).rows as { version: number }[];
    if (version.length === 0) await this.#db.query('insert into schema_version (version) values ($1)', [SCHEMA_VERSION]);
    const rows = (await this.#db.query('select collection, key, value from entries order by seq')).rows as { collection: string; key: string; value: string }[];
    for (const row of rows) this.#collectionOf(row.collection).load(decodeKey(row.key), decode(row.value));
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

  /** Wait until every change so far is written; throws the first write error, if any. */
  async flush(): Promise<void> {
    await this.#writes;
    if (this.#failed !== undefined) throw this.#failed;
  }

  /** Flush, close the database and let go of the store (once; later calls wait for the first). */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#writes;
      await this.#db.close();
      await this.#release();
    })();
    return this.#closed;
  }
}
