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
