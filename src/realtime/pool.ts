/**
 * Prewarmed realtime connections. Spec 4.10 allows one
 * generation per connection, so a voice agent would pay TCP, TLS, the
 * WebSocket handshake and `authenticated` on every turn. A pool keeps
 * `spare` connections authenticated and hands one to each session that asks
 * (`connectionSource`), refilling in the background; a spare older than
 * `maxIdleMs` is closed and replaced, before a server's idle timeout can.
 *
 * A spare that dies while waiting is simply dropped. When none is ready the
 * session connects as it would without a pool: the pool never makes a turn
 * slower.
 */
import { connect, type ConnectOptions, type ConnectionSource, type RealtimeConnection } from './connection.js';

export interface ConnectionPoolOptions {
  /** `{ws_url}`. */
  wsUrl: string;
  apiKey: string;
  /** Connections kept ready; default 1. */
  spare?: number;
  /** A spare unused for this long is replaced; default 60_000 ms. */
  maxIdleMs?: number;
  /** Per connection; default 10_000 ms. */
  connectTimeoutMs?: number;
}

interface Spare {
  connection: RealtimeConnection;
  since: number;
}

export interface PoolStats {
  /** Connections handed out ready. */
  hits: number;
  /** Asks served by a fresh connect (no spare ready). */
  misses: number;
  /** Spares ready now. */
  ready: number;
}

export class ConnectionPool {
  readonly #opts: Required<Pick<ConnectionPoolOptions, 'spare' | 'maxIdleMs'>> & ConnectionPoolOptions;
  readonly #ready: Spare[] = [];
  #connecting = 0;
  #closed = false;
  #hits = 0;
  #misses = 0;
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: ConnectionPoolOptions) {
    this.#opts = { ...options, spare: Math.max(0, options.spare ?? 1), maxIdleMs: options.maxIdleMs ?? 60_000 };
    this.#fill();
    this.#sweep = setInterval(() => this.#recycle(), Math.max(1_000, Math.floor(this.#opts.maxIdleMs / 4)));
    this.#sweep.unref();
  }

  get stats(): PoolStats {
    return { hits: this.#hits, misses: this.#misses, ready: this.#ready.length };
  }

  /** A `connectionSource` for sessions: a ready spare when there is one, else a fresh connect. */
  readonly source: ConnectionSource = async (options: ConnectOptions) => {
    const spare = this.#take();
    if (spare) {
      this.#hits++;
      spare.rebind({ onEvent: options.onEvent, onClose: options.onClose });
      this.#fill();
      return spare;
    }
    this.#misses++;
    this.#fill();
    return connect(options);
  };

  /** Resolves once `spare` connections are ready (or the pool gave up trying). */
  async ready(timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (this.#ready.length < this.#opts.spare && this.#connecting > 0 && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Close every spare; sessions already holding a connection keep it. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweep);
    for (const s of this.#ready.splice(0)) s.connection.close(1000, 'pool closed');
  }

  #take(): RealtimeConnection | undefined {
    while (this.#ready.length > 0) {
      const spare = this.#ready.shift()!;
      if (!spare.connection.closed) return spare.connection;
    }
    return undefined;
  }

  #fill(): void {
    while (!this.#closed && this.#ready.length + this.#connecting < this.#opts.spare) {
      this.#connecting++;
      let spare: Spare | undefined;
      const options: ConnectOptions = {
        wsUrl: this.#opts.wsUrl,
        apiKey: this.#opts.apiKey,
        ...(this.#opts.connectTimeoutMs !== undefined && { connectTimeoutMs: this.#opts.connectTimeoutMs }),
        // Until handed out: nothing to hear, and a spare that closes leaves the pool.
        onEvent: () => undefined,
        onClose: () => {
          const i = spare ? this.#ready.indexOf(spare) : -1;
          if (i >= 0) this.#ready.splice(i, 1);
          this.#fill();
        },
      };
      connect(options).then(
        (connection) => {
          this.#connecting--;
          if (this.#closed) {
            connection.close(1000, 'pool closed');
            return;
          }
          spare = { connection, since: Date.now() };
          this.#ready.push(spare);
        },
        () => {
          // Not now: the next ask connects itself, and asks again for a spare.
          this.#connecting--;
        },
      );
    }
  }

  #recycle(): void {
    const now = Date.now();
    for (const s of [...this.#ready]) {
      if (now - s.since < this.#opts.maxIdleMs) continue;
      this.#ready.splice(this.#ready.indexOf(s), 1);
      s.connection.close(1000, 'idle spare replaced');
    }
    this.#fill();
  }
}
