/**
 * `SimpleSession`: the simple-mode `SegmentTransport` (spec 3.4b, 4.10).
 *
 * Simple mode carries one generation per connection and commits once: the
 * text of every `send()` goes out as `input` frames with `commit: false`,
 * and `end()` sends the last one with `commit: true`. So simple mode speaks
 * only after `end()`: its protocol has no per-segment commit followed by a
 * later finish (a committed segment that leaves nothing queued finishes the
 * request). Use reliable mode (`ReliableSession`) to hear each segment as
 * soon as it is complete, and for resume: simple mode never retries.
 *
 * The whole request holds at most 10,000 characters. Per-segment results
 * are known only at `finish`: every `send()` resolves then, the last one
 * carrying the request's units and audio bytes (and `expectedBytes` when the
 * server states them), the others zero. The request's audio is one
 * generation: it is tagged with the last part, the one that committed it.
 *
 * Every decision is the sans-IO `SimpleMachine`'s (`simple/machine.ts`,
 * transitions in test/realtime/simple-machine-transitions.md); this class
 * is its Node shell.
 */
import { performance } from 'node:perf_hooks';
import { EventEmitter } from 'eventemitter3';
import { AbortError, VoxpipeError } from '../errors.js';
import { ErrorCode } from '../protocol/constants.js';
import type { ServerEvent, StartRequest } from '../protocol/events.js';
import { nextAttemptTag, TransportName, type HeardAudio, type ReadyInfo, type SegmentInput, type SegmentResult, type SegmentTransport, type TransportAudio, type TransportEvents, type TransportSummary } from '../transport.js';
import { connect, type CloseInfo, type ConnectionSource, type RealtimeConnection } from './connection.js';
import { asVoxpipeError, readyInfoFrom, waiter, type Waiter, linkAbortSignal, MachineTimers } from './session-util.js';
import type { SessionTimings } from './waterfall.js';
import { checkBudgets } from './budgets.js';
import { defined } from '../defined.js';
import { AudioLedger } from '../splice.js';
import { SimpleMachine, SimplePhase } from './simple/machine.js';
import type { MachineAudio, MachineSegmentResult, SimpleEvent, SimplePort, SimpleTimerId } from './simple/types.js';

export interface SimpleSessionOptions {
  /** `{ws_url}` of the realtime service. */
  wsUrl: string;
  /** API key (Bearer header on the handshake). */
  apiKey: string;
  /** Generation parameters of `start.request`. */
  request: StartRequest;
  /** Correlation id sent as `start.request_id`; default: the server makes one. */
  requestId?: string;
  /** TCP, handshake and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number;
  /** Idle time before a keep-alive `ping`; default 15_000 ms. */
  keepAliveMs?: number;
  /** `audio` frames held while an earlier `sequence` is missing; default 16. */
  reorderWindowFrames?: number;
  /** `start` to `ready`; default 10_000 ms. */
  startTimeoutMs?: number;
  /**
   * After the commit, longest quiet before failing with a retryable
   * TimeoutError; default 5_000 ms (`RECOVERY_DEFAULTS`). Only audio,
   * `finish` and `error` are progress: `pong`s, warnings and other events
   * are not. Not while paused.
   */
  progressTimeoutMs?: number;
  /** Aborts the session (as `abort()`). */
  signal?: AbortSignal;
  /** Where connections come from; default a new `connect()` each time (a pool hands out authenticated ones). */
  connectionSource?: ConnectionSource;
}

/** What `end()` resolves with. */
export interface SimpleSummary extends TransportSummary {
  /** Audio bytes of the request. */
  audioBytes: number;
  timings: SessionTimings;
}

/**
 * A thin shell that wires the sans-IO `SimpleMachine` (`simple/machine.ts`)
 * to real things: `connect()` for the WebSocket, `setTimeout` for its
 * timers, `performance.now()` for the timings. Every decision is the
 * machine's.
 */
