/**
 * Balances and charges. Every charge is a hold keyed by an idempotency
 * `refId`: holding the same refId twice charges once; releasing (refunding)
 * it twice refunds once. That is how "pre-deducted once, refunded
 * idempotently" (spec 3.1, 3.3) and "no segment charged twice" hold.
 */
import type { Account, Currency, LedgerEntry, Store } from './store/types.js';

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

export class Ledger {
  constructor(private readonly store: Store, private readonly now: () => Date = () => new Date()) {}

  balance(account: Account, currency: Currency): number {
    return currency === 'credits' ? account.credits : account.apiQuota;
  }

  #adjust(account: Account, currency: Currency, delta: number): void {
    if (currency === 'credits') account.credits += delta;
    else account.apiQuota += delta;
    this.store.accounts.set(account.userId, account);
  }

  /** Pre-deduct `amount`, once per `refId`. Throws InsufficientBalance. */
  hold(account: Account, currency: Currency, amount: number, refId: string, reason: string): HoldResult {
    const existing = this.store.ledger.get(refId);
    if (existing) return { entry: existing, charged: false };
    const available = this.balance(account, currency);
    if (amount > available) throw new InsufficientBalance(currency, amount, available);
    this.#adjust(account, currency, -amount);
    const entry: LedgerEntry = { refId, userId: account.userId, currency, amount, state: 'held', reason, createdAt: this.now().toISOString() };
    this.store.ledger.set(refId, entry);
    return { entry, charged: true };
  }

  /** Make a hold final (e.g. at the first valid audio). Idempotent. */
  commit(refId: string): LedgerEntry | undefined {
    const entry = this.store.ledger.get(refId);
    if (entry && entry.state === 'held') {
      entry.state = 'committed';
      this.store.ledger.set(refId, entry); // written back: a SQL store holds a copy
    }
    return entry;
  }

  /**
   * Give a hold back (a refund when it was committed). Idempotent: returns
   * true only for the call that restored the balance.
   */
  release(refId: string): boolean {
    const entry = this.store.ledger.get(refId);
    if (!entry || entry.state === 'released') return false;
    const account = this.store.accounts.get(entry.userId);
    if (account) this.#adjust(account, entry.currency, entry.amount);
    entry.state = 'released';
    entry.releasedAt = this.now().toISOString();
    this.store.ledger.set(refId, entry);
    return true;
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
