/**
 * One realtime connection: authentication, frame decoding and dispatch,
 * the server-event envelope, timers, fault injection and how the
 * connection ends. What a request does lives in simple-mode.ts and
 * reliable-mode.ts, behind the SessionPort this class implements.
 *
 * Decisions the spec leaves open:
 * - Before authentication, every frame other than a valid `auth` ends the
 *   connection (`authentication_required`, or the decode error's code,
 *   terminal, close 1008). After it, a frame that fails to decode gets an
 *   `error` with the codec's code and `path`, non-terminal.
 * - A WebSocket text frame is `invalid_message` (frames are MessagePack binary).
 * - A repeated client `event_id` on a connection is `invalid_message`
 *   (non-terminal; the frame is ignored).
 * - `ping` without `event_id` once a reliable request is open is `invalid_message`.
 * - A second `start` on a connection is `invalid_state` (non-terminal). A
 *   `start` refused by validation (`model_not_found`, `voice_not_found`,
 *   `unsupported_parameter`) is non-terminal and does not count: the client
 *   may send a corrected one.
 * - `text`/`flush`/`stop`/`input` before `start` is `invalid_state`.
 * - A terminal error ends the request: `finish` with reason `error` where a
 *   request exists, then close (see closeCodeFor). The request becomes
 *   `failed_terminal` when generation failed without being retryable,
 *   otherwise `failed_retryable` (its journal can be resumed).
 * - No frame for REALTIME_TUNING.idleTimeoutMs while nothing generates:
 *   `finish` with reason `timeout` (the request becomes `failed_retryable`),
 *   close 1000; without a request just close 1000.
 * - `audio.sequence` starts at 1 on each connection and grows by one per frame.
 * - `finish.units`: units charged for the request (reliable: all its segments,
 *   on every connection; simple: its committed segments).
 * - Every event has `event_id`, `trace_id` (one per connection) and
 *   `timestamp` (Unix ms); replies carry `in_reply_to`.
 */
import type { RawData, WebSocket } from 'ws';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError } from '../../errors.js';
import { decodeMap, parseClientEvent } from '../../protocol/codec.js';
import type { RealtimeRewriter } from '../dialect.js';
import { LIMITS } from '../../protocol/limits.js';
import { CloseCode, ErrorCode, FinishReason, Mode, PROTOCOL_VERSION, RequestState } from '../../protocol/constants.js';
import type { AuthEvent, ClientEvent, ServerEventName, StartEvent } from '../../protocol/events.js';
import type { ServerContext } from '../context.js';
import type { Account } from '../store/types.js';
import { SessionBilling } from './billing.js';
import { pcmMetadata } from './capabilities.js';
import { closeCodeFor, RealtimeFailure } from './failure.js';
import type { HandshakeResult } from './handshake.js';
import { carriesPcmMetadata } from './ready.js';
import { openReliable } from './reliable-mode.js';
import type { RequestStore } from './request-store.js';
import { resolveRequest } from './resolve-request.js';
import type { AudioFields, EventBody, RequestHandler, SessionPort } from './session-port.js';
import { SimpleRequest } from './simple-mode.js';
import type { TicketBook } from './tickets.js';
import { REALTIME_TUNING } from './tuning.js';

/** What every session of the module shares. */
export interface SessionServices {
  ctx: ServerContext;
  tickets: TicketBook;
  requests: RequestStore;
  /** Called once when the connection has closed. */
  onClosed(session: Session): void;
}

const Phase = { authenticating: 'authenticating', open: 'open', closing: 'closing', closed: 'closed' } as const;
type Phase = (typeof Phase)[keyof typeof Phase];

function toBytes(data: RawData): Uint8Array {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return new Uint8Array(data);
}

/** A decode error as a failure with the codec's code and path. */
function decodeFailure(err: unknown, terminal: boolean): RealtimeFailure {
  if (err instanceof RealtimeFailure) return terminal ? new RealtimeFailure(err.code, err.message, { terminal, path: err.path, stage: 'decode' }) : err;
  if (err instanceof ProtocolError) return new RealtimeFailure(err.code as ErrorCode, err.message, { terminal, path: err.path, stage: 'decode' });
  return new RealtimeFailure(ErrorCode.invalidMessage, 'frame could not be decoded', { terminal, stage: 'decode' });
}