export class SimpleSession extends EventEmitter<TransportEvents> implements SegmentTransport {
  readonly name = TransportName.realtime;
  readonly #opts: SimpleSessionOptions;
  readonly #timings: SessionTimings = {};
  readonly #machine: SimpleMachine;
  readonly #timers = new MachineTimers<SimpleTimerId>((id) => this.#machine.handle({ type: 'timer', id }));
  #connection: RealtimeConnection | undefined;
  #ready: ReadyInfo | undefined;
  /** The tag of the request's one attempt, taken at its first audio. */
  #attempt: number | undefined;
  #outSequence = 0;
  /** The session's own ledger, while no stream bound one: it counts what the session emits. */
  #ledger: AudioLedger | undefined = new AudioLedger({ layout: false });
  /** What the listener has of each part: the stream's ledger once bound (`bindLedger`), else the session's own. */
  #heard: HeardAudio = this.#ledger!;
  #paused = false;
  /** One waiter per `send()`, in order (the machine settles the parts in order). */
  readonly #sendWaiters: Waiter<SegmentResult>[] = [];
  #settled = 0;
  #openWaiter: Waiter<ReadyInfo> | undefined;
  #endWaiter: Waiter<SimpleSummary> | undefined;
  #summary: SimpleSummary | undefined;
  #error: VoxpipeError | undefined;
  #unlinkSignal: (() => void) | undefined;

