/**
 * A tiny raw realtime v2 client for the server tests: a `ws` socket that
 * sends MessagePack frames and records every server event, decoded and
 * validated by the shared codec (so a malformed server event fails the test).
 * Deliberately not the library's client: these tests pin the wire.
 */
import WebSocket from 'ws';
import { encodeFrame, decodeServerEvent } from '../../src/protocol/codec.js';
import { REALTIME_PATHS, SUBPROTOCOL } from '../../src/protocol/constants.js';
import type { ServerEvent, ServerEventName, ServerEventOf } from '../../src/protocol/events.js';

export interface ConnectOptions {
  /** API key for `Authorization: Bearer`; omit for a browser-ticket connection. */
  apiKey?: string;
  /** Subprotocols to offer; default [SUBPROTOCOL]; `[]` offers none. */
  protocols?: string[];
  /** Extra handshake headers (Origin, a raw Authorization...). */
  headers?: Record<string, string>;
  /** Query string appended to the path (e.g. `?token=x`). */
  query?: string;
}

/** A refused handshake: the HTTP status and JSON body sent before 101. */
export interface HandshakeRefusal {
  status: number;
  body: { error?: { code?: string; message?: string } };
  headers: Record<string, string | string[] | undefined>;
}

export interface CloseInfo {
  code: number;
  reason: string;
}

/** Default wait for one event, ms. */
const WAIT_MS = 10_000;

export class RealtimeTestClient {
  /** Every event received, in order. */
  readonly events: ServerEvent[] = [];
  /** Frames that did not decode as server events (should stay empty). */
  readonly badFrames: unknown[] = [];
  readonly closed: Promise<CloseInfo>;
  #cursor = 0;
  #waiters: (() => void)[] = [];
  #closeInfo: CloseInfo | undefined;
  #eventIds = 0;

  private constructor(readonly ws: WebSocket) {
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        this.badFrames.push(data.toString());
      } else {
        try {
          this.events.push(decodeServerEvent(data));
        } catch (err) {
          this.badFrames.push(err);
        }
      }
      this.#wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.#closeInfo = { code, reason: reason.toString() };
        resolve(this.#closeInfo);
        this.#wake();
      });
    });
    ws.on('error', () => undefined);
  }

  /** Open a connection; rejects with a HandshakeRefusal when the server answers before 101. */
  static connect(wsUrl: string, options: ConnectOptions = {}): Promise<RealtimeTestClient> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey !== undefined) headers['Authorization'] = `Bearer ${options.apiKey}`;
    const protocols = options.protocols ?? [SUBPROTOCOL];
    const ws = new WebSocket(`${wsUrl}${REALTIME_PATHS.live}${options.query ?? ''}`, protocols, { headers, perMessageDeflate: false, maxPayload: 4 * 1024 * 1024 });
    const client = new RealtimeTestClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: HandshakeRefusal['body'] = {};
          try {
            body = JSON.parse(text) as HandshakeRefusal['body'];
          } catch {
            // leave empty: the test will say what it expected
          }
          reject(Object.assign(new Error(`handshake refused with ${res.statusCode}`), { refusal: { status: res.statusCode ?? 0, body, headers: res.headers } }));
          ws.terminate();
        });
      });
      ws.once('error', (err) => reject(err));
    });
  }

  /** Connect expecting a refusal; returns it (throws if the socket opened). */
  static async refused(wsUrl: string, options: ConnectOptions = {}): Promise<HandshakeRefusal> {
    try {
      const client = await RealtimeTestClient.connect(wsUrl, options);
      client.ws.terminate();
    } catch (err) {
      const refusal = (err as { refusal?: HandshakeRefusal }).refusal;
      if (refusal) return refusal;
      throw err;
    }
    throw new Error('expected the handshake to be refused, but it opened');
  }

  /** A fresh client event_id. */
  id(prefix = 'c'): string {
    return `${prefix}-${++this.#eventIds}`;
  }

  /** Send one event as a MessagePack binary frame. */
  send(event: Record<string, unknown>): void {
    this.ws.send(encodeFrame(event));
  }

  /** Send raw bytes (binary) or a string (a text frame). */
  sendRaw(data: Uint8Array | string): void {
    this.ws.send(data, { binary: typeof data !== 'string' });
  }

  /** The close code and reason once closed, else undefined. */
  get closeInfo(): CloseInfo | undefined {
    return this.#closeInfo;
  }

  /**
   * The next event (after the previous match) named `name` and matching
   * `where`; events skipped over stay in `events`. Rejects when the socket
   * closes first or after `timeoutMs`.
   */
  async next<N extends ServerEventName>(name: N, where: (e: ServerEventOf<N>) => boolean = () => true, timeoutMs = WAIT_MS): Promise<ServerEventOf<N>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = this.#cursor; i < this.events.length; i++) {
        const e = this.events[i]!;
        if (e.event === name && where(e as ServerEventOf<N>)) {
          this.#cursor = i + 1;
          return e as ServerEventOf<N>;
        }
      }
      if (this.#closeInfo) throw new Error(`closed (${this.#closeInfo.code} ${this.#closeInfo.reason}) before ${name}; got ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${name}; got ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Names of the events received so far (for failure messages). */
  describe(): string {
    return this.events.map((e) => (e.event === 'error' ? `error(${(e as { code: string }).code})` : e.event)).join(', ');
  }

  /** Events of `name` received so far. */
  all<N extends ServerEventName>(name: N): ServerEventOf<N>[] {
    return this.events.filter((e) => e.event === name) as ServerEventOf<N>[];
  }

  /** Audio bytes received so far, concatenated in sequence order (optionally for one segment). */
  audio(segmentId?: string): Buffer {
    const frames = this.all('audio').filter((a) => segmentId === undefined || a.segment_id === segmentId);
    frames.sort((a, b) => a.sequence - b.sequence);
    return Buffer.concat(frames.map((a) => Buffer.from(a.audio)));
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}

/** The MessagePack frame of `event`, for tests that send crafted bytes. */
export { encodeFrame };