/** One realtime WebSocket connection, from handshake to close. */
export class Session implements SessionPort {
  readonly sessionId: string;
  /** One trace id per connection, on every event. */
  readonly traceId: string;
  readonly #ws: WebSocket;
  readonly #services: SessionServices;
  readonly #handshake: HandshakeResult;
  readonly #abort = new AbortController();
  readonly #eventIds = new Set<string>();
  readonly #eventPrefix: string;
  #phase: Phase = Phase.authenticating;
  #account: Account | undefined;
  #billing: SessionBilling | undefined;
  #handler: RequestHandler | undefined;
  #eventSeq = 0;
  #audioFrames = 0;
  #authTimer: NodeJS.Timeout | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  readonly #closed: Promise<void>;

  constructor(ws: WebSocket, handshake: HandshakeResult, services: SessionServices) {
    this.#ws = ws;
    this.#services = services;
    this.#handshake = handshake;
    this.sessionId = services.ctx.newId('sess');
    this.traceId = services.ctx.newId('trace');
    this.#rewrite = services.ctx.dialect.realtime();
    this.#eventPrefix = `ev_${this.sessionId.slice(5, 13)}_`;
    this.#closed = new Promise((resolve) => ws.once('close', () => resolve()));
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('close', () => this.#onClose());
    // ws reports protocol violations (oversized frame -> 1009, bad UTF-8 -> 1007) here and closes itself.
    ws.on('error', () => undefined);
    this.#armIdle();
    if (handshake.account) this.#authenticated(handshake.account, undefined);
    else this.#authTimer = setTimeout(() => this.#authTimeout(), services.ctx.authTimeoutMs);
  }

  // ------------------------------------------------------------ SessionPort

  get ctx(): ServerContext {
    return this.#services.ctx;
  }

  get account(): Account {
    return this.#account!;
  }

  get billing(): SessionBilling {
    return this.#billing!;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Resolves once the socket has closed. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /** The dialect's rewrite of every event of this connection (`dialect.ts`). */
  readonly #rewrite: RealtimeRewriter;

  send<N extends ServerEventName>(name: N, body: EventBody<N>, inReplyTo?: string): void {
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    const faulted = this.ctx.faults.rewriteEvent(name, body as Record<string, unknown>);
    if (faulted === undefined) return;
    body = faulted as EventBody<N>;
    const envelope: Record<string, unknown> = { event: name, event_id: `${this.#eventPrefix}${++this.#eventSeq}`, trace_id: this.traceId, timestamp: this.ctx.now().getTime() };
    if (inReplyTo !== undefined) envelope['in_reply_to'] = inReplyTo;
    for (const frame of this.#rewrite(Object.assign(envelope, body))) {
      if (frame['event'] === 'audio') this.#wireAudioFrames++;
      this.#emit(this.ctx.dialect.encode(frame));
    }
  }

  /**
   * Audio frames put on the wire: what the faults' `afterAudioFrames`
   * counts, so a test that counts the frames it received places a fault
   * the same under a dialect that splits or merges frames.
   */
  #wireAudioFrames = 0;

  /** Frames waiting behind a delayed one (a dialect's timing jitter); undefined when none wait. */
  #outbox: Promise<void> | undefined;
  #outboxDepth = 0;

  /** Send one encoded frame, delayed by the dialect's jitter with order kept. */
  #emit(bytes: Uint8Array): void {
    const jitter = this.ctx.dialect.jitter;
    const delayMs = jitter.maxMs > 0 && Math.random() < jitter.share ? Math.random() * jitter.maxMs : 0;
    if (delayMs === 0 && this.#outbox === undefined) {
      this.#ws.send(bytes);
      return;
    }
    this.#outboxDepth++;
    this.#outbox = (this.#outbox ?? Promise.resolve())
      .then(() => (delayMs > 0 ? sleep(delayMs) : undefined))
      .then(() => {
        if (this.#ws.readyState === this.#ws.OPEN) this.#ws.send(bytes);
        if (--this.#outboxDepth === 0) this.#outbox = undefined;
      });
  }

  sendAudio(fields: AudioFields): void {
    if (this.#phase !== Phase.open) return;
    const pcm = carriesPcmMetadata(fields.format) ? pcmMetadata(this.ctx) : {};
    this.send('audio', { ...fields, session_id: this.sessionId, sequence: ++this.#audioFrames, ...pcm });
    this.#checkAudioFaults();
  }

  async waitWritable(): Promise<void> {
    if (this.#ws.bufferedAmount <= REALTIME_TUNING.backpressureHighWaterBytes) return;
    const started = Date.now();
    while (this.#ws.bufferedAmount > REALTIME_TUNING.backpressureHighWaterBytes) {
      if (this.signal.aborted) return;
      if (Date.now() - started > REALTIME_TUNING.backpressureStallMs) {
        throw new RealtimeFailure(ErrorCode.clientBackpressure, `the client has not read ${this.#ws.bufferedAmount} queued bytes for ${REALTIME_TUNING.backpressureStallMs} ms`, { terminal: true, stage: 'delivery' });
      }
      await sleep(REALTIME_TUNING.backpressurePollMs);
    }
  }

  fail(failure: RealtimeFailure, inReplyTo?: string): void {
    if (this.#phase === Phase.closing || this.#phase === Phase.closed) return;
    this.send(
      'error',
      {
        code: failure.code,
        message: failure.message,
        retryable: failure.retryable,
        terminal: failure.terminal,
        session_id: this.sessionId,
        ...(this.#handler ? { request_id: this.#handler.requestId } : {}),
        ...(failure.stage !== undefined ? { stage: failure.stage } : {}),
        ...(failure.path !== undefined ? { path: failure.path } : {}),
      },
      inReplyTo,
    );
    if (!failure.terminal) return;
    const state = failure.stage === 'generation' && !failure.retryable ? RequestState.failedTerminal : RequestState.failedRetryable;
    this.#endRequest(FinishReason.error, state, { code: failure.code, message: failure.message });
    this.#close(closeCodeFor(failure.code, failure.retryable), failure.code);
  }

  finish(reason: FinishReason, inReplyTo?: string): void {
    if (this.#phase !== Phase.open || !this.#handler) return;
    if (reason === FinishReason.completed && this.ctx.faults.take('noFinishAfterStop')) return;
    this.send('finish', { request_id: this.#handler.requestId, session_id: this.sessionId, reason, units: this.#handler.units() }, inReplyTo);
    // The connection's one generation is over (spec 8): it no longer counts against the account's cap.
    this.#handshake.endGeneration?.();
    this.#close(CloseCode.normal, reason);
  }

  answerStatusAndClose(body: EventBody<'request_status'>, inReplyTo: string | undefined): void {
    this.send('request_status', body, inReplyTo);
    this.#close(CloseCode.normal, 'request_status');
  }

  // ------------------------------------------------------------ module API

  /**
   * Drain: an open request gets `finish` with reason `server_draining` (and
   * becomes `failed_retryable`), then close 1012. Resolves when the socket
   * closed, or cuts it after REALTIME_TUNING.drainCloseWaitMs.
   */
  async drain(): Promise<void> {
    if (this.#phase === Phase.closed) return;
    if (this.#phase !== Phase.closing) {
      this.#endRequest(FinishReason.serverDraining, RequestState.failedRetryable, { code: 'server_draining', message: 'the server restarted while the request was running' });
      this.#close(CloseCode.serviceRestart, 'server draining');
    }
    const timer = setTimeout(() => this.#ws.terminate(), REALTIME_TUNING.drainCloseWaitMs);
    await this.#closed;
    clearTimeout(timer);
  }

  /** Cut the connection at once (server close). */
  terminate(): void {
    this.#ws.terminate();
  }

  // ------------------------------------------------------------ internals

  /**
   * The frames still to handle while one waits on the store (a ledger hold,
   * a ticket's claim): handled one after the other, in arrival order.
   */
  #inbox: Promise<void> | undefined;

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#phase === Phase.closing || this.#phase === Phase.closed) return;
    this.#armIdle();
    if (this.#inbox) {
      this.#await(this.#inbox.then(() => this.#receive(data, isBinary)));
      return;
    }
    const pending = this.#receive(data, isBinary);
    if (pending) this.#await(pending);
  }

  /** Later frames wait for `pending` (which never rejects). */
  #await(pending: Promise<void>): void {
    const inbox = pending.then(() => {
      if (this.#inbox === inbox) this.#inbox = undefined;
    });
    this.#inbox = inbox;
  }

  /** Decode and dispatch one frame; a promise when it waits on the store. */
  #receive(data: RawData, isBinary: boolean): Promise<void> | undefined {
    if (this.#phase === Phase.closing || this.#phase === Phase.closed) return undefined;
    const authenticated = this.#phase === Phase.open;
    let event: ClientEvent;
    // The frame's own event_id once it decodes, so even a refusal of its
    // content is a direct reply with `in_reply_to` (spec 6).
    let replyTo: string | undefined;
    try {
      if (!isBinary) throw new RealtimeFailure(ErrorCode.invalidMessage, 'text frames are not accepted: send MessagePack maps in binary frames', { stage: 'decode' });
      const map = decodeMap(toBytes(data));
      const id = map['event_id'];
      if (typeof id === 'string' && id.length > 0 && id.length <= LIMITS.idMaxChars) replyTo = id;
      event = parseClientEvent(map);
    } catch (err) {
      this.fail(decodeFailure(err, !authenticated), replyTo);
      return undefined;
    }
    const failed = (err: unknown) => {
      if (this.#phase === Phase.closed) return;
      if (err instanceof RealtimeFailure) {
        this.fail(err, event.event_id);
        return;
      }
      this.ctx.log(`realtime: internal error on ${event.event}`, err);
      this.fail(new RealtimeFailure(ErrorCode.internalError, 'internal server error', { terminal: true, stage: event.event }), event.event_id);
    };
    try {
      const pending = this.#dispatch(event);
      return pending ? pending.catch(failed) : undefined;
    } catch (err) {
      failed(err);
      return undefined;
    }
  }

  #dispatch(event: ClientEvent): void | Promise<void> {
    if (this.#phase === Phase.authenticating) {
      if (event.event !== 'auth') {
        throw new RealtimeFailure(ErrorCode.authenticationRequired, 'authenticate first: send { event: "auth", token: <browser ticket> } (or connect with Authorization: Bearer)', { terminal: true, stage: 'auth' });
      }
      return this.#redeemTicket(event);
    }
    if (event.event_id !== undefined) {
      if (this.#eventIds.has(event.event_id)) throw new RealtimeFailure(ErrorCode.invalidMessage, `duplicate event_id ${JSON.stringify(event.event_id)}; frame ignored`, { path: 'event_id', stage: event.event });
      if (this.#eventIds.size >= REALTIME_TUNING.maxEventIdsPerConnection) {
        throw new RealtimeFailure(ErrorCode.sessionLimitExceeded, `a connection carries at most ${REALTIME_TUNING.maxEventIdsPerConnection} events with event_id`, { terminal: true, stage: event.event });
      }
      this.#eventIds.add(event.event_id);
    }
    switch (event.event) {
      case 'auth':
        throw new RealtimeFailure(ErrorCode.alreadyAuthenticated, 'this connection is already authenticated', { stage: 'auth' });
      case 'ping':
        if (event.event_id === undefined && this.#handler?.mode === Mode.reliable) {
          throw new RealtimeFailure(ErrorCode.invalidMessage, 'ping needs event_id in reliable mode', { path: 'event_id', stage: 'ping' });
        }
        this.send(
          'pong',
          { session_id: this.sessionId, ...(this.#handler ? { request_id: this.#handler.requestId } : {}), ...(event.timestamp !== undefined ? { ping_timestamp: event.timestamp } : {}) },
          event.event_id,
        );
        return;
      case 'start':
        this.#start(event);
        return;
      default:
        if (!this.#handler) throw new RealtimeFailure(ErrorCode.invalidState, `${event.event} before start: send start first`, { stage: event.event });
        if (!this.#handler.active) throw new RealtimeFailure(ErrorCode.invalidState, `${event.event} after the request ended`, { stage: event.event });
        return this.#handler.handle(event);
    }
  }

  async #redeemTicket(event: AuthEvent): Promise<void> {
    const result = await this.#services.tickets.redeem(event.token, this.#handshake.host, this.#handshake.origin);
    if (typeof result === 'string') throw new RealtimeFailure(ErrorCode.authenticationFailed, `browser ticket refused: ${result}`, { terminal: true, stage: 'auth' });
    if (this.#phase !== Phase.authenticating) return; // closed (or timed out) while it was redeemed
    this.#authenticated(result, event.event_id);
  }

  #authenticated(account: Account, inReplyTo: string | undefined): void {
    if (this.#authTimer) clearTimeout(this.#authTimer);
    this.#authTimer = undefined;
    this.#account = account;
    this.#billing = new SessionBilling(this.ctx.ledger, this.ctx.store, account);
    this.#phase = Phase.open;
    this.send('authenticated', { session_id: this.sessionId, site: this.ctx.site, protocol_version: PROTOCOL_VERSION, quota: account.apiQuota }, inReplyTo);
  }

  #authTimeout(): void {
    if (this.#phase !== Phase.authenticating) return;
    this.fail(new RealtimeFailure(ErrorCode.authenticationRequired, `no auth frame within ${this.ctx.authTimeoutMs} ms`, { terminal: true, stage: 'auth' }));
  }

  #start(event: StartEvent): void {
    if (this.#handler) throw new RealtimeFailure(ErrorCode.invalidState, 'one generation per connection: a request was already started here', { stage: 'start' });
    const resolved = resolveRequest(this.ctx, event.request);
    if ((event.mode ?? Mode.simple) === Mode.simple) {
      this.#handler = new SimpleRequest(this, resolved, event);
      return;
    }
    this.#handler = openReliable(this, this.#services.requests, resolved, event);
  }

  /** End an open request abnormally: record `state`, then `finish` with `reason`. */
  #endRequest(reason: FinishReason, state: typeof RequestState.failedRetryable | typeof RequestState.failedTerminal, failure: { code: string; message: string }): void {
    const handler = this.#handler;
    if (!handler?.active || this.#phase !== Phase.open) return;
    handler.abort(state, failure);
    this.send('finish', { request_id: handler.requestId, session_id: this.sessionId, reason, units: handler.units() });
    this.#handshake.endGeneration?.();
  }

  #checkAudioFaults(): void {
    const faults = this.ctx.faults;
    const frames = this.#wireAudioFrames;
    const reached = (f: { afterAudioFrames: number }) => frames >= f.afterAudioFrames;
    const drop = faults.take('realtimeDrop', reached);
    if (drop) {
      this.#handler?.abort(RequestState.failedRetryable, { code: ErrorCode.connectionClosed, message: 'connection dropped' });
      this.#phase = Phase.closing;
      this.#abort.abort();
      this.#ws.terminate();
      return;
    }
    const close = faults.take('realtimeClose', reached);
    if (close) {
      this.#handler?.abort(RequestState.failedRetryable, { code: ErrorCode.connectionClosed, message: `connection closed with ${close.code}` });
      this.#close(close.code, 'injected close');
      return;
    }
    const error = faults.take('realtimeError', reached);
    if (error) {
      const code = (error.code ?? ErrorCode.providerUnavailable) as ErrorCode;
      this.fail(new RealtimeFailure(code, 'injected provider failure', { retryable: error.retryable ?? true, terminal: true, stage: 'generation' }));
    }
  }

  #armIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => this.#idle(), REALTIME_TUNING.idleTimeoutMs);
    this.#idleTimer.unref();
  }

  #idle(): void {
    if (this.#phase !== Phase.open) return;
    if (this.#handler?.busy) {
      this.#armIdle();
      return;
    }
    this.#endRequest(FinishReason.timeout, RequestState.failedRetryable, { code: 'timeout', message: 'the connection was idle too long' });
    this.#close(CloseCode.normal, 'idle timeout');
  }

  #close(code: number, reason: string): void {
    if (this.#phase === Phase.closing || this.#phase === Phase.closed) return;
    this.#phase = Phase.closing;
    this.#clearTimers();
    this.#abort.abort();
    const closeNow = () => {
      try {
        // A dialect may end a finished request with a close frame that has no status (the peer reads 1005).
        if (code === CloseCode.normal && this.ctx.dialect.normalClose === 'no-status') this.#ws.close();
        else this.#ws.close(code, reason.slice(0, 120));
      } catch {
        // A code no endpoint may send (1005, 1006, an injected fault's choice): cut the socket instead.
        this.#ws.terminate();
      }
    };
    // Frames a dialect's jitter still holds go out first.
    if (this.#outbox) void this.#outbox.then(closeNow);
    else closeNow();
  }

  #clearTimers(): void {
    if (this.#authTimer) clearTimeout(this.#authTimer);
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#authTimer = undefined;
    this.#idleTimer = undefined;
  }

  #onClose(): void {
    this.#phase = Phase.closed;
    this.#clearTimers();
    this.#abort.abort();
    // Closed by the peer or dropped while the request ran: resumable (a no-op for an ended request).
    this.#handler?.abort(RequestState.failedRetryable, { code: ErrorCode.connectionClosed, message: 'the connection closed while the request was running' });
    this.#services.onClosed(this);
  }
}
