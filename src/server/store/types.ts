/**
 * The reference server's storage, behind an interface: in memory by default;
 * on SQL (PGlite, PostgreSQL) when it must outlive the process, and shared
 * by several server processes on PostgreSQL (`SharedProcesses`).
 */

/** An account of the reference server (spec 2.1 plus what the server needs). */
export interface Account {
  userId: string;
  apiKey: string;
  tier: string;
  /** Account credits (HTTP TTS, ASR). */
  credits: number;
  /** Remaining API quota (realtime TTS, image, video, lip-sync). */
  apiQuota: number;
  /** A disabled account's key answers 401. */
  disabled?: boolean;
  /** Profile `webhookUrl` for task-completion webhooks. */
  webhookUrl?: string | undefined;
  /** Per-account secret of the webhook HMAC signature. */
  webhookSecret: string;
  /** Capabilities this key may use; absent means all (403 otherwise). */
  capabilities?: string[] | undefined;
}

/** What a balance is counted in. */
export type Currency = 'credits' | 'quota';

/** State of a ledger hold: pre-deducted, then committed or released (refunded). */
export type HoldState = 'held' | 'committed' | 'released';

export interface LedgerEntry {
  /** Idempotency key of the charge, e.g. `rt:<request>:<segment>` or `job:<id>`. */
  refId: string;
  userId: string;
  currency: Currency;
  amount: number;
  state: HoldState;
  reason: string;
  createdAt: string;
  /** When the hold was released (refund), if it was. */
  releasedAt?: string;
}

/** A keyed collection of records. */
export interface Collection<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  delete(key: string): boolean;
  values(): IterableIterator<T>;
  readonly size: number;
}

export interface Store {
  accounts: Collection<Account>;
  ledger: Collection<LedgerEntry>;
  /** Named collections for each route family (tasks, idempotency keys, voices, ...). */
  collection<T>(name: string): Collection<T>;
  /**
   * Resolves once every change so far is kept (a persistent store writes in
   * the background); the server waits for it before it answers a request, so
   * nothing it acknowledged (a 202 for a job, a charge) is lost to a crash.
   */
  flush?(): Promise<void>;
  /**
   * Bring in what other processes changed since the last call (a shared
   * store); the server calls it before it reads the store for a request.
   */
  sync?(): Promise<void>;
  /** Present when several server processes share this store. */
  readonly processes?: SharedProcesses | undefined;
  /**
   * The ledger's steps, each atomic with its balance check inside
   * (`ledger.ts` uses them): on SQL one database transaction each, so
   * processes sharing the store cannot overdraw an account or charge one
   * `refId` twice. Absent: `Ledger` runs them on the collections, atomic
   * within this process (a store no other process writes).
   */
  readonly ledgerSteps?: LedgerSteps | undefined;
}

/** What a hold did. */
export type HoldOutcome =
  /** Charged now, or (false) a hold on this refId already existed (`entry` is it): nothing new charged. */
  | { kind: 'held'; charged: boolean; entry: LedgerEntry }
  /** The balance is short: nothing charged, nothing recorded. */
  | { kind: 'insufficient'; available: number };

/**
 * Holds, commits and releases as single steps, each with its check inside
 * (the balance, the refId, the hold's state). The hold is asynchronous (its
 * answer comes from the database); a commit or a release changes this
 * process's view at once and is made durable by `Store.flush()` (on SQL its
 * transaction decides: a hold another process released first is not
 * released twice, and the view is corrected).
 */
export interface LedgerSteps {
  /** Charge `entry.amount` of `entry.currency` to `entry.userId` and record `entry` (state `held`), unless `entry.refId` exists or the balance is short. */
  hold(entry: LedgerEntry): Promise<HoldOutcome>;
  /** `held` -> `committed`; returns the entry as this process now sees it. */
  commit(refId: string): LedgerEntry | undefined;
  /** Give the hold back (state `released`, the amount restored) unless it already was; true when this call did it. */
  release(refId: string, at: string): boolean;
}

/** Lets go of a claim. */
export type Release = () => Promise<void>;

/**
 * What a store shared by several processes offers so that work runs once:
 * named claims held by one process until it lets go or dies, and whether the
 * process that owns a record (by its `ownerId`) is still alive.
 */
export interface SharedProcesses {
  /** This process's id, stored on the records it owns (a realtime request it generates). */
  readonly ownerId: string;
  /** Take `name` unless another live process holds it (or this one already does): then undefined. */
  claim(name: string): Promise<Release | undefined>;
  /** Whether the process with this id still runs (holds its owner claim). */
  alive(ownerId: string): Promise<boolean>;
}
