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
 * What a crash may lose, and what it may not. Written in the background, so
 * lost if the process dies within the few milliseconds before the write:
 * task progress (the task runs again from the start), a realtime request's
 * journal between segments and the `committed` mark of a segment's hold (a
 * resume generates the segment again, charged once), webhook
 * delivery bookkeeping of an attempt under way (that attempt is made
 * again). Kept before anything relies on it:
 * - every HTTP reply waits for `flush()` (a 202 for a task, a charge, a
 *   profile change, an issued ticket);
 * - a ledger hold is its own transaction, answered once committed, so no
 *   work runs on a charge that is not in the database; commits and releases
 *   are transactions in the same queue (`flush()` waits for them);
 * - a task's end is flushed before its claim is let go, and before its
 *   webhook's first attempt tells anyone about it;
 * - a webhook's retry schedule is flushed before the wait for the next
 *   attempt, so a process taking it over goes on from it;
 * - a ticket's redemption is flushed before its claim is let go.
 *
 * PGlite is held by one process (a directory lock). PostgreSQL may be shared
 * by several server processes (`serve --workers N`, several hosts): then
 * - every write takes a new `version` from one sequence, and writers
 *   serialize their transactions on one advisory lock, so versions commit in
 *   order and `sync()` (`where version > last seen`) misses none; a delete
 *   leaves a tombstone (`value` null) for the others to see;
 * - the server calls `sync()` before each HTTP request and each realtime
 *   connection, so what one process acknowledged the next request sees
 *   wherever it lands;
 * - an account's balances are written as deltas computed in SQL, not as the
 *   value this process last saw, so two processes charging one account at
 *   once both count; holds, commits and releases are transactions with their
 *   check inside (`ledgerSteps`), so they cannot overdraw it or charge one
 *   refId twice between them (the rest of a record: the last write wins, and each
 *   record but the accounts has one writer at a time: the process running
 *   its request or task);
 * - `processes` (types.ts) gives named claims and owner liveness on session
 *   advisory locks, which PostgreSQL releases when a process's connection
 *   ends, killed or not: a task runs on the process holding its claim, and a
 *   realtime request whose owner died is recovered by a live one.
 */
import { randomUUID } from 'node:crypto';
import type { Account, Collection, HoldOutcome, LedgerEntry, LedgerSteps, Release, SharedProcesses, Store } from './types.js';
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

const ignore = (): void => undefined;

/** A string as an SQL literal (for a statement sent without parameters). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function decodeKey(text: string): string {
  return text.replace(/\\(\\|0)/g, (_m, c: string) => (c === '0' ? '\u0000' : '\\'));
}

const ACCOUNTS = 'accounts';
const LEDGER = 'ledger';
/**
 * Creation order survives a restart (`seq`), as the in-memory store keeps it;
 * an update keeps a record's place. `version` orders changes for `sync()`;
 * `value` null is a deleted record (a tombstone other processes read).
 */
const SCHEMA = `
  create table if not exists entries (
    seq bigint generated always as identity,
    collection text not null,
    key text not null,
    value text,
    version bigint not null default 0,
    primary key (collection, key)
  );
  create table if not exists schema_version (version integer not null);
  -- Values are JSON with audio in base64: compressing them (TOAST's default) costs
  -- more CPU than it saves space (PGlite runs it in the server's own thread).
  alter table entries alter column value set storage external;
  -- Version 1 had no versions and no tombstones.
  alter table entries add column if not exists version bigint not null default 0;
  -- Which process wrote it last (a shared store): a process does not read its own writes back.
  alter table entries add column if not exists writer text;
  alter table entries alter column value drop not null;
  create sequence if not exists entries_version;
  create index if not exists entries_by_version on entries (version);
`;
const SCHEMA_VERSION = 2;

/** The balances of an account, which several processes change at once. */
const BALANCES = ['credits', 'apiQuota'] as const;
type Balances = Record<(typeof BALANCES)[number], number>;

function balancesOf(account: Account): Balances {
  return { credits: account.credits, apiQuota: account.apiQuota };
}

/** Key of one record across collections. */
function entryKey(collection: string, key: string): string {
  return `${collection}\u0001${key}`;
}

