/**
 * `ReliableSession`: the reliable-mode `SegmentTransport`. A thin shell that
 * wires the pure `ReliableMachine` to real things: `connect()` for the
 * WebSocket, `setTimeout` for its timers, `fetch` for the status route and
 * manifest audio, `performance.now()` for the waterfall. Every other
 * decision is the machine's.
 *
 * Audio: the machine hands over raw bytes tagged with their attempt and
 * offset (`MachineAudio`); the session passes them through as
 * `TransportAudio` (each machine attempt gets a process-unique tag,
 * `nextAttemptTag()`), and the machine asks the stream's one ledger what the
 * listener has (`bindLedger`, which SpeechStream calls). A session nobody
 * bound (used directly) keeps an `AudioLedger` of its own, the same class,
 * and emits what it lets through, so a resume still reaches its listener as
 * one unbroken stream.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EventEmitter } from 'eventemitter3';
import { AbortError, VoxpipeError } from '../../errors.js';
import { ErrorCode } from '../../protocol/constants.js';
import type { ClientEvent, ServerEvent } from '../../protocol/events.js';
import { nextAttemptTag, TransportName, type HeardAudio, type ReadyInfo, type SegmentInput, type SegmentTransport, type TransportAudio, type TransportEvents, type TransportSummary } from '../../transport.js';
import { connect, type CloseInfo, type ConnectionSource, type RealtimeConnection } from '../connection.js';
import { fetchRequestStatus, fetchSegmentAudio, type HttpReadOptions } from '../status-client.js';
import { asVoxpipeError, readyInfoFrom, validateSegment, waiter, type Waiter, linkAbortSignal, MachineTimers } from '../session-util.js';
import { markStage, type RealtimeSegmentResult, type WireWaterfall, type SessionTimings } from '../waterfall.js';
import { ReliableMachine } from './machine.js';
import type { MachineAudio, MachineEvent, MachineOptions, MachinePort, PartialSegmentPolicy, TimerId } from './types.js';
import { OverloadWatch, RECOVERY_DEFAULTS, serverActivity } from '../budgets.js';
import { defined } from '../../defined.js';
import { AudioLedger } from '../../splice.js';

/**
 * The machine's options (`MachineOptions`: each recovery bound and its
 * default is documented there, once) plus what the shell needs to reach the
 * service.
 */
export interface ReliableSessionOptions extends Omit<MachineOptions, 'requestId' | 'eventIdPrefix'> {
  /** `{ws_url}` of the realtime service. */
  wsUrl: string;
  /** `{rt_http_url}` of the realtime service (status route, manifest audio). */
  rtHttpUrl: string;
  /** API key (Bearer header on the handshake and the HTTP reads). */
  apiKey: string;
  /** Idempotency key of this generation; default a random UUID. Reused on every resume. */
  requestId?: string;
  /** Per connection: TCP, handshake and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number;
  /** Idle time before a keep-alive `ping`; default 15_000 ms. */
  keepAliveMs?: number;
  /** Per download of a segment's audio from the manifest; default 10_000 ms (status reads have `statusTimeoutMs`). */
  httpTimeoutMs?: number;
  /** Aborts the session (as `abort()`). */
  signal?: AbortSignal;
  /** Where connections come from; default a new `connect()` each time (a pool hands out authenticated ones). */
  connectionSource?: ConnectionSource;
}

/** What `end()` resolves with. */
export interface ReliableSummary extends TransportSummary {
  segments: RealtimeSegmentResult[];
  /** Reads of the request-status route. */
  statusReads: number;
  timings: SessionTimings;
}

