/**
 * The reliable machine in a browser: the same `ReliableMachine` the Node
 * `ReliableSession` drives, wired to the browser's `WebSocket` with
 * first-frame ticket auth (spec 4.10, 5.5), `setTimeout`, and callbacks the
 * app supplies for what needs the API key the browser never holds: a new
 * single-use ticket for every connection, and the request-status read of
 * the resume path (the app's server proxies it). The machine's audio is
 * raw (tagged with its attempt); the same ledger as Node's (`SpliceLedger`,
 * `splice.ts`: the layout is `ready`'s, so no layout check and no stream
 * probes) strips the stream header and splices a resumed segment, so the
 * page hears one unbroken stream.
 */
import { AbortError, ConnectionError, ProtocolError, RealtimeServerError, type VoxpipeError } from '../errors.js';
import { readServerFrameCompact as readServerFrame, encodeFrame } from '../protocol/wire.js';
import { CloseCode, ErrorCode, isRetryableClose, REALTIME_PATHS, SUBPROTOCOL } from '../protocol/constants.js';
import type { ClientEvent, StartRequest } from '../protocol/events.js';
import { INVALID_SERVER_FRAME, readRequestStatus } from '../protocol/server-reader.js';
import { ReliableMachine } from '../realtime/reliable/machine.js';
import type { MachineAudio, MachineEvent, MachineInput, MachineOptions, MachinePort, StatusResult, TimerId } from '../realtime/reliable/types.js';
import { MachineTimers, readyInfoFrom } from '../realtime/session-util.js';
import { defined } from '../defined.js';
import { SpliceLedger } from '../splice.js';
import type { ReadyInfo } from '../transport.js';

/**
 * The recovery bounds are the machine's (`MachineOptions`, documented there
 * once; `statusTimeoutMs` bounds `getStatus`).
 */
export interface BrowserSessionOptions extends Pick<MachineOptions, 'maxRetries' | 'maxResumeMs' | 'progressTimeoutMs' | 'finishTimeoutMs' | 'statusTimeoutMs' | 'maxStallResumes'> {
  /** `{ws_url}` of the realtime service, e.g. `wss://host`. */
  wsUrl: string;
  /** A fresh single-use ticket (from the app's server, `mintTicket`); called for every connection, resumes included. */
  getTicket: () => Promise<string>;
  /**
   * The request-status body for `requestId` (the app's server reads
   * `GET {rt_http_url}/v2/tts/requests/{id}` with its key), or `null` when
   * the service answered 404.
   */
  getStatus: (requestId: string) => Promise<unknown>;
  /** A manifest entry's audio; default `fetch(url)` (signed URLs need no key). */
  getSegmentAudio?: (url: string) => Promise<ArrayBuffer>;
  request: StartRequest;
  requestId: string;
  /** Per connection: socket, ticket and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number;
}

/** Audio for the page, in order: what the ledger made of the machine's raw audio. */
export interface SessionAudio {
  segmentId: string;
  data: Uint8Array;
  /** From 1, strictly increasing over the request. */
  sequence: number;
}

export interface BrowserSessionEvents {
  ready(info: ReadyInfo): void;
  audio(audio: SessionAudio): void;
  event(event: MachineEvent): void;
}

function asError(err: unknown): VoxpipeError {
  if (err && typeof err === 'object' && 'code' in err && err instanceof Error) return err as VoxpipeError;
  return new ConnectionError('connection_failed', err instanceof Error ? err.message : String(err), { retryable: true, cause: err });
}

/** One realtime reliable request over browser WebSockets. */
export class BrowserSession {
  readonly #opts: BrowserSessionOptions;
  readonly #machine: ReliableMachine;
  readonly #timers = new MachineTimers<TimerId>((id) => this.#machine.handle({ type: 'timer', id }));
  readonly #on: BrowserSessionEvents;
  /** What the page gets of each attempt at a segment. */
  readonly #ledger = new SpliceLedger();
  #ready: ReadyInfo | undefined;
  #outSequence = 0;
  #ws: WebSocket | undefined;
  #generation = 0;
  #ended = false;
  /** Connections opened (the first and each resume). */
  connections = 0;

