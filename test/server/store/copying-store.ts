/**
 * A Store that behaves like a database (the store contract): `get` and
 * `values` hand out copies and `set` stores a copy, so a change made to a
 * record in place is lost unless it is written back with `set`. Running the
 * server on it shows whether every mutation is saved, which a SQL store
 * needs and the in-memory store forgives.
 */
import { deepCopy as copy, MemoryCollection } from '../../../src/server/store/memory.js';
import type { Account, Collection, LedgerEntry, Store } from '../../../src/server/store/types.js';


class CopyingCollection<T> implements Collection<T> {
  readonly #inner = new MemoryCollection<T>();
  get(key: string): T | undefined {
    const v = this.#inner.get(key);
    return v === undefined ? undefined : copy(v);
  }
  set(key: string, value: T): void {
    this.#inner.set(key, copy(value));
  }
  delete(key: string): boolean {
    return this.#inner.delete(key);
  }
  *values(): IterableIterator<T> {
    for (const v of [...this.#inner.values()]) yield copy(v);
  }
  get size(): number {
    return this.#inner.size;
  }
}

export class CopyingStore implements Store {
  readonly accounts = new CopyingCollection<Account>();
  readonly ledger = new CopyingCollection<LedgerEntry>();
  readonly #collections = new Map<string, CopyingCollection<unknown>>();
  collection<T>(name: string): Collection<T> {
    let c = this.#collections.get(name);
    if (!c) this.#collections.set(name, (c = new CopyingCollection<unknown>()));
    return c as Collection<T>;
  }
}