export class ReliableSession extends EventEmitter<TransportEvents> implements SegmentTransport {
  readonly name = TransportName.realtime;
  readonly requestId: string;
  readonly #opts: ReliableSessionOptions;
  readonly #machine: ReliableMachine;
  readonly #timers = new MachineTimers<TimerId>((id) => this.#machine.handle({ type: 'timer', id }));
  /** Each segment sent: its waterfall, and the waiter of its `send()` until it completed (one Map, not two: issue 29). */
  readonly #segments = new Map<string, { waterfall: WireWaterfall; waiter: Waiter<RealtimeSegmentResult> | undefined }>();
  readonly #timings: SessionTimings = {};
  /** Cancels HTTP reads in flight when the session ends; made at the first read (most sessions never read). */
  #http: AbortController | undefined;
  /** What the listener has of each segment: the stream's ledger once bound (`bindLedger`), else one of the session's own. */
  #heard: HeardAudio;
  /** The session's own ledger, while no stream bound one: it splices the machine's raw audio for direct listeners. */
  #ledger: AudioLedger | undefined;
  /** The machine's latest attempt and its process-unique tag (attempts only go up: an older one's audio never comes after). */
  #tagOf: { attempt: number; tag: number } | undefined;
  /** Tag of the already-spliced audio an unbound session emits. */
  #splicedTag: number | undefined;
  #outSequence = 0;
  #connection: RealtimeConnection | undefined;
  /** Bumped whenever a transport is dropped, so late events of an old one are ignored. */
  #generation = 0;
  #paused = false;
  #ready: ReadyInfo | undefined;
  #openWaiter: Waiter<ReadyInfo> | undefined;
  #endWaiter: Waiter<ReliableSummary> | undefined;
  #summary: ReliableSummary | undefined;
  #error: VoxpipeError | undefined;
  #unlinkSignal: (() => void) | undefined;

  constructor(options: ReliableSessionOptions) {
    super();
    this.#opts = options;
    this.requestId = options.requestId ?? randomUUID();
    // The machine's options pass through by construction: all but what this shell itself uses.
    const { wsUrl, rtHttpUrl: _rtHttpUrl, apiKey: _apiKey, requestId: _requestId, connectTimeoutMs: _connect, keepAliveMs: _keepAlive, httpTimeoutMs: _http, signal: _signal, connectionSource: _source, overload, ...machine } = options;
    const machineOptions: MachineOptions = {
      ...defined(machine),
      requestId: this.requestId,
      eventIdPrefix: `ev-${randomUUID().slice(0, 8)}`,
      overload: overload ?? new OverloadWatch(serverActivity(wsUrl)),
    };
    this.#ledger = new AudioLedger({ ...defined({ policy: options.onPartialSegment }), layout: false });
    this.#heard = this.#ledger;
    this.#machine = new ReliableMachine(machineOptions, new ReliableSession.#Port(this));
    if (options.signal) this.#linkSignal(options.signal);
  }

  /** Session-level times (open, authenticated, ready, first audio). */
  get timings(): Readonly<SessionTimings> {
    return this.#timings;
  }

  /** The `onPartialSegment` policy in force once `ready` arrived. */
  get partialPolicy(): PartialSegmentPolicy {
    return this.#machine.partialPolicy;
  }

  /** The stream reading this session keeps the one ledger: hand the machine's audio to it raw, and ask it what was heard. Before `open`. */
  bindLedger(ledger: HeardAudio): void {
    this.#heard = ledger;
    this.#ledger = undefined;
  }

