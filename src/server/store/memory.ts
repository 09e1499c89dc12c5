import type { Account, Collection, LedgerEntry, Store } from './types.js';

/** A `Collection` over a Map: insertion order is creation order. */
export class MemoryCollection<T> implements Collection<T> {
  readonly #map = new Map<string, T>();
  get(key: string): T | undefined {
    return this.#map.get(key);
  }
  set(key: string, value: T): void {
    this.#map.set(key, value);
  }
  delete(key: string): boolean {
    return this.#map.delete(key);
  }
  values(): IterableIterator<T> {
    return this.#map.values();
  }
  get size(): number {
    return this.#map.size;
  }
}

/** The default store: everything in this process's memory. */
export class MemoryStore implements Store {
  readonly accounts = new MemoryCollection<Account>();
  readonly ledger = new MemoryCollection<LedgerEntry>();
  readonly #collections = new Map<string, MemoryCollection<unknown>>();

  collection<T>(name: string): Collection<T> {
    let c = this.#collections.get(name);
    if (!c) {
      c = new MemoryCollection<unknown>();
      this.#collections.set(name, c);
    }
    return c as Collection<T>;
  }
}
