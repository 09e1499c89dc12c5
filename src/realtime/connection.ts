/**
 * One realtime v2 WebSocket connection (spec 4.10, 5): connect with the
 * subprotocol and a Bearer header (or a browser ticket in an `auth` frame),
 * wait for `authenticated`, then deliver every server frame read by the
 * tolerant reader (`protocol/server-reader.ts`: an unknown or unneeded
 * malformed event becomes one `warning` per event name, only an unusable
 * frame closes with 1002), keep the connection alive with protocol `ping`s
 * when idle, and report how it closed.
 *
 * The key travels only in the `Authorization` header, never in the URL.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { AbortError, ConnectionError, ProtocolError, RealtimeServerError, registerSecret, TimeoutError, type VoxpipeError } from '../errors.js';
import { encodeFrame, readServerFrame } from '../protocol/wire.js';
import { CloseCode, ErrorCode, isRetryableClose, SUBPROTOCOL } from '../protocol/constants.js';
import type { AuthenticatedEvent, ClientEvent, ServerEvent } from '../protocol/events.js';
import { LIMITS } from '../protocol/limits.js';
import { FIELD_NOT_FOUND, IGNORED_SERVER_EVENT, INVALID_SERVER_FRAME } from '../protocol/server-reader.js';
import { handshakeError } from './handshake.js';
import { liveUrl } from '../config.js';
import { KEEPALIVE_BUSY_MAX_MS, serverActivity, type ServerActivity } from './budgets.js';

/** Longest wait for the peer's close frame after our own before the socket is cut. */
const CLOSE_GRACE_MS = 1_000;

/** How a connection ended. */
export interface CloseInfo {
  /** WebSocket close code; 1006 when the transport dropped without a close frame. */
  code: number;
  reason: string;
  /** A close frame was exchanged. */
  wasClean: boolean;
  /** Why, when the client ended it (bad frame, dead peer). */
  error?: VoxpipeError;
}

export interface ConnectOptions {
  /** `{ws_url}`, e.g. `ws://127.0.0.1:8080`; the path `/v2/tts/live` is added. */
  wsUrl: string;
  /** API key, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Browser ticket, sent in an `auth` frame; used only without `apiKey`. */
  ticket?: string;
  /** `Origin` header (tickets are bound to it). */
  origin?: string;
  /** TCP, handshake and `authenticated` together; default 10_000 ms. */
  connectTimeoutMs?: number;
  /** Send a `ping` after this long without sending anything; default 15_000 ms. */
  keepAliveMs?: number;
  /** A `ping` with nothing received for this long means the peer is gone (unless the server is busy, see `activity`); default 10_000 ms. */
  pongTimeoutMs?: number;
  /**
   * What all connections of this process see of the server; default the one
   * shared by every connection to `wsUrl`'s origin (`serverActivity()`). A
   * `ping` unanswered while other connections received frames is checked
   * again, for at most `KEEPALIVE_BUSY_MAX_MS` (budgets.ts).
   */
  activity?: ServerActivity;
  /** Largest frame accepted; default the protocol's 1 MiB plus 64 KiB of slack. */
  maxPayloadBytes?: number;
  signal?: AbortSignal;
  /** Every server frame after `authenticated`, decoded and validated. */
  onEvent(event: ServerEvent): void;
  /** Called once, however the connection ends (also after `close()`). */
  onClose(info: CloseInfo): void;
}

/** An open, authenticated connection. */
export interface RealtimeConnection {
  readonly authenticated: AuthenticatedEvent;
  readonly sessionId: string;
  /** Encode and send a client event; ignored once the connection is closing. */
  send(event: ClientEvent): void;
  /** Stop reading frames (backpressure: the server then sees a full TCP window). */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
  /** Close with a close frame. */
  close(code?: number, reason?: string): void;
  /** Drop the socket at once. */
  terminate(): void;
  readonly closed: boolean;
  /** Hand the connection to a new owner: its events and its close go to `handlers` from now on (a pooled connection). */
  rebind(handlers: ConnectionHandlers): void;
}

