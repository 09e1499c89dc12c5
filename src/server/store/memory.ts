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
  entries(): IterableIterator<[string, T]> {
    return this.#map.entries();
  }
}

/** A deep copy that keeps Buffers Buffers (structuredClone would make them plain Uint8Arrays). */
export function deepCopy<T>(value: T): T {
  if (Buffer.isBuffer(value)) return Buffer.from(value) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => deepCopy(v)) as T;
  if (value instanceof Map) return new Map([...value].map(([k, v]: [unknown, unknown]) => [k, deepCopy(v)])) as T;
  if (value instanceof Set) return new Set([...value].map((v: unknown) => deepCopy(v))) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = deepCopy(v);
    return out as T;
  }
  return value;
}

/** The default store: everything in this process's memory. */
export class MemoryStore implements Store {
  readonly accounts = new MemoryCollection<Account>();
  readonly ledger = new MemoryCollection<LedgerEntry>();
  readonly #collections = new Map<string, MemoryCollection<unknown>>();

  /**
   * A deep copy of everything, as it is now: what a persistent store would
   * hold if this process died at this instant (tests start a new server on
   * it to show a restart loses nothing).
   */
  snapshot(): MemoryStore {
    const copy = new MemoryStore();
    const clone = <T>(from: MemoryCollection<T>, to: MemoryCollection<T>) => {
      for (const [key, value] of from.entries()) to.set(key, deepCopy(value));
    };
    clone(this.accounts, copy.accounts);
    clone(this.ledger, copy.ledger);
    for (const [name, collection] of this.#collections) clone(collection, copy.collection(name) as MemoryCollection<unknown>);
    return copy;
  }

  collection<T>(name: string): Collection<T> {
    let c = this.#collections.get(name);
    if (!c) {
      c = new MemoryCollection<unknown>();
      this.#collections.set(name, c);
    }
    return c as Collection<T>;
  }
}
