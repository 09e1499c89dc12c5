/**
 * Balances and charges. Every charge is a hold keyed by an idempotency
 * `refId`: holding the same refId twice charges once; releasing (refunding)
 * it twice refunds once. That is how "pre-deducted once, refunded
 * idempotently" (spec 3.1, 3.3) and "no segment charged twice" hold.
 *
 * Each step is atomic with its check inside: the store's `ledgerSteps` (on
 * SQL one transaction each, with a conditional update of the balance, so
 * processes sharing a PostgreSQL cannot overdraw an account between them),
 * else `CollectionLedgerSteps` on the store's collections (one synchronous
 * step: atomic in the one process that writes the store).
 */
import type { Account, Currency, HoldOutcome, LedgerEntry, LedgerSteps, Store } from './store/types.js';

export class InsufficientBalance extends Error {
  constructor(readonly currency: Currency, readonly needed: number, readonly available: number) {
    super(`insufficient ${currency === 'credits' ? 'credits' : 'API quota'}: need ${needed}, have ${available}`);
  }
}

export interface HoldResult {
  entry: LedgerEntry;
  /** False when the refId was already held: nothing new was charged. */
  charged: boolean;
}

/** The balance field of a currency. */
export function balanceField(currency: Currency): 'credits' | 'apiQuota' {
  return currency === 'credits' ? 'credits' : 'apiQuota';
}

/**
 * The ledger's steps on a store's collections, each done in one synchronous
 * turn: atomic within one process. The in-memory store's (and any store
 * without steps of its own).
 */
export class CollectionLedgerSteps implements LedgerSteps {
  constructor(private readonly store: Store) {}

  hold(entry: LedgerEntry): Promise<HoldOutcome> {
    const existing = this.store.ledger.get(entry.refId);
    if (existing) return Promise.resolve({ kind: 'held', charged: false, entry: existing });
    const account = this.store.accounts.get(entry.userId);
    const field = balanceField(entry.currency);
    const available = account?.[field] ?? 0;
    if (!account || entry.amount > available) return Promise.resolve({ kind: 'insufficient', available });
    account[field] -= entry.amount;
    this.store.accounts.set(account.userId, account);
    this.store.ledger.set(entry.refId, entry);
    return Promise.resolve({ kind: 'held', charged: true, entry });
  }

  commit(refId: string): LedgerEntry | undefined {
    const entry = this.store.ledger.get(refId);
    if (entry && entry.state === 'held') {
      entry.state = 'committed';
      this.store.ledger.set(refId, entry); // written back: a database-like store holds a copy
    }
    return entry;
  }

  release(refId: string, at: string): boolean {
    const entry = this.store.ledger.get(refId);
    if (!entry || entry.state === 'released') return false;
    const account = this.store.accounts.get(entry.userId);
    if (account) {
      account[balanceField(entry.currency)] += entry.amount;
      this.store.accounts.set(account.userId, account);
    }
    entry.state = 'released';
    entry.releasedAt = at;
    this.store.ledger.set(refId, entry);
    return true;
  }
}

export class Ledger {
  readonly #steps: LedgerSteps;

  constructor(private readonly store: Store, private readonly now: () => Date = () => new Date()) {
    this.#steps = store.ledgerSteps ?? new CollectionLedgerSteps(store);
  }

  balance(account: Account, currency: Currency): number {
    return account[balanceField(currency)];
  }

  /**
   * Pre-deduct `amount`, once per `refId`, the balance checked in the same
   * atomic step. Rejects with InsufficientBalance. `account` (the caller's
   * view) shows the balance after it.
   */
  async hold(account: Account, currency: Currency, amount: number, refId: string, reason: string): Promise<HoldResult> {
    const entry: LedgerEntry = { refId, userId: account.userId, currency, amount, state: 'held', reason, createdAt: this.now().toISOString() };
    const outcome = await this.#steps.hold(entry);
    if (outcome.kind === 'insufficient') throw new InsufficientBalance(currency, amount, outcome.available);
    this.#refresh(account);
    return { entry: outcome.entry, charged: outcome.charged };
  }

  /** Make a hold final (e.g. at the first valid audio). Idempotent. */
  commit(refId: string): LedgerEntry | undefined {
    return this.#steps.commit(refId);
  }

  /**
   * Give a hold back (a refund when it was committed). Idempotent: returns
   * true only for the call that restored the balance.
   */
  release(refId: string): boolean {
    return this.#steps.release(refId, this.now().toISOString());
  }

  /** A caller's copy of the account takes the stored balances (a database-like store hands out copies). */
  #refresh(account: Account): void {
    const stored = this.store.accounts.get(account.userId);
    if (!stored || stored === account) return;
    account.credits = stored.credits;
    account.apiQuota = stored.apiQuota;
  }

  /** Entries of one account, newest first. */
  entriesOf(userId: string): LedgerEntry[] {
    return [...this.store.ledger.values()].filter((e) => e.userId === userId).reverse();
  }

  /** Charged and not refunded, per currency. */
  totalCharged(userId: string, currency: Currency): number {
    let total = 0;
    for (const e of this.store.ledger.values()) if (e.userId === userId && e.currency === currency && e.state !== 'released') total += e.amount;
    return total;
  }
}