/** Who receives a connection's events and its close. */
export type ConnectionHandlers = Pick<ConnectOptions, 'onEvent' | 'onClose'>;

/**
 * Where a session gets its connections: `connect()` by default, or a pool of
 * connections already authenticated (`createSpeechPool`).
 */
export type ConnectionSource = (options: ConnectOptions) => Promise<RealtimeConnection>;

/** Slack over the protocol's frame limit, so a maximal frame plus envelope still fits. */
const PAYLOAD_SLACK_BYTES = 64 * 1024; // 64 KiB

/** The live URL under `{ws_url}` (a path prefix of the root is kept): `config.ts` derives every URL. */
export { liveUrl } from '../config.js';

function reasonText(reason: Buffer): string {
  return reason.toString('utf8');
}

class Connection implements RealtimeConnection {
  authenticated!: AuthenticatedEvent;
  readonly #ws: WebSocket;
  #opts: ConnectOptions;
  readonly #keepAliveMs: number;
  readonly #pongTimeoutMs: number;
  readonly #pingPrefix = `ping-${randomUUID().slice(0, 8)}`;
  #pings = 0;
  #keepAliveTimer: NodeJS.Timeout | undefined;
  #pongTimer: NodeJS.Timeout | undefined;
  /** Frames received so far: a count, not a clock read per frame (CPU per MB). */
  #received = 0;
  readonly #activity: ServerActivity;
  /** `#activity.frames` when the pending liveness check began. */
  #framesAtCheck = 0;
  /** Time the pending liveness check has waited on a busy server. */
  #busyWaitedMs = 0;
  #closed = false;
  /** Names of events skipped so far (one warning each). */
  readonly #skipped = new Set<string>();

  constructor(ws: WebSocket, opts: ConnectOptions) {
    this.#ws = ws;
    this.#opts = opts;
    this.#keepAliveMs = opts.keepAliveMs ?? 15_000; // 15 s
    this.#pongTimeoutMs = opts.pongTimeoutMs ?? 10_000; // 10 s
    this.#activity = opts.activity ?? serverActivity(opts.wsUrl);
  }

  get sessionId(): string {
    return this.authenticated.session_id;
  }

  get paused(): boolean {
    return this.#ws.isPaused;
  }

  get closed(): boolean {
    return this.#closed;
  }

  rebind(handlers: ConnectionHandlers): void {
    this.#opts = { ...this.#opts, onEvent: handlers.onEvent, onClose: handlers.onClose };
  }

