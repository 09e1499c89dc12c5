/**
 * The browser client's event emitter: the part of eventemitter3's API that
 * `BrowserSpeech` offers (`on`/`addListener`, `once`, `off`/`removeListener`,
 * `removeAllListeners`, `emit`, `listenerCount`), typed by an event map the
 * same way, with the same semantics: listeners run synchronously in the
 * order they were added, with the emitter as `this`; a `once` listener is
 * removed before it runs; `emit` calls the listeners registered when it
 * began and says whether there were any; `off(event, fn)` removes every
 * registration of `fn`.
 *
 * Why hand-written, while the Node client keeps eventemitter3:
 * eventemitter3 is CommonJS, so bundling it brings esbuild's interop helpers
 * with it, about 1.1 KiB of the browser bundle's 30 KiB gzipped budget, the
 * largest part of the browser path that is not a feature (the machine, the
 * reader, the codec, the segmenter and the player are). This is a map of
 * arrays; test/browser/emitter.test.ts holds it to the semantics above.
 */

/** A listener of an event whose arguments are `A`. */
type Listener<A extends unknown[]> = (...args: A) => void;

interface Registration {
  /** Any listener (a function of any arguments is one of `never`). */
  fn: (...args: never) => void;
  once: boolean;
}

export class Emitter<Events extends { [E in keyof Events]: unknown[] }> {
  readonly #listeners = new Map<keyof Events, Registration[]>();

  on<E extends keyof Events>(event: E, fn: Listener<Events[E]>): this {
    return this.#add(event, fn, false);
  }

  addListener<E extends keyof Events>(event: E, fn: Listener<Events[E]>): this {
    return this.#add(event, fn, false);
  }

  once<E extends keyof Events>(event: E, fn: Listener<Events[E]>): this {
    return this.#add(event, fn, true);
  }

  /** Remove every registration of `fn` for `event`, or all of the event's listeners without `fn`. */
  off<E extends keyof Events>(event: E, fn?: Listener<Events[E]>): this {
    const list = this.#listeners.get(event);
    if (!list) return this;
    const kept = fn === undefined ? [] : list.filter((r) => r.fn !== fn);
    if (kept.length > 0) this.#listeners.set(event, kept);
    else this.#listeners.delete(event);
    return this;
  }

  removeListener<E extends keyof Events>(event: E, fn?: Listener<Events[E]>): this {
    return this.off(event, fn);
  }

  /** Remove the listeners of `event`, or of every event. */
  removeAllListeners(event?: keyof Events): this {
    if (event === undefined) this.#listeners.clear();
    else this.#listeners.delete(event);
    return this;
  }

  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.length ?? 0;
  }

  /** Call the listeners of `event` with `args`; false when it had none. */
  emit<E extends keyof Events>(event: E, ...args: Events[E]): boolean {
    const list = this.#listeners.get(event);
    if (!list) return false;
    for (const r of list) {
      if (r.once) this.#removeOne(event, r);
      (r.fn as Listener<Events[E]>).apply(this, args);
    }
    return true;
  }

  #add(event: keyof Events, fn: Registration['fn'], once: boolean): this {
    // A new array each time: an `emit` under way keeps walking the one it began with.
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), { fn, once }]);
    return this;
  }

  #removeOne(event: keyof Events, registration: Registration): void {
    const kept = (this.#listeners.get(event) ?? []).filter((r) => r !== registration);
    if (kept.length > 0) this.#listeners.set(event, kept);
    else this.#listeners.delete(event);
  }
}