/** A change waiting to be written: the latest value of a key, or its deletion. */
interface Change {
  collection: string;
  key: string;
  /** Undefined: deleted. */
  value: unknown;
}

/** A change as it goes to the database, encoded when it was taken. */
interface Prepared {
  collection: string;
  key: string;
  /** Undefined: deleted. */
  text: string | undefined;
  /** An account's balances as written, and the change since the database's last value we know. */
  balances?: { written: Balances; delta: Balances };
}

interface Row {
  collection: string;
  key: string;
  value: string | null;
  version: string | number;
}

type Write = (collection: string, key: string, value: unknown) => void;

const NO_CHANGE: Balances = { credits: 0, apiQuota: 0 };

/** The balance field of a currency (as `ledger.ts` names it). */
function fieldOf(currency: LedgerEntry['currency']): keyof Balances {
  return currency === 'credits' ? 'credits' : 'apiQuota';
}

/** A row as a ledger step returns it. */
interface StepRow {
  version: string | number;
  value: string | null;
}

class PersistentCollection<T> implements Collection<T> {
  readonly #memory = new MemoryCollection<T>();
  constructor(private readonly name: string, private readonly write: Write) {}

  /** Put a value read from the database (nothing to write back). */
  load(key: string, value: T): void {
    this.#memory.set(key, value);
  }
  /** Forget a record another process deleted. */
  forget(key: string): void {
    this.#memory.delete(key);
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
  /** Keys with their records (retention, `retention.ts`). */
  entries(): IterableIterator<[string, T]> {
    return this.#memory.entries();
  }
}

/** How a store is shared: the prefix of its advisory locks' names (one per database schema). */
export interface SharedMode {
  lockPrefix: string;
}

export class SqlStore implements Store {
  readonly accounts: PersistentCollection<Account>;
  readonly ledger: PersistentCollection<LedgerEntry>;
  readonly processes: SharedProcesses | undefined;
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
  /** Every database operation, one after the other (one connection). */
  #queue: Promise<void> = Promise.resolve();
  #failed: unknown;
  readonly #release: () => Promise<void>;
  #closed: Promise<void> | undefined;
  readonly #shared: SharedMode | undefined;
  /** The newest version of each record this process holds (read or written). */
  readonly #versions = new Map<string, number>();
  /** Every version up to this one has been read (`sync`). */
  #seen = 0;
  /**
   * Each account's balances as the database last had them (read or written),
   * and the changes this process handed to the database since, not yet
   * committed: what its cached account holds is their sum plus what it
   * changed since the last drain. Changes go out as deltas against them.
   */
  readonly #known = new Map<string, Balances>();
  readonly #inFlight = new Map<string, Balances>();
  /** The read of others' writes under way, and the one queued after it, which a caller arriving now shares. */
  #syncing: Promise<void> | undefined;
  #nextSync: Promise<void> | undefined;
  /** Records handed to the database and not committed yet (a count per record: several transactions may be queued). */
  readonly #writing = new Map<string, number>();

