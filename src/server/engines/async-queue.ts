/**
 * A push-driven queue read as an async iterable: the producer (worker
 * messages) pushes items whenever they arrive, the consumer pulls them with
 * `for await`. Unbounded: the producer is a synthesizer running ~100x real
 * time on a bounded text, so its output is a few MB at most.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #waiter: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  #ended = false;
  #error: unknown;
  #failed = false;
  /** Whether `end()` or `fail()` was called. */
  get settled(): boolean {
    return this.#ended || this.#failed;
  }

  push(item: T): void {
    if (this.settled) return;
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter.resolve({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  /** No more items: the consumer finishes after draining what is queued. */
  end(): void {
    if (this.settled) return;
    this.#ended = true;
    this.#waiter?.resolve({ value: undefined, done: true });
    this.#waiter = undefined;
  }

  /** Fails the consumer at once; queued items are dropped (the result is void anyway). */
  fail(error: unknown): void {
    if (this.settled) return;
    this.#failed = true;
    this.#error = error;
    this.#items.length = 0;
    this.#waiter?.reject(error);
    this.#waiter = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.#failed) return Promise.reject(this.#error);
        if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.#waiter = { resolve, reject };
        });
      },
      return: (): Promise<IteratorResult<T>> => {
        if (!this.settled) {
          this.#ended = true;
          this.#items.length = 0;
        }
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