  /** The one ledger of the request's audio: what the page has of each segment (the speech core reads its counts). */
  get ledger(): SpliceLedger {
    return this.#ledger;
  }

  constructor(options: BrowserSessionOptions, on: BrowserSessionEvents) {
    this.#opts = options;
    this.#on = on;
    // The machine's options pass through by construction: all but what the shell itself uses.
    const { wsUrl: _wsUrl, getTicket: _getTicket, getStatus: _getStatus, getSegmentAudio: _getSegmentAudio, connectTimeoutMs: _connectTimeoutMs, ...machine } = options;
    const machineOptions: ConstructorParameters<typeof ReliableMachine>[0] = { ...defined(machine), eventIdPrefix: `ev-${Math.random().toString(36).slice(2, 10)}` };
    this.#machine = new ReliableMachine(machineOptions, this.#port());
  }

  handle(input: MachineInput): void {
    if (this.#ended && input.type !== 'abort-requested') return;
    this.#machine.handle(input);
  }

  has(segmentId: string): boolean {
    return this.#machine.has(segmentId);
  }

  /** Drop the socket as a network failure would (no close frame): the machine resumes. For demos and tests. */
  dropConnection(): void {
    const ws = this.#ws;
    if (!ws) return;
    this.#detach();
    ws.close();
    this.#machine.handle({ type: 'transport-closed', code: CloseCode.abnormal, reason: 'dropped by the page', wasClean: false });
  }

  #detach(): void {
    this.#generation++;
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws) ws.onmessage = ws.onclose = ws.onerror = ws.onopen = null;
  }