  /**
   * `release` lets go of whatever made this process the store's owner (a
   * lock); `shared`: several processes use the store at once.
   */
  protected constructor(db: SqlDatabase, release: () => Promise<void>, shared?: SharedMode) {
    this.#db = db;
    this.#release = release;
    this.#shared = shared;
    const write: Write = (collection, key, value) => {
      this.#pending.set(entryKey(collection, key), { collection, key, value });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    };
    this.#write = write;
    this.accounts = new PersistentCollection<Account>(ACCOUNTS, write);
    this.ledger = new PersistentCollection<LedgerEntry>(LEDGER, write);
    this.processes = shared && new SharedLocks(shared.lockPrefix, (work) => this.#enqueue(work), db);
  }

  /** Create the schema if needed and load every record into the cache. */
  protected async load(): Promise<void> {
    await this.#db.query('begin');
    try {
      // Two processes starting at once would both create the tables.
      if (this.#shared) await this.#db.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`${this.#shared.lockPrefix}:schema`]);
      await this.#db.exec(SCHEMA);
      const version = (await this.#db.query('select version from schema_version')).rows as { version: number }[];
      if (version.length === 0) await this.#db.query('insert into schema_version (version) values ($1)', [SCHEMA_VERSION]);
      else if (version[0]!.version < SCHEMA_VERSION) await this.#db.query('update schema_version set version = $1', [SCHEMA_VERSION]);
      // Tombstones are for other processes to read: with none running, none are needed.
      if (!this.#shared || (await this.#alone())) await this.#db.query('delete from entries where value is null');
      await this.#db.query('commit');
    } catch (err) {
      await this.#db.query('rollback').catch(() => undefined);
      throw err;
    }
    // One statement, one snapshot: every version up to the highest read is in it (writers commit in version order).
    const rows = (await this.#db.query('select collection, key, value, version from entries order by seq')).rows as Row[];
    for (const row of rows) this.#apply(row);
  }

  /**
   * A shared store: whether no other process has it open. Every process holds
   * the presence lock shared from before it reads the store until it ends;
   * taking it exclusively succeeds only when none does. Then it is held shared
   * from here on, like theirs.
   */
  async #alone(): Promise<boolean> {
    const name = `${this.#shared!.lockPrefix}:presence`;
    const rows = (await this.#db.query('select pg_try_advisory_lock(hashtextextended($1, 0)) as alone', [name])).rows as { alone: boolean }[];
    const alone = rows[0]?.alone === true;
    await this.#db.query('select pg_advisory_lock_shared(hashtextextended($1, 0))', [name]);
    if (alone) await this.#db.query('select pg_advisory_unlock(hashtextextended($1, 0))', [name]);
    return alone;
  }

  /** Run `work` after every database operation before it. */
  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#queue.then(work);
    this.#queue = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  /** Take a record another process wrote (or the initial load) into the cache. */
  #apply(row: Row): void {
    const version = Number(row.version);
    if (version > this.#seen) this.#seen = version;
    const key = decodeKey(row.key);
    const id = entryKey(row.collection, key);
    if ((this.#versions.get(id) ?? -1) >= version) return; // this process wrote it, or something newer
    this.#versions.set(id, version);
    const collection = this.#collectionOf(row.collection);
    const pending = this.#pending.has(id) || this.#writing.has(id);
    if (row.value === null) {
      if (!pending) collection.forget(key);
      return;
    }
    const value = decode(row.value);
    if (row.collection !== ACCOUNTS) {
      // A record has one writer at a time: a change of ours not yet written is the newer one.
      if (!pending) collection.load(key, value);
      return;
    }
    // An account: one object per account (sessions hold it); what others
    // changed since the database's value this process knew is added to it.
    const account = value as Account;
    const current = collection.get(key) as Account | undefined;
    const known = this.#known.get(key);
    this.#known.set(key, balancesOf(account));
    if (!current || !known) {
      if (!pending) collection.load(key, account);
      return;
    }
    const balances = balancesOf(current);
    Object.assign(current, account);
    for (const field of BALANCES) current[field] = balances[field] + account[field] - known[field];
  }

  /** A pending change, encoded now (a record changed in place later is written by its next `set`). */
  #prepare(change: Change): Prepared {
    if (change.value === undefined) return { collection: change.collection, key: change.key, text: undefined };
    const prepared: Prepared = { collection: change.collection, key: change.key, text: encode(change.value) };
    const known = change.collection === ACCOUNTS ? this.#known.get(change.key) : undefined;
    if (known) {
      // The change since the last drain: the account less what the database has and what is on its way there.
      const written = balancesOf(change.value as Account);
      const inFlight = this.#inFlight.get(change.key) ?? { credits: 0, apiQuota: 0 };
      const delta = { credits: written.credits - known.credits - inFlight.credits, apiQuota: written.apiQuota - known.apiQuota - inFlight.apiQuota };
      this.#inFlight.set(change.key, { credits: inFlight.credits + delta.credits, apiQuota: inFlight.apiQuota + delta.apiQuota });
      prepared.balances = { written, delta };
    }
    return prepared;
  }

  /** Hand the pending changes to the database: one transaction, after the operations before it. */
  #drain(): void {
    this.#scheduled = false;
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()].map((c) => this.#prepare(c));
    this.#pending.clear();
    const ids = batch.map((c) => entryKey(c.collection, c.key));
    for (const id of ids) this.#writing.set(id, (this.#writing.get(id) ?? 0) + 1);
    const settled = () => {
      for (const id of ids) {
        const left = this.#writing.get(id)! - 1;
        if (left === 0) this.#writing.delete(id);
        else this.#writing.set(id, left);
      }
    };
    this.#enqueue(async () => {
      const written: { change: Prepared; version: number; value: string | null }[] = [];
      const writer = this.processes?.ownerId ?? null;
      // Versions commit in the order they are taken (writers take turns on one
      // lock), so a reader never skips one still being written. One round trip.
      await this.#db.exec(this.#shared ? `begin; select pg_advisory_xact_lock(hashtextextended(${literal(`${this.#shared.lockPrefix}:writes`)}, 0))` : 'begin');
      try {
        for (const change of batch) {
          const key = encodeKey(change.key);
          let sql: string;
          let params: unknown[];
          if (change.text === undefined) {
            sql = `update entries set value = null, writer = $3, version = nextval('entries_version') where collection = $1 and key = $2 returning version, value`;
            params = [change.collection, key, writer];
          } else if (change.balances) {
            // The balances: the database's plus this process's change, not the value it last saw.
            sql = `insert into entries (collection, key, value, version, writer) values ($1, $2, $3, nextval('entries_version'), $6)
              on conflict (collection, key) do update set version = excluded.version, writer = excluded.writer, value = case when entries.value is null then excluded.value
                else (excluded.value::jsonb || jsonb_build_object(
                  'credits', (entries.value::jsonb->>'credits')::numeric + $4::numeric,
                  'apiQuota', (entries.value::jsonb->>'apiQuota')::numeric + $5::numeric))::text end
              returning version, value`;
            params = [change.collection, key, change.text, change.balances.delta.credits, change.balances.delta.apiQuota, writer];
          } else {
            sql = `insert into entries (collection, key, value, version, writer) values ($1, $2, $3, nextval('entries_version'), $4)
              on conflict (collection, key) do update set value = excluded.value, version = excluded.version, writer = excluded.writer returning version, null as value`;
            params = [change.collection, key, change.text, writer];
          }
          const rows = (await this.#db.query(sql, params)).rows as { version: string | number; value: string | null }[];
          if (rows[0]) written.push({ change, version: Number(rows[0].version), value: rows[0].value });
        }
        await this.#db.query('commit');
      } catch (err) {
        await this.#db.query('rollback').catch(() => undefined);
        throw err;
      }
      for (const { change, version, value } of written) this.#written(change, version, value);
    })
      .catch((err: unknown) => {
        this.#failed ??= err;
      })
      .finally(settled);
  }

  /** After a commit: the versions this process now holds, and each account's balances as the database has them. */
  #written(change: Prepared, version: number, value: string | null): void {
    const id = entryKey(change.collection, change.key);
    if ((this.#versions.get(id) ?? -1) < version) this.#versions.set(id, version);
    if (change.collection !== ACCOUNTS || change.text === undefined) return;
    const stored = balancesOf((value === null ? decode(change.text) : decode(value)) as Account);
    const known = this.#known.get(change.key);
    this.#known.set(change.key, stored);
    if (!known || !change.balances) return;
    const { delta } = change.balances;
    const inFlight = this.#inFlight.get(change.key);
    if (inFlight) for (const field of BALANCES) inFlight[field] -= delta[field];
    // What others changed before this write (the database's value then, less what this process knew).
    const account = this.accounts.get(change.key);
    if (account) for (const field of BALANCES) account[field] += stored[field] - delta[field] - known[field];
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

  /** Run `work` on the database after every change so far (maintenance: `retention.ts`'s VACUUM and sizes). */
  maintain<T>(work: (db: SqlDatabase) => Promise<T>): Promise<T> {
    this.#drain();
    return this.#enqueue(() => work(this.#db));
  }

  /**
   * The ledger's steps, one transaction each (with the writers' lock on a
   * shared store, like every write), the check inside: a hold inserts its
   * entry only where the refId is new (`on conflict`) and takes the amount
   * only where the balance covers it (a conditional update); a release gives
   * the amount back only where the entry was not released yet; a commit
   * moves only a `held` entry. Processes sharing the store cannot overdraw an
   * account or charge one refId twice between them. The cache takes what
   * the database then holds (`#settleAccount`).
   */
  readonly ledgerSteps: LedgerSteps = {
    hold: (entry) => this.#hold(entry),
    commit: (refId) => this.#commitHold(refId),
    release: (refId, at) => this.#releaseHold(refId, at),
  };

  /** Begin a write transaction: on a shared store, on the writers' lock (versions commit in order). */
  #begin(): Promise<unknown> {
    return this.#db.exec(this.#shared ? `begin; select pg_advisory_xact_lock(hashtextextended(${literal(`${this.#shared.lockPrefix}:writes`)}, 0))` : 'begin');
  }

  /**
   * Run `work` as one write transaction, after every operation before it;
   * what it returns (a function: what the cache takes) runs once committed.
   */
  #transaction<T>(work: (writer: string | null) => Promise<() => T>): Promise<T> {
    // This process's changes first: the checks see the database with them.
    this.#drain();
    return this.#enqueue(async () => {
      await this.#begin();
      let settle: () => T;
      try {
        settle = await work(this.processes?.ownerId ?? null);
        await this.#db.query('commit');
      } catch (err) {
        await this.#db.query('rollback').catch(() => undefined);
        throw err;
      }
      return settle();
    });
  }

  async #row(collection: string, key: string): Promise<StepRow | undefined> {
    return ((await this.#db.query('select version, value from entries where collection = $1 and key = $2', [collection, encodeKey(key)])).rows as StepRow[])[0];
  }

  /** Add `delta` (which may be negative) to a balance, where `guard` holds; the row after, if it did. */
  async #addToBalance(userId: string, field: keyof Balances, delta: number, writer: string | null, guard: boolean): Promise<StepRow | undefined> {
    const sql = `update entries set value = (value::jsonb || jsonb_build_object($3::text, (value::jsonb->>$3)::numeric + $4::numeric))::text,
        version = nextval('entries_version'), writer = $5
      where collection = $1 and key = $2 and value is not null${guard ? ' and (value::jsonb->>$3)::numeric + $4::numeric >= 0' : ''}
      returning version, value`;
    return ((await this.#db.query(sql, [ACCOUNTS, encodeKey(userId), field, delta, writer])).rows as StepRow[])[0];
  }

  /**
   * The cache takes an account's row as a ledger step left it: the balances
   * gain what changed in the database since this process last knew them,
   * less what this process already added to its own view (`optimistic`).
   */
  #settleAccount(userId: string, row: StepRow | undefined, optimistic: Balances): void {
    if (!row || row.value === null) return;
    const id = entryKey(ACCOUNTS, userId);
    const version = Number(row.version);
    if ((this.#versions.get(id) ?? -1) < version) this.#versions.set(id, version);
    const stored = balancesOf(decode(row.value) as Account);
    const known = this.#known.get(userId);
    this.#known.set(userId, stored);
    const account = this.accounts.get(userId);
    if (!account) {
      this.accounts.load(userId, decode(row.value) as Account);
      return;
    }
    for (const field of BALANCES) account[field] = known ? account[field] + stored[field] - known[field] - optimistic[field] : stored[field];
  }

  #addInFlight(userId: string, change: Balances, sign: 1 | -1): void {
    const inFlight = this.#inFlight.get(userId) ?? { ...NO_CHANGE };
    for (const field of BALANCES) inFlight[field] += sign * change[field];
    this.#inFlight.set(userId, inFlight);
  }

  /** The cache takes a ledger entry's row. */
  #settleEntry(refId: string, row: StepRow | undefined): LedgerEntry | undefined {
    if (!row || row.value === null) return undefined;
    const id = entryKey(LEDGER, refId);
    const version = Number(row.version);
    if ((this.#versions.get(id) ?? -1) < version) this.#versions.set(id, version);
    const stored = decode(row.value) as LedgerEntry;
    const cached = this.ledger.get(refId);
    if (cached) Object.assign(cached, stored);
    else this.ledger.load(refId, stored);
    return cached ?? stored;
  }

  #hold(entry: LedgerEntry): Promise<HoldOutcome> {
    const cached = this.ledger.get(entry.refId);
    if (cached) return Promise.resolve({ kind: 'held', charged: false, entry: cached });
    const field = fieldOf(entry.currency);
    return this.#transaction(async (writer): Promise<() => HoldOutcome> => {
      const inserted = (
        await this.#db.query(
          `insert into entries (collection, key, value, version, writer) values ($1, $2, $3, nextval('entries_version'), $4)
            on conflict (collection, key) do update set value = excluded.value, version = excluded.version, writer = excluded.writer where entries.value is null
            returning version, value`,
          [LEDGER, encodeKey(entry.refId), encode(entry), writer],
        )
      ).rows as StepRow[];
      if (!inserted[0]) {
        // Held before (by another process, or this one before a restart): nothing new charged.
        const row = await this.#row(LEDGER, entry.refId);
        return () => ({ kind: 'held', charged: false, entry: this.#settleEntry(entry.refId, row) ?? entry });
      }
      const account = await this.#addToBalance(entry.userId, field, -entry.amount, writer, true);
      if (!account) {
        const row = await this.#row(ACCOUNTS, entry.userId);
        const available = row?.value ? balancesOf(decode(row.value) as Account)[field] : 0;
        // Nothing kept: the entry goes with the rollback.
        throw new ShortBalance(available);
      }
      return () => {
        this.#settleAccount(entry.userId, account, NO_CHANGE);
        return { kind: 'held', charged: true, entry: this.#settleEntry(entry.refId, inserted[0]) ?? entry };
      };
    }).catch((err: unknown) => {
      if (err instanceof ShortBalance) return { kind: 'insufficient', available: err.available };
      throw err;
    });
  }

  #commitHold(refId: string): LedgerEntry | undefined {
    const entry = this.ledger.get(refId);
    if (!entry || entry.state !== 'held') return entry;
    entry.state = 'committed';
    this.#transaction(async (writer) => {
      const moved = (
        await this.#db.query(
          `update entries set value = (value::jsonb || '{"state":"committed"}'::jsonb)::text, version = nextval('entries_version'), writer = $3
            where collection = $1 and key = $2 and value is not null and value::jsonb->>'state' = 'held' returning version, value`,
          [LEDGER, encodeKey(refId), writer],
        )
      ).rows as StepRow[];
      // Not held any more (another process released it first): the cache takes the database's state.
      const row = moved[0] ?? (await this.#row(LEDGER, refId));
      return () => void this.#settleEntry(refId, row);
    }).catch((err: unknown) => {
      this.#failed ??= err;
    });
    return entry;
  }

  #releaseHold(refId: string, at: string): boolean {
    const entry = this.ledger.get(refId);
    if (!entry || entry.state === 'released') return false;
    const field = fieldOf(entry.currency);
    // This process's view at once; the transaction decides, and corrects it if another process released it first.
    entry.state = 'released';
    entry.releasedAt = at;
    const account = this.accounts.get(entry.userId);
    const optimistic: Balances = { ...NO_CHANGE, [field]: account ? entry.amount : 0 };
    if (account) {
      account[field] += entry.amount;
      // On its way to the database (by this transaction): a write of the account meanwhile does not carry it too.
      this.#addInFlight(entry.userId, optimistic, 1);
    }
    this.#transaction(async (writer) => {
      const released = (
        await this.#db.query(
          `update entries set value = (value::jsonb || jsonb_build_object('state', 'released', 'releasedAt', $3::text))::text, version = nextval('entries_version'), writer = $4
            where collection = $1 and key = $2 and value is not null and value::jsonb->>'state' <> 'released' returning version, value`,
          [LEDGER, encodeKey(refId), at, writer],
        )
      ).rows as StepRow[];
      const balance = released[0] ? await this.#addToBalance(entry.userId, field, entry.amount, writer, false) : await this.#row(ACCOUNTS, entry.userId);
      const row = released[0] ?? (await this.#row(LEDGER, refId));
      return () => {
        this.#settleEntry(refId, row);
        this.#settleAccount(entry.userId, balance, optimistic);
      };
    })
      .catch((err: unknown) => {
        this.#failed ??= err;
      })
      .finally(() => {
        if (account) this.#addInFlight(entry.userId, optimistic, -1);
      });
    return true;
  }