  open(signal?: AbortSignal): Promise<ReadyInfo> {
    if (this.#openWaiter) return this.#openWaiter.promise;
    this.#openWaiter = waiter();
    if (this.#error) this.#openWaiter.reject(this.#error);
    else {
      if (signal) this.#linkSignal(signal);
      this.#timings.openMs = performance.now();
      this.#machine.handle({ type: 'open' });
    }
    return this.#openWaiter.promise;
  }

  send(segment: SegmentInput): Promise<RealtimeSegmentResult> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#summary || this.#endWaiter) return Promise.reject(new VoxpipeError(ErrorCode.invalidState, 'send() after end()'));
    try {
      validateSegment(segment);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.#machine.has(segment.segmentId)) {
      return Promise.reject(new VoxpipeError(ErrorCode.idempotencyConflict, `segment ${segment.segmentId} was already sent`));
    }
    const w = waiter<RealtimeSegmentResult>();
    this.#segments.set(segment.segmentId, { waterfall: { queuedMs: performance.now() }, waiter: w });
    this.#machine.handle({ type: 'segment-queued', segmentId: segment.segmentId, text: segment.text });
    return w.promise;
  }

  end(): Promise<ReliableSummary> {
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

  audioArrived(segmentId: string): boolean {
    return this.#machine.audioArrived(segmentId);
  }

  /** Retries, resumes and status reads so far. */
  summary(): ReliableSummary {
    return this.#summary ?? this.#buildSummary();
  }

  // ---------------------------------------------------------------- wiring

  #linkSignal(signal: AbortSignal): void {
    this.#unlinkSignal = linkAbortSignal(signal, (cause) => void this.abort(new AbortError('aborted by signal', { cause })), this.#unlinkSignal);
  }

  /**
   * The machine's port: one object whose methods reach this session. It is
   * a class in this class's body (so it may use the session's private
   * fields) rather than an object of eleven closures: ~700 bytes less per
   * session (issue 29, memory per stream).
   */
  static readonly #Port = class implements MachinePort {
    constructor(private readonly s: ReliableSession) {}
    sendFrame(event: ClientEvent): void {
      this.s.#connection?.send(event);
    }
    emitAudio(audio: MachineAudio): void {
      this.s.#emitAudio(audio);
    }
    audioOf(segmentId: string): ReturnType<HeardAudio['segment']> {
      return this.s.#heard.segment(segmentId);
    }
    emit(event: MachineEvent): void {
      this.s.#onMachineEvent(event);
    }
    startTimer(id: TimerId, ms: number): void {
      this.s.#timers.start(id, ms);
    }
    cancelTimer(id: TimerId): void {
      this.s.#timers.cancel(id);
    }
    openTransport(): void {
      this.s.#openTransport();
    }
    closeTransport(code: number, reason: string): void {
      const s = this.s;
      s.#generation++;
      const connection = s.#connection;
      s.#connection = undefined;
      connection?.close(code, reason);
    }
    fetchStatus(requestId: string): void {
      const s = this.s;
      const generation = s.#generation;
      // The read's own deadline is the machine's (`statusTimeoutMs`), so a hung read is also cancelled.
      const options = { ...s.#httpOptions(), timeoutMs: s.#opts.statusTimeoutMs ?? RECOVERY_DEFAULTS.statusTimeoutMs };
      void fetchRequestStatus(requestId, options).then((result) => {
        if (generation === s.#generation) s.#machine.handle({ type: 'status-fetched', result });
      });
    }
    fetchSegmentAudio(segmentId: string, url: string): void {
      const s = this.s;
      const generation = s.#generation;
      void fetchSegmentAudio(url, s.#httpOptions()).then((result) => {
        if (generation === s.#generation) s.#machine.handle({ type: 'audio-fetched', segmentId, result });
      });
    }
    random(): number {
      return Math.random();
    }
  };

  #httpOptions(): HttpReadOptions {
    const options: HttpReadOptions = { rtHttpUrl: this.#opts.rtHttpUrl, apiKey: this.#opts.apiKey, signal: (this.#http ??= new AbortController()).signal };
    if (this.#opts.httpTimeoutMs !== undefined) options.timeoutMs = this.#opts.httpTimeoutMs;
    return options;
  }

  #openTransport(): void {
    const generation = ++this.#generation;
    // Frames that arrive before `connect()` resolved are held, so the machine
    // always sees `transport-opened` first.
    let opened = false;
    const early: ServerEvent[] = [];
    const onEvent = (event: ServerEvent) => {
      if (generation !== this.#generation) return;
      if (!opened) early.push(event);
      else this.#machine.handle({ type: 'frame', event });
    };
    const onClose = (info: CloseInfo) => {
      if (generation !== this.#generation) return;
      this.#connection = undefined;
      const input: Parameters<ReliableMachine['handle']>[0] = { type: 'transport-closed', code: info.code, reason: info.reason, wasClean: info.wasClean };
      if (info.error) input.error = info.error;
      this.#machine.handle(input);
    };
    const options: Parameters<typeof connect>[0] = { wsUrl: this.#opts.wsUrl, apiKey: this.#opts.apiKey, onEvent, onClose };
    if (this.#opts.connectTimeoutMs !== undefined) options.connectTimeoutMs = this.#opts.connectTimeoutMs;
    if (this.#opts.keepAliveMs !== undefined) options.keepAliveMs = this.#opts.keepAliveMs;
    (this.#opts.connectionSource ?? connect)(options).then(
      (connection) => {
        if (generation !== this.#generation) {
          connection.close();
          return;
        }
        this.#timings.authenticatedMs ??= performance.now();
        this.#connection = connection;
        if (this.#paused) connection.pause();
        opened = true;
        this.#machine.handle({ type: 'transport-opened' });
        for (const event of early.splice(0)) {
          if (generation !== this.#generation) break;
          this.#machine.handle({ type: 'frame', event });
        }
      },
      (err: unknown) => {
        if (generation === this.#generation) this.#machine.handle({ type: 'transport-failed', error: asVoxpipeError(err) });
      },
    );
  }

  #emitAudio(audio: MachineAudio): void {
    const ready = this.#ready;
    if (!ready) return;
    // The reader's audio is already a Buffer view of the socket's bytes (`flat-frame.ts`): a second view per frame is a cost, not a safety.
    const data = Buffer.isBuffer(audio.data) ? audio.data : Buffer.from(audio.data.buffer, audio.data.byteOffset, audio.data.byteLength);
    if (this.#tagOf?.attempt !== audio.attempt) this.#tagOf = { attempt: audio.attempt, tag: nextAttemptTag() };
    const attempt = this.#tagOf.tag;
    const raw: TransportAudio = { data, segmentId: audio.segmentId, attempt, offset: audio.offset, sequence: ++this.#outSequence, format: ready.format, sampleRate: ready.sampleRate, channels: ready.channels, bitDepth: ready.bitDepth };
    const ledger = this.#ledger;
    if (!ledger) {
      if (data.length === 0) return;
      this.#timings.firstAudioMs ??= performance.now();
      this.emit('audio', raw);
      return;
    }
    // Unbound: the session's own ledger splices; what it lets through is one unbroken stream, tagged as one attempt.
    const heard = ledger.segment(audio.segmentId);
    const offset = heard.emittedBytes;
    const { chunk, restart } = ledger.accept(raw);
    if (restart) this.emit('discontinuity', { segmentId: audio.segmentId, droppedBytes: restart.droppedBytes });
    if (chunk.data.length === 0) return;
    this.#timings.firstAudioMs ??= performance.now();
    this.emit('audio', { ...chunk, attempt: (this.#splicedTag ??= nextAttemptTag()), offset });
  }

  #result(segmentId: string, units: number, audioBytes: number, expectedBytes?: number): RealtimeSegmentResult {
    return { segmentId, units, audioBytes, ...(expectedBytes !== undefined && { expectedBytes }), transport: TransportName.realtime, waterfall: this.#segments.get(segmentId)?.waterfall ?? {} };
  }

  #buildSummary(): ReliableSummary {
    const s = this.#machine.summary();
    return {
      requestId: s.requestId,
      units: s.units,
      retries: s.retries,
      resumed: s.resumed,
      statusReads: s.statusReads,
      segments: s.segments.map((r) => this.#result(r.segmentId, r.units, r.audioBytes, r.expectedBytes)),
      timings: { ...this.#timings },
    };
  }

  #onMachineEvent(event: MachineEvent): void {
    switch (event.type) {
      case 'ready':
        this.#ready = readyInfoFrom(event.ready, this.requestId);
        this.#timings.readyMs ??= performance.now();
        this.emit('ready', this.#ready);
        this.#openWaiter?.resolve(this.#ready);
        return;
      case 'resumed':
        this.emit('resumed', { attempt: event.attempt, requestId: event.requestId, pendingSegments: event.pendingSegments });
        return;
      case 'retry':
        this.emit('retry', { attempt: event.attempt, error: event.error, delayMs: event.delayMs });
        return;
      case 'segment-accepted':
        this.emit('segment-accepted', event.segmentId);
        return;
      case 'segment-completed': {
        const result = this.#result(event.result.segmentId, event.result.units, event.result.audioBytes, event.result.expectedBytes);
        this.emit('segment-completed', result);
        const sent = this.#segments.get(result.segmentId);
        sent?.waiter?.resolve(result);
        if (sent) sent.waiter = undefined;
        return;
      }
      case 'usage':
        this.emit('usage', {
          segmentId: event.segmentId,
          segmentUnits: event.segmentUnits,
          sessionUnits: event.sessionUnits,
          quotaRemaining: event.quotaRemaining,
          ...(event.audioBytes !== undefined && { audioBytes: event.audioBytes }),
        });
        return;
      case 'warning':
        this.emit('warning', { code: event.code, message: event.message });
        return;
      case 'mark': {
        const waterfall = this.#segments.get(event.segmentId)?.waterfall;
        if (waterfall) markStage(waterfall, event.stage, performance.now());
        return;
      }
      case 'finished':
        this.#summary = this.#buildSummary();
        this.#cleanup();
        this.#endWaiter?.resolve(this.#summary);
        return;
      case 'failed':
        this.#error = event.error;
        this.#cleanup();
        this.#openWaiter?.reject(event.error);
        for (const sent of this.#segments.values()) {
          sent.waiter?.reject(event.error);
          sent.waiter = undefined;
        }
        this.#endWaiter?.reject(event.error);
        return;
    }
  }

  #cleanup(): void {
    this.#timers.clear();
    this.#http?.abort();
    this.#unlinkSignal?.();
    this.#unlinkSignal = undefined;
  }
}