  constructor(options: SimpleSessionOptions) {
    super();
    checkBudgets(options); // every budget given, also those simple mode has no use for: a typo is never silent
    this.#opts = options;
    this.#machine = new SimpleMachine(
      {
        request: options.request,
        ...defined({ requestId: options.requestId, startTimeoutMs: options.startTimeoutMs, progressTimeoutMs: options.progressTimeoutMs, reorderWindowFrames: options.reorderWindowFrames }),
      },
      this.#port(),
    );
    if (options.signal) this.#linkSignal(options.signal);
  }

  get timings(): Readonly<SessionTimings> {
    return this.#timings;
  }

  /** The stream reading this session keeps the one ledger: the machine asks it what the listener has. Before `open`. */
  bindLedger(ledger: HeardAudio): void {
    this.#heard = ledger;
    this.#ledger = undefined;
  }

  open(signal?: AbortSignal): Promise<ReadyInfo> {
    if (this.#openWaiter) return this.#openWaiter.promise;
    this.#openWaiter = waiter();
    if (this.#error || this.#summary) {
      // Nothing left to open: the request failed, or ended (`end()` with nothing sent).
      this.#openWaiter.reject(this.#error ?? new VoxpipeError(ErrorCode.invalidState, 'open() after the request ended'));
      return this.#openWaiter.promise;
    }
    if (signal) this.#linkSignal(signal);
    this.#timings.openMs = performance.now();
    this.#machine.handle({ type: 'open' });
    return this.#openWaiter.promise;
  }

  send(segment: SegmentInput): Promise<SegmentResult> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#endWaiter) return Promise.reject(new VoxpipeError(ErrorCode.invalidState, 'send() after end()'));
    const refused = this.#machine.refusal(segment);
    if (refused) return Promise.reject(refused);
    const w = waiter<SegmentResult>();
    this.#sendWaiters.push(w);
    this.#machine.handle({ type: 'segment-queued', segmentId: segment.segmentId, text: segment.text });
    return w.promise;
  }

  end(): Promise<SimpleSummary> {
    if (this.#endWaiter) return this.#endWaiter.promise;
    this.#endWaiter = waiter();
    if (this.#summary) this.#endWaiter.resolve(this.#summary);
    else if (this.#error) this.#endWaiter.reject(this.#error);
    else this.#machine.handle({ type: 'stop-requested' });
    return this.#endWaiter.promise;
  }

  async abort(reason?: VoxpipeError): Promise<void> {
    this.#machine.handle({ type: 'abort-requested', reason: reason ?? new AbortError() });
  }

  pause(): void {
    this.#paused = true;
    this.#connection?.pause();
    this.#machine.handle({ type: 'reader', paused: true });
  }

  resume(): void {
    this.#paused = false;
    this.#connection?.resume();
    this.#machine.handle({ type: 'reader', paused: false });
  }

  pending(): SegmentInput[] {
    return this.#machine.pending();
  }

  // ---------------------------------------------------------------- wiring

  #linkSignal(signal: AbortSignal): void {
    this.#unlinkSignal = linkAbortSignal(signal, (cause) => void this.abort(new AbortError('aborted by signal', { cause })), this.#unlinkSignal);
  }

  #port(): SimplePort {
    return {
      sendFrame: (event) => this.#connection?.send(event),
      emitAudio: (audio) => this.#emitAudio(audio),
      audioOf: (segmentId) => this.#heard.segment(segmentId),
      emit: (event) => this.#onMachineEvent(event),
      startTimer: (id, ms) => this.#timers.start(id, ms),
      cancelTimer: (id) => this.#timers.cancel(id),
      openTransport: () => this.#openTransport(),
      closeTransport: (code, reason) => {
        const connection = this.#connection;
        this.#connection = undefined;
        connection?.close(code, reason);
      },
    };
  }

  #openTransport(): void {
    // Frames (and a close) that arrive before `connect()` resolved are held,
    // so the machine always sees `transport-opened` first.
    let opened = false;
    const early: ServerEvent[] = [];
    let closedEarly: CloseInfo | undefined;
    const onEvent = (event: ServerEvent): void => {
      if (!opened) early.push(event);
      else if (this.#connection) this.#machine.handle({ type: 'frame', event });
    };
    const onClose = (info: CloseInfo): void => {
      if (!opened) {
        closedEarly = info;
        return;
      }
      if (!this.#connection) return; // closed by the machine
      this.#connection = undefined;
      this.#machine.handle({ type: 'transport-closed', code: info.code, reason: info.reason, wasClean: info.wasClean, ...(info.error && { error: info.error }) });
    };
    const options: Parameters<typeof connect>[0] = { wsUrl: this.#opts.wsUrl, apiKey: this.#opts.apiKey, onEvent, onClose };
    if (this.#opts.connectTimeoutMs !== undefined) options.connectTimeoutMs = this.#opts.connectTimeoutMs;
    if (this.#opts.keepAliveMs !== undefined) options.keepAliveMs = this.#opts.keepAliveMs;
    (this.#opts.connectionSource ?? connect)(options).then(
      (connection) => {
        if (this.#machine.phase !== SimplePhase.connecting) {
          connection.close();
          return;
        }
        this.#timings.authenticatedMs = performance.now();
        this.#connection = connection;
        if (this.#paused) connection.pause();
        opened = true;
        this.#machine.handle({ type: 'transport-opened' });
        for (const event of early.splice(0)) {
          if (!this.#connection) break;
          this.#machine.handle({ type: 'frame', event });
        }
        if (closedEarly) onClose(closedEarly);
      },
      (err: unknown) => this.#machine.handle({ type: 'transport-failed', error: asVoxpipeError(err) }),
    );
  }

  /** The machine's raw audio as the stream takes it (its ledger strips a stream header). */
  #emitAudio(audio: MachineAudio): void {
    const ready = this.#ready;
    if (!ready) return;
    this.#timings.firstAudioMs ??= performance.now();
    const chunk: TransportAudio = {
      data: Buffer.from(audio.data.buffer, audio.data.byteOffset, audio.data.byteLength),
      segmentId: audio.segmentId,
      // One attempt per request in simple mode (no resume); its tag is unique in the process.
      attempt: (this.#attempt ??= nextAttemptTag()),
      offset: audio.offset,
      sequence: ++this.#outSequence,
      format: ready.format,
      sampleRate: ready.sampleRate,
      channels: ready.channels,
      bitDepth: ready.bitDepth,
    };
    this.#ledger?.accept(chunk);
    this.emit('audio', chunk);
  }

  #result(r: MachineSegmentResult): SegmentResult {
    return { segmentId: r.segmentId, units: r.units, audioBytes: r.audioBytes, ...(r.expectedBytes !== undefined && { expectedBytes: r.expectedBytes }), transport: TransportName.realtime };
  }

  #onMachineEvent(event: SimpleEvent): void {
    switch (event.type) {
      case 'ready':
        this.#ready = readyInfoFrom(event.ready, this.#opts.requestId);
        this.#timings.readyMs = performance.now();
        this.emit('ready', this.#ready);
        this.#openWaiter?.resolve(this.#ready);
        return;
      case 'warning':
        this.emit('warning', { code: event.code, message: event.message });
        return;
      case 'segment-completed': {
        const result = this.#result(event.result);
        this.emit('segment-completed', result);
        this.#sendWaiters[this.#settled++]?.resolve(result);
        return;
      }
      case 'finished': {
        const s = event.summary;
        this.#summary = { requestId: s.requestId, units: s.units, retries: 0, resumed: 0, segments: s.segments.map((r) => this.#result(r)), audioBytes: s.audioBytes, timings: { ...this.#timings } };
        this.#cleanup();
        this.#endWaiter?.resolve(this.#summary);
        return;
      }
      case 'failed':
        this.#error = event.error;
        this.#cleanup();
        this.#openWaiter?.reject(event.error);
        for (const w of this.#sendWaiters.slice(this.#settled)) w.reject(event.error);
        this.#endWaiter?.reject(event.error);
        return;
    }
  }

  #cleanup(): void {
    this.#timers.clear();
    this.#unlinkSignal?.();
    this.#unlinkSignal = undefined;
  }
}