  /** Wait until every change so far is written; throws the first write error, if any. */
  async flush(): Promise<void> {
    this.#drain();
    await this.#queue;
    if (this.#failed !== undefined) throw this.#failed;
  }

  /**
   * Read what other processes wrote since the last sync (a shared store;
   * otherwise nothing to read). Calls arriving while one waits to start share it.
   */
  async sync(): Promise<void> {
    if (!this.#shared) return;
    this.#drain();
    // A read started before this call may miss what was acknowledged just
    // before it: one more read follows it, shared by every caller meanwhile.
    const current = this.#syncing ?? Promise.resolve();
    this.#nextSync ??= current.then(ignore, ignore).then(async () => {
      this.#nextSync = undefined;
      const read = this.#read();
      this.#syncing = read;
      try {
        await read;
      } finally {
        if (this.#syncing === read) this.#syncing = undefined;
      }
    });
    await this.#nextSync;
    if (this.#failed !== undefined) throw this.#failed;
  }

  /**
   * One read of what others wrote. It does not wait for this process's own
   * writes (they are in its cache; the rows it reads exclude them): records
   * being written keep their cached value (`#apply`), and a row read during a
   * write transaction was committed before it (writers take turns on one lock).
   */
  async #read(): Promise<void> {
    const rows = (await this.#db.query('select collection, key, value, version from entries where version > $1 and writer is distinct from $2 order by version', [this.#seen, this.processes!.ownerId])).rows as Row[];
    for (const row of rows) this.#apply(row);
  }

  /** Flush, close the database and let go of the store (once; later calls wait for the first). */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#drain();
      await this.#queue;
      await this.#db.close();
      await this.#release();
    })();
    return this.#closed;
  }
}