  /** Switch from the handshake listeners to the running ones. */
  attach(authenticated: AuthenticatedEvent): void {
    this.authenticated = authenticated;
    this.#ws.on('message', (data: Buffer, isBinary: boolean) => this.#onMessage(data, isBinary));
    this.#ws.on('close', (code: number, reason: Buffer) => this.#end({ code, reason: reasonText(reason), wasClean: code !== CloseCode.abnormal }));
    this.#ws.on('error', () => {
      // 'close' follows every 'error'; the code there (1006) says enough.
    });
    this.#armKeepAlive();
  }

  send(event: ClientEvent): void {
    if (this.#closed || this.#ws.readyState !== WebSocket.OPEN) return;
    this.#ws.send(encodeFrame(event));
    this.#armKeepAlive();
  }

  pause(): void {
    this.#ws.pause();
  }

  resume(): void {
    this.#ws.resume();
  }

  close(code: number = CloseCode.normal, reason = ''): void {
    if (this.#closed) return;
    // A paused socket (the reader was slow) would never read the peer's
    // close frame, and ws then waits 30 s before it lets the socket go,
    // keeping the process alive: read again, and give the handshake at most
    // CLOSE_GRACE_MS before cutting the socket.
    const ws = this.#ws;
    ws.resume();
    ws.close(code, reason);
    const grace = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
    ws.once('close', () => clearTimeout(grace));
    this.#end({ code, reason, wasClean: true });
  }

  terminate(): void {
    if (this.#closed) return;
    this.#ws.terminate();
    this.#end({ code: CloseCode.abnormal, reason: 'terminated', wasClean: false });
  }

  #onMessage(data: Buffer, isBinary: boolean): void {
    if (this.#closed) return;
    this.#received++;
    this.#activity.frames++;
    const read = isBinary
      ? readServerFrame(data)
      : ({ kind: 'unusable', error: new ProtocolError(INVALID_SERVER_FRAME, 'server sent a text frame; v2 frames are binary MessagePack') } as const);
    switch (read.kind) {
      case 'event':
        // A needed field under no name the reader knows: read by meaning, said once per kind.
        if (read.missing !== undefined && !this.#skipped.has(read.missing)) {
          this.#skipped.add(read.missing);
          this.#opts.onEvent({ event: 'warning', event_id: '', trace_id: '', timestamp: Date.now(), code: FIELD_NOT_FOUND, message: `the server's ${read.missing} was found under no name the client knows; read by its meaning` });
        }
        this.#opts.onEvent(read.event);
        return;
      case 'skip':
        // One warning per kind of skipped event: a deployment that sends its own
        // event after every segment must not flood the listener.
        if (this.#skipped.has(read.name)) return;
        this.#skipped.add(read.name);
        this.#opts.onEvent({ event: 'warning', event_id: '', trace_id: '', timestamp: Date.now(), code: IGNORED_SERVER_EVENT, message: read.message });
        return;
      case 'unusable':
        this.#ws.close(CloseCode.protocolError, read.error.code);
        this.#end({ code: CloseCode.protocolError, reason: read.error.code, wasClean: false, error: read.error });
        return;
    }
  }

  #armKeepAlive(): void {
    clearTimeout(this.#keepAliveTimer);
    if (this.#closed || this.#keepAliveMs <= 0) return;
    this.#keepAliveTimer = setTimeout(() => this.#ping(), this.#keepAliveMs);
    this.#keepAliveTimer.unref();
  }

  /** Nothing sent for keepAliveMs: ping, and expect some frame back within pongTimeoutMs. */
  #ping(): void {
    if (this.#closed) return;
    const sentAt = this.#received;
    this.send({ event: 'ping', event_id: `${this.#pingPrefix}-${++this.#pings}`, timestamp: Date.now() });
    // One liveness check at a time: a later ping must not push the deadline of an earlier one.
    if (this.#pongTimer !== undefined) return;
    this.#busyWaitedMs = 0;
    this.#checkPongLater(sentAt);
  }

  /** `sentAt`: the frames received when the ping went out. */
  #checkPongLater(sentAt: number): void {
    this.#framesAtCheck = this.#activity.frames;
    this.#pongTimer = setTimeout(() => this.#checkPong(sentAt), this.#pongTimeoutMs);
    this.#pongTimer.unref();
  }

  #checkPong(sentAt: number): void {
    this.#pongTimer = undefined;
    if (this.#closed || this.#received > sentAt) return;
    // A paused reader receives nothing by design; look again later.
    if (this.paused) {
      this.#checkPongLater(sentAt);
      return;
    }
    // Other connections to the server received frames meanwhile: it is alive and behind, not gone.
    if (this.#activity.frames !== this.#framesAtCheck && this.#busyWaitedMs < KEEPALIVE_BUSY_MAX_MS) {
      this.#busyWaitedMs += this.#pongTimeoutMs;
      this.#checkPongLater(sentAt);
      return;
    }
    const error = new ConnectionError('keepalive_timeout', `no frame within ${this.#pongTimeoutMs} ms of a ping`, { retryable: isRetryableClose(CloseCode.abnormal, false), closeCode: CloseCode.abnormal });
    this.#ws.terminate();
    this.#end({ code: CloseCode.abnormal, reason: 'keep-alive timeout', wasClean: false, error });
  }

  #end(info: CloseInfo): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#keepAliveTimer);
    clearTimeout(this.#pongTimer);
    this.#opts.onClose(info);
  }
}

/**
 * Open an authenticated realtime connection. Resolves after `authenticated`;
 * rejects with `ConnectionError` (refused handshake: `status` and the server's
 * code; network failure: `connection_failed`, retryable), `TimeoutError`,
 * `RealtimeServerError` (an `error` frame during authentication),
 * `ProtocolError` (wrong subprotocol, bad frame) or `AbortError`.
 */
export function connect(opts: ConnectOptions): Promise<RealtimeConnection> {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000; // 10 s
  const maxPayload = opts.maxPayloadBytes ?? LIMITS.maxFrameBytes + PAYLOAD_SLACK_BYTES;
  registerSecret(opts.apiKey);
  registerSecret(opts.ticket);
  if (opts.signal?.aborted) return Promise.reject(new AbortError());

  const headers: Record<string, string> = {};
  if (opts.apiKey) headers['authorization'] = `Bearer ${opts.apiKey}`;
  const wsOptions: WebSocket.ClientOptions = { headers, perMessageDeflate: false, maxPayload };
  if (opts.origin !== undefined) wsOptions.origin = opts.origin;
  const ws = new WebSocket(liveUrl(opts.wsUrl), SUBPROTOCOL, wsOptions);
  const connection = new Connection(ws, opts);

  return new Promise<RealtimeConnection>((resolve, reject) => {
    let settled = false;
    const settle = (error: VoxpipeError | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      ws.removeAllListeners('message');
      ws.removeAllListeners('close');
      ws.removeAllListeners('unexpected-response');
      if (error) {
        ws.on('error', () => {}); // late socket errors of a dead attempt
        if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
        reject(error);
      } else {
        resolve(connection);
      }
    };
    const onAbort = () => settle(new AbortError('connect aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => settle(new TimeoutError(`realtime connect took over ${connectTimeoutMs} ms`, { retryable: true })), connectTimeoutMs);

    ws.once('unexpected-response', (req, res) => {
      void handshakeError(res).then((error) => {
        req.destroy();
        settle(error);
      });
    });
    ws.on('error', (err: Error) => {
      settle(new ConnectionError('connection_failed', `realtime connection failed: ${err.message}`, { retryable: true, cause: err }));
    });
    ws.once('open', () => {
      if (ws.protocol !== SUBPROTOCOL) {
        settle(new ProtocolError(ErrorCode.invalidMessage, `server chose subprotocol "${ws.protocol}", not ${SUBPROTOCOL}`));
        return;
      }
      if (!opts.apiKey && opts.ticket) ws.send(encodeFrame({ event: 'auth', token: opts.ticket }));
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        settle(new ProtocolError(INVALID_SERVER_FRAME, 'server sent a text frame'));
        return;
      }
      const read = readServerFrame(data);
      if (read.kind === 'unusable') {
        settle(read.error);
        return;
      }
      if (read.kind === 'skip') return; // an event of its own before `authenticated`: not ours to judge
      const event = read.event;
      if (event.event === 'authenticated') {
        settle(undefined);
        ws.removeAllListeners('error');
        connection.attach(event);
      } else if (event.event === 'error') {
        settle(new RealtimeServerError(event.code, event.message, event.terminal, { retryable: event.retryable, stage: event.stage }));
      } else {
        settle(new ProtocolError(ErrorCode.invalidState, `expected authenticated, got ${event.event}`));
      }
    });
    ws.on('close', (code: number, reason: Buffer) => {
      const text = reasonText(reason);
      settle(
        new ConnectionError('connection_closed', `realtime connection closed during the handshake (${code}${text ? `: ${text}` : ''})`, {
          closeCode: code,
          retryable: isRetryableClose(code),
        }),
      );
    });
  });
}
