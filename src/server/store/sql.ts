/**
 * The server's store on SQL: one schema for both engines, PGlite (an
 * embedded data directory, `pglite.ts`) and PostgreSQL (`postgres.ts`).
 *
 * The server's `Store` interface is synchronous, so this is a write-through
 * cache: every record is loaded into memory when the store opens, reads are
 * served from memory, and the changes (`set`, `delete`) are written to one
 * table (`entries`: collection, key, JSON value) in the background, one
 * transaction per turn of the event loop with the latest value of each key.
 * `flush()` waits for the writes (the server waits for it before it answers
 * a request); `close()` flushes and closes the database.
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

/**
 * What goes into the JSON column: Buffers as `{ "$buffer": base64 }`. They
 * are replaced before JSON.stringify sees them: a replacer would get each
 * one after `Buffer.toJSON` had turned it into an array of numbers.
 */
function encode(value: unknown): string {
  return JSON.stringify(plain(value));
}

function plain(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { $buffer: value.toString('base64') };
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = plain(v);
  return out;
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
  -- Values are JSON with audio in base64: compressing them (TOAST's default) costs
  -- more CPU than it saves space (PGlite runs it in the server's own thread).
  alter table entries alter column value set storage external;
`;
const SCHEMA_VERSION = 1;

/** A change waiting to be written: the latest value of a key, or its deletion. */
interface Change {
  collection: string;
  key: string;
  /** Undefined: deleted. */
  value: unknown;
}

type Write = (collection: string, key: string, value: unknown) => void;

class PersistentCollection<T> implements Collection<T> {
  readonly #memory = new MemoryCollection<T>();
  constructor(private readonly name: string, private readonly write: Write) {}

  load(key: string, value: T): void {
    this.#memory.set(key, value);
  }
  get(key: string): T | undefined {
    return this.#memory.get(key);
  }
  set(key: string, value: T): void {
    this.#memory.set(key, value);
    this.write(this.name, key, value);
  }
  delete(key: string): boolean {
    const had = this.#memory.delete(key);
    if (had) this.write(this.name, key, undefined);
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
  /**
   * Changes not yet handed to the database, one per key (the latest wins; a
   * key keeps the place of its first change, so creation order holds).
   * They go in one transaction per turn of the event loop: a realtime request
   * record set once per audio chunk is written once, not once per chunk.
   */
  readonly #pending = new Map<string, Change>();
  #scheduled = false;
  readonly #write: Write;
  #writes: Promise<void> = Promise.resolve();
  #failed: unknown;
  readonly #release: () => Promise<void>;
  #closed: Promise<void> | undefined;

  /** `release` lets go of whatever made this process the store's one owner (a lock). */
  protected constructor(db: SqlDatabase, release: () => Promise<void>) {
    this.#db = db;
    this.#release = release;
    const write: Write = (collection, key, value) => {
      this.#pending.set(`${collection}\u0001${key}`, { collection, key, value });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#drain());
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

  /** Hand the pending changes to the database: one transaction, after the ones before it. */
  #drain(): void {
    this.#scheduled = false;
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    this.#writes = this.#writes
      .then(async () => {
        await this.#db.query('begin');
        try {
          for (const change of batch) {
            if (change.value === undefined) await this.#db.query('delete from entries where collection = $1 and key = $2', [change.collection, encodeKey(change.key)]);
            else await this.#db.query('insert into entries (collection, key, value) values ($1, $2, $3) on conflict (collection, key) do update set value = excluded.value', [change.collection, encodeKey(change.key), encode(change.value)]);
          }
          await this.#db.query('commit');
        } catch (err) {
          await this.#db.query('rollback').catch(() => undefined);
          throw err;
        }
      })
      .catch((err: unknown) => {
        this.#failed ??= err;
      });
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
    this.#drain();
    await this.#writes;
    if (this.#failed !== undefined) throw this.#failed;
  }

  /** Flush, close the database and let go of the store (once; later calls wait for the first). */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#drain();
      await this.#writes;
      await this.#db.close();
      await this.#release();
    })();
    return this.#closed;
  }
}