  #port(): MachinePort {
    return {
      sendFrame: (event: ClientEvent) => {
        if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(encodeFrame(event));
      },
      emitAudio: (audio) => this.#onAudio(audio),
      audioOf: (segmentId: string) => this.#ledger.segment(segmentId),
      emit: (event) => this.#onMachineEvent(event),
      startTimer: (id: TimerId, ms: number) => this.#timers.start(id, ms),
      cancelTimer: (id: TimerId) => this.#timers.cancel(id),
      openTransport: () => this.#open(),
      closeTransport: (code: number, reason: string) => {
        const ws = this.#ws;
        this.#detach();
        if (ws && ws.readyState <= WebSocket.OPEN) ws.close(code >= 3000 || code === 1000 ? code : 1000, reason.slice(0, 120));
      },
      fetchStatus: (requestId: string) => {
        const generation = this.#generation;
        void this.#readStatus(requestId).then((result) => {
          if (generation === this.#generation) this.#machine.handle({ type: 'status-fetched', result });
        });
      },
      fetchSegmentAudio: (segmentId: string, url: string) => {
        const generation = this.#generation;
        const get = this.#opts.getSegmentAudio ?? (async (u: string) => (await fetch(u)).arrayBuffer());
        void get(url).then(
          (data) => generation === this.#generation && this.#machine.handle({ type: 'audio-fetched', segmentId, result: { kind: 'ok', data: new Uint8Array(data) } }),
          (err: unknown) => generation === this.#generation && this.#machine.handle({ type: 'audio-fetched', segmentId, result: { kind: 'error', error: asError(err) } }),
        );
      },
      random: () => Math.random(),
    };
  }

  async #readStatus(requestId: string): Promise<StatusResult> {
    try {
      const body = await this.#opts.getStatus(requestId);
      if (body === null || body === undefined) return { kind: 'not-found' };
      const status = readRequestStatus(body);
      return status instanceof ProtocolError ? { kind: 'error', error: status } : { kind: 'found', status };
    } catch (err) {
      return { kind: 'error', error: asError(err) };
    }
  }

  #open(): void {
    const generation = ++this.#generation;
    const fail = (error: VoxpipeError) => {
      if (generation !== this.#generation) return;
      this.#detach();
      this.#machine.handle({ type: 'transport-failed', error });
    };
    const timer = setTimeout(() => fail(new ConnectionError('connect_timeout', `realtime connect took over ${this.#opts.connectTimeoutMs ?? 10_000} ms`, { retryable: true })), this.#opts.connectTimeoutMs ?? 10_000);
    void this.#opts.getTicket().then(
      (ticket) => {
        if (generation !== this.#generation) return;
        const ws = new WebSocket(`${this.#opts.wsUrl.replace(/\/+$/, '')}${REALTIME_PATHS.live}`, SUBPROTOCOL);
        ws.binaryType = 'arraybuffer';
        this.#ws = ws;
        this.connections += 1;
        let authenticated = false;
        ws.onopen = () => ws.send(encodeFrame({ event: 'auth', token: ticket }));
        ws.onmessage = (message: MessageEvent) => {
          if (generation !== this.#generation) return;
          // A frame the client cannot use ends this connection: a protocol error once authenticated, a failed connect before.
          const refuse = (error: ProtocolError) => {
            clearTimeout(timer);
            this.#detach();
            ws.close(CloseCode.normal);
            this.#machine.handle(authenticated ? { type: 'transport-closed', code: CloseCode.protocolError, reason: error.code, wasClean: false, error } : { type: 'transport-failed', error });
          };
          if (!(message.data instanceof ArrayBuffer)) return refuse(new ProtocolError(INVALID_SERVER_FRAME, 'server sent a text frame; v2 frames are binary MessagePack'));
          const read = readServerFrame(new Uint8Array(message.data));
          if (read.kind === 'skip') return;
          if (read.kind === 'unusable') return refuse(read.error);
          const event = read.event;
          if (!authenticated) {
            clearTimeout(timer);
            if (event.event === 'authenticated') {
              authenticated = true;
              this.#machine.handle({ type: 'transport-opened' });
            } else if (event.event === 'error') {
              fail(new RealtimeServerError(event.code, event.message, event.terminal, { retryable: event.retryable, stage: event.stage }));
            } else {
              fail(new ProtocolError(ErrorCode.invalidState, `expected authenticated, got ${event.event}`));
            }
            return;
          }
          this.#machine.handle({ type: 'frame', event });
        };
        ws.onclose = (close: CloseEvent) => {
          clearTimeout(timer);
          if (generation !== this.#generation) return;
          this.#ws = undefined;
          const retryable = isRetryableClose(close.code, close.wasClean);
          if (!authenticated) {
            fail(new ConnectionError('connection_closed', `realtime connection closed during the handshake (${close.code})`, { closeCode: close.code, retryable }));
            return;
          }
          this.#machine.handle({ type: 'transport-closed', code: close.code, reason: close.reason, wasClean: close.wasClean });
        };
      },
      (err: unknown) => {
        clearTimeout(timer);
        fail(new ConnectionError('ticket_failed', `getTicket() failed: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err }));
      },
    );
  }

  #onAudio(audio: MachineAudio): void {
    const ready = this.#ready;
    if (!ready) return;
    const { chunk } = this.#ledger.accept({ data: audio.data, segmentId: audio.segmentId, attempt: audio.attempt, format: ready.format, sampleRate: ready.sampleRate, channels: ready.channels, bitDepth: ready.bitDepth });
    if (chunk.data.byteLength > 0) this.#on.audio({ segmentId: chunk.segmentId, data: chunk.data, sequence: ++this.#outSequence });
  }

  #onMachineEvent(event: MachineEvent): void {
    if (event.type === 'ready') {
      this.#ready = readyInfoFrom(event.ready);
      this.#on.ready(this.#ready);
    }
    if (event.type === 'finished' || event.type === 'failed') {
      this.#ended = true;
      this.#timers.clear();
    }
    this.#on.event(event);
  }

  abort(reason: VoxpipeError = new AbortError()): void {
    this.#machine.handle({ type: 'abort-requested', reason });
  }
}
