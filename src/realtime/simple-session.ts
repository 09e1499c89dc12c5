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
 * carrying the request's units and audio bytes, the others zero.
 */
import { performance } from 'node:perf_hooks';
import { EventEmitter } from 'eventemitter3';
import { AbortError, ConnectionError, RealtimeServerError, TimeoutError, VoxpipeError } from '../errors.js';
import type { AudioChunk } from '../protocol/audio.js';
import { CloseCode, ErrorCode, FinishReason, Mode } from '../protocol/constants.js';
import type { AudioEvent, ServerEvent, StartEvent, StartRequest } from '../protocol/events.js';
import { countChars, LIMITS } from '../protocol/limits.js';
import { TransportName, type ReadyInfo, type SegmentInput, type SegmentResult, type SegmentTransport, type TransportEvents, type TransportSummary } from '../transport.js';
import { connect, type CloseInfo, type ConnectionSource, type RealtimeConnection } from './connection.js';
import { asVoxpipeError, readyInfoFrom, validateSegment, waiter, type Waiter, linkAbortSignal } from './session-util.js';
import { AudioOrder, describeGaps, type SequenceGap } from './sequence-window.js';
import type { SessionTimings } from './waterfall.js';
import { checkBudgets, RECOVERY_DEFAULTS } from './budgets.js';

/** The events that are progress of a simple-mode request. */
const PROGRESS_EVENTS: ReadonlySet<string> = new Set(['ready', 'audio', 'finish', 'error']);

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