/** A hold refused inside its transaction (rolled back). */
class ShortBalance extends Error {
  constructor(readonly available: number) {
    super('insufficient balance');
  }
}

/**
 * Claims and owner liveness on session advisory locks (held by the
 * connection: they end with the process, killed or not). Each process holds
 * its own owner lock for its lifetime.
 */
class SharedLocks implements SharedProcesses {
  readonly ownerId = `proc_${randomUUID()}`;
  readonly #held = new Set<string>();
  readonly #owned: Promise<unknown>;

  constructor(private readonly prefix: string, private readonly enqueue: <T>(work: () => Promise<T>) => Promise<T>, private readonly db: SqlDatabase) {
    this.#owned = this.#try(`owner:${this.ownerId}`);
  }

  /** A text parameter cannot hold NUL, which the server's composite keys use: escaped as keys are. */
  #lockName(name: string): string {
    return `${this.prefix}:${encodeKey(name)}`;
  }

  #try(name: string): Promise<boolean> {
    return this.enqueue(async () => {
      const rows = (await this.db.query('select pg_try_advisory_lock(hashtextextended($1, 0)) as locked', [this.#lockName(name)])).rows as { locked: boolean }[];
      return rows[0]?.locked === true;
    });
  }

  #unlock(name: string): Promise<void> {
    return this.enqueue(async () => {
      await this.db.query('select pg_advisory_unlock(hashtextextended($1, 0))', [this.#lockName(name)]);
    });
  }

  async claim(name: string): Promise<Release | undefined> {
    // Advisory locks are re-entrant within a session: this process's own claims are counted here.
    if (this.#held.has(name)) return undefined;
    this.#held.add(name);
    let taken = false;
    try {
      taken = await this.#try(`claim:${name}`);
    } finally {
      // Not taken (or the database failed): not held, so a later try can take it.
      if (!taken) this.#held.delete(name);
    }
    if (!taken) return undefined;
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.#unlock(`claim:${name}`);
      this.#held.delete(name);
    };
  }

  async alive(ownerId: string): Promise<boolean> {
    await this.#owned;
    if (ownerId === this.ownerId) return true;
    if (!(await this.#try(`owner:${ownerId}`))) return true;
    await this.#unlock(`owner:${ownerId}`); // it was free: its process is gone
    return false;
  }
}