const Phase = {
  idle: 'idle',
  connecting: 'connecting',
  starting: 'starting',
  running: 'running',
  /** Last `input` committed: waiting for `finish`. */
  committed: 'committed',
  done: 'done',
  failed: 'failed',
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

export class SimpleSession extends EventEmitter<TransportEvents> implements SegmentTransport {
  readonly name = TransportName.realtime;
  readonly #opts: SimpleSessionOptions;
  readonly #timings: SessionTimings = {};
  #phase: Phase = Phase.idle;
  #connection: RealtimeConnection | undefined;
  #ready: ReadyInfo | undefined;
  #requestId: string;
  #paused = false;
  /** The deadline of the current wait on the server (`ready`, then frames after the commit). */
  #watchdog: NodeJS.Timeout | undefined;
  #lastFrameAt = 0;
  /** Puts `audio` frames back in `sequence` order. */
  readonly #order: AudioOrder<AudioEvent>;
  /** Every segment given to `send()`, in order. */
  #sent: SegmentInput[] = [];
  /** Segments already sent as `input` frames. The last one is held back until `end()` commits it. */
  #inputs = 0;
  #requestChars = 0;
  #audioBytes = 0;
  /** An `audio_sequence_gap` warning was given (once: numbering may legally skip). */
  #gapReported = false;
  #units = 0;
  #eventCounter = 0;
  readonly #sendWaiters: Waiter<SegmentResult>[] = [];
  #openWaiter: Waiter<ReadyInfo> | undefined;
  #endWaiter: Waiter<SimpleSummary> | undefined;
  #summary: SimpleSummary | undefined;
  #error: VoxpipeError | undefined;
  #unlinkSignal: (() => void) | undefined;

  constructor(options: SimpleSessionOptions) {
    super();
    checkBudgets(options);
    this.#opts = options;
    this.#requestId = options.requestId ?? '';
    this.#order = new AudioOrder(options.reorderWindowFrames);
    if (options.signal) this.#linkSignal(options.signal);
  }

  get timings(): Readonly<SessionTimings> {
    return this.#timings;
  }

  open(signal?: AbortSignal): Promise<ReadyInfo> {
    if (this.#openWaiter) return this.#openWaiter.promise;
    this.#openWaiter = waiter();
    if (this.#error) {
      this.#openWaiter.reject(this.#error);
      return this.#openWaiter.promise;
    }
    if (signal) this.#linkSignal(signal);
    this.#timings.openMs = performance.now();
    this.#phase = Phase.connecting;
    const options: Parameters<typeof connect>[0] = {
      wsUrl: this.#opts.wsUrl,
      apiKey: this.#opts.apiKey,
      onEvent: (event) => this.#onEvent(event),
      onClose: (info) => this.#onClose(info),
    };
    if (this.#opts.connectTimeoutMs !== undefined) options.connectTimeoutMs = this.#opts.connectTimeoutMs;
    if (this.#opts.keepAliveMs !== undefined) options.keepAliveMs = this.#opts.keepAliveMs;
    (this.#opts.connectionSource ?? connect)(options).then(
      (connection) => {
        if (this.#phase !== Phase.connecting) {
          connection.close();
          return;
        }
        this.#timings.authenticatedMs = performance.now();
        this.#connection = connection;
        if (this.#paused) connection.pause();
        const start: StartEvent = { event: 'start', mode: Mode.simple, event_id: this.#nextEventId(), request: this.#opts.request };
        if (this.#opts.requestId !== undefined) start.request_id = this.#opts.requestId;
        this.#phase = Phase.starting;
        connection.send(start);
        this.#watch();
      },
      (err: unknown) => this.#fail(asVoxpipeError(err)),
    );
    return this.#openWaiter.promise;
  }

  send(segment: SegmentInput): Promise<SegmentResult> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#phase === Phase.committed || this.#endWaiter) return Promise.reject(new VoxpipeError(ErrorCode.invalidState, 'send() after end()'));
    try {
      validateSegment(segment, LIMITS.simpleRequestMaxChars);
    } catch (err) {
      return Promise.reject(err);
    }
    const chars = countChars(segment.text);
    if (this.#requestChars + chars > LIMITS.simpleRequestMaxChars) {
      return Promise.reject(new VoxpipeError(ErrorCode.segmentTooLarge, `a simple-mode request holds at most ${LIMITS.simpleRequestMaxChars} characters`));
    }
    this.#requestChars += chars;
    const w = waiter<SegmentResult>();
    this.#sendWaiters.push(w);
    this.#sent.push(segment);
    this.#pumpInputs();
    return w.promise;
  }

  end(): Promise<SimpleSummary> {
    if (this.#endWaiter) return this.#endWaiter.promise;
    this.#endWaiter = waiter();
    if (this.#summary) this.#endWaiter.resolve(this.#summary);
    else if (this.#error) this.#endWaiter.reject(this.#error);
    else if (this.#sent.length === 0) this.#finishEmpty();
    else this.#pumpInputs();
    return this.#endWaiter.promise;
  }

  async abort(reason?: VoxpipeError): Promise<void> {
    if (this.#phase === Phase.done || this.#phase === Phase.failed) return;
    this.#fail(reason ?? new AbortError());
  }

  pause(): void {
    this.#paused = true;
    this.#connection?.pause();
    this.#watch();
  }

  resume(): void {
    this.#paused = false;
    this.#connection?.resume();
    this.#watch();
  }

  pending(): SegmentInput[] {
    return this.#summary || this.#error ? [] : [...this.#sent];
  }

  // ---------------------------------------------------------------- internals

  #linkSignal(signal: AbortSignal): void {
    this.#unlinkSignal = linkAbortSignal(signal, (cause) => void this.abort(new AbortError('aborted by signal', { cause })), this.#unlinkSignal);
  }

  #nextEventId(): string {
    return `simple-${++this.#eventCounter}`;
  }

  /**
   * Once the request runs, send every segment but the last as `input` with
   * `commit: false`; after `end()`, the last one with `commit: true`.
   */
  #pumpInputs(): void {
    const connection = this.#connection;
    if (this.#phase !== Phase.running || !connection) return;
    while (this.#inputs < this.#sent.length - 1) {
      connection.send({ event: 'input', event_id: this.#nextEventId(), text: this.#sent[this.#inputs++]!.text, commit: false });
    }
    if (this.#endWaiter && this.#inputs === this.#sent.length - 1) {
      connection.send({ event: 'input', event_id: this.#nextEventId(), text: this.#sent[this.#inputs++]!.text, commit: true });
      this.#phase = Phase.committed;
      this.#watch();
    }
  }

  /**
   * Keep one deadline while the server owes a frame: `ready` after `start`
   * (startTimeoutMs), then audio or `finish` after the commit
   * (progressTimeoutMs). Only `ready`, audio, `finish` and `error` move it;
   * a paused reader stops it.
   */
  #watch(): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    const waiting = this.#phase === Phase.starting ? (this.#opts.startTimeoutMs ?? 10_000) : this.#phase === Phase.committed ? (this.#opts.progressTimeoutMs ?? RECOVERY_DEFAULTS.progressTimeoutMs) : 0;
    if (waiting <= 0 || this.#paused) return;
    this.#lastFrameAt = performance.now();
    const check = (): void => {
      const left = this.#lastFrameAt + waiting - performance.now();
      if (left > 0) {
        this.#watchdog = setTimeout(check, left);
        return;
      }
      this.#watchdog = undefined;
      const what = this.#phase === Phase.starting ? 'ready' : 'audio or finish';
      this.#fail(new TimeoutError(`no ${what} from the server within ${waiting} ms`, { retryable: true, requestId: this.#requestId || undefined }));
    };
    this.#watchdog = setTimeout(check, waiting);
    this.#watchdog.unref?.();
  }

  #onEvent(event: ServerEvent): void {
    // Progress is what the request needs (spec 6, rule 3), not keep-alive answers or chatter.
    if (PROGRESS_EVENTS.has(event.event)) this.#lastFrameAt = performance.now();
    switch (event.event) {
      case 'ready': {
        if (this.#phase !== Phase.starting) return;
        this.#ready = readyInfoFrom(event, this.#opts.requestId);
        this.#requestId = this.#ready.requestId;
        this.#timings.readyMs = performance.now();
        this.#phase = Phase.running;
        this.#watch();
        this.emit('ready', this.#ready);
        this.#openWaiter?.resolve(this.#ready);
        this.#pumpInputs();
        return;
      }
      case 'audio': {
        if (!this.#ready || this.#phase === Phase.failed) return;
        const verdict = this.#order.push(event.segment_id, event.sequence, event);
        if (verdict.duplicate) this.emit('warning', { code: 'audio_repeat', message: `dropped a repeat of audio sequence ${event.sequence} of segment ${event.segment_id}` });
        if (verdict.late) this.emit('warning', { code: 'audio_late', message: `audio sequence ${event.sequence} of segment ${event.segment_id} came after later audio was emitted; it was left out` });
        this.#reportGaps(verdict.gaps);
        for (const frame of verdict.release) {
          // A listener of one released frame may have ended the request (abort): the rest are not emitted.
          if ((this.#phase as (typeof Phase)[keyof typeof Phase]) === Phase.failed) return;
          this.#emitAudio(frame);
        }
        return;
      }
      case 'warning':
        this.emit('warning', { code: event.code, message: event.message });
        return;
      case 'error':
        this.#fail(new RealtimeServerError(event.code, event.message, event.terminal, { requestId: event.request_id, retryable: event.retryable, stage: event.stage }));
        return;
      case 'finish':
        this.#drainAudio();
        if (event.reason === FinishReason.completed) this.#finish(event.units);
        else this.#fail(new RealtimeServerError(event.reason, `the request finished with reason ${event.reason}`, true, { requestId: event.request_id }));
        return;
      default:
        return; // simple mode needs only ready, audio, error, finish (spec 6, rule 3)
    }
  }

  /** Audio in `sequence` order (spec 6, rule 2), whatever the arrival order. */
  #emitAudio(event: AudioEvent): void {
    const ready = this.#ready!;
    this.#timings.firstAudioMs ??= performance.now();
    const data = Buffer.from(event.audio.buffer, event.audio.byteOffset, event.audio.byteLength);
    this.#audioBytes += data.byteLength;
    const chunk: AudioChunk = {
      data,
      segmentId: event.segment_id,
      sequence: event.sequence,
      format: ready.format,
      sampleRate: ready.sampleRate,
      channels: ready.channels,
      bitDepth: ready.bitDepth,
    };
    this.emit('audio', chunk);
  }

  /** The request ended: release what waits behind a sequence that never came. */
  #drainAudio(): void {
    if (this.#order.held === 0 || !this.#ready) return;
    const verdict = this.#order.drainAll();
    this.#reportGaps(verdict.gaps);
    for (const frame of verdict.release) this.#emitAudio(frame);
  }

  #reportGaps(gaps: readonly SequenceGap[]): void {
    if (gaps.length === 0 || this.#gapReported) return;
    this.#gapReported = true;
    this.emit('warning', { code: 'audio_sequence_gap', message: `audio sequence ${describeGaps(gaps)} skipped (never arrived in order)` });
  }

  #onClose(info: CloseInfo): void {
    this.#connection = undefined;
    if (this.#phase === Phase.done || this.#phase === Phase.failed) return;
    this.#fail(
      info.error ??
        new ConnectionError('connection_closed', `connection closed (${info.code}${info.reason ? `: ${info.reason}` : ''}) before the request finished`, {
          closeCode: info.code,
          retryable: false,
        }),
    );
  }

  #buildSummary(): SimpleSummary {
    const results = this.#sent.map((s, i): SegmentResult => {
      const last = i === this.#sent.length - 1;
      return { segmentId: s.segmentId, units: last ? this.#units : 0, audioBytes: last ? this.#audioBytes : 0, transport: TransportName.realtime };
    });
    return { requestId: this.#requestId, units: this.#units, retries: 0, resumed: 0, segments: results, audioBytes: this.#audioBytes, timings: { ...this.#timings } };
  }

  #finish(units: number): void {
    this.#units = units;
    this.#phase = Phase.done;
    clearTimeout(this.#watchdog);
    this.#connection?.close(CloseCode.normal, 'done');
    this.#summary = this.#buildSummary();
    this.#unlinkSignal?.();
    this.#summary.segments.forEach((result, i) => {
      this.emit('segment-completed', result);
      this.#sendWaiters[i]?.resolve(result);
    });
    this.#endWaiter?.resolve(this.#summary);
  }

  /** `end()` with nothing sent: nothing to generate. */
  #finishEmpty(): void {
    this.#phase = Phase.done;
    clearTimeout(this.#watchdog);
    this.#connection?.close(CloseCode.normal, 'nothing to say');
    this.#summary = this.#buildSummary();
    this.#unlinkSignal?.();
    this.#endWaiter?.resolve(this.#summary);
  }

  #fail(error: VoxpipeError): void {
    if (this.#phase === Phase.done || this.#phase === Phase.failed) return;
    this.#phase = Phase.failed;
    clearTimeout(this.#watchdog);
    this.#error = error;
    this.#connection?.close(CloseCode.normal, error instanceof AbortError ? 'aborted' : 'failed');
    this.#unlinkSignal?.();
    this.#openWaiter?.reject(error);
    for (const w of this.#sendWaiters) w.reject(error);
    this.#endWaiter?.reject(error);
  }
}
