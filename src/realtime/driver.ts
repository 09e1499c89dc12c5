/**
 * The driver: the one piece between a sans-IO machine (reliable or simple)
 * and the world, on every platform. The machine decides; the driver keeps
 * the lifecycle around it, once for both modes and both platforms:
 *
 * - the waiters of `open()`, each `send()` and `end()`, the abort signal,
 *   pause and resume;
 * - connections: each one tagged with a generation, so anything of a
 *   connection dropped or of a request ended (a frame, a close, a read, a
 *   late `connect()`) never reaches the machine; frames and a close that
 *   arrive before the link resolved are held and replayed after
 *   `transport-opened`, in order;
 * - the machine's timers (one `setTimeout` per timer id), `ready` as
 *   `ReadyInfo`, process-unique attempt tags (`nextAttemptTag()`), the
 *   timings (each stamp is the first time it happened);
 * - the segment ledger: the stream's once it binds one (`bindLedger`), the
 *   machine's audio then goes out raw; else one the driver makes (the same
 *   `SpliceLedger`), which splices, so a direct listener hears one unbroken
 *   stream.
 *
 * What differs is plugged in: a `Link` (Node `ws` with a Bearer header,
 * `node-link.ts`; the browser's WebSocket with a ticket, `browser/link.ts`),
 * `Reads` for the reliable machine's recovery (the HTTP client, or the
 * page's callbacks), and the owner that hands the results on (an event
 * emitter in Node, callbacks in the browser). No Node API here.
 */
import { AbortError, VoxpipeError } from '../errors.js';
import type { AudioFormat } from '../protocol/audio.js';
import { CloseCode, ErrorCode } from '../protocol/constants.js';
import type { ClientEvent, ReadyEvent, ServerEvent } from '../protocol/events.js';
import { SpliceLedger, type PartialSegmentPolicy } from '../splice.js';
import { nextAttemptTag, TransportName, type HeardAudio, type HeardSegment, type ReadyInfo, type SegmentInput, type TransportAudio } from '../transport.js';
import type { CloseInfo } from './connection.js';
import type { MachineAudio, MachineEvent, MachineInput, MachinePort, MachineSegmentResult, SegmentAudioResult, StatusResult, TimerId } from './reliable/types.js';
import { validateSegment } from './session-util.js';
import type { SimpleEvent, SimpleInput, SimplePort, SimpleTimerId } from './simple/types.js';
import { markStage, type RealtimeSegmentResult, type SessionTimings, type WireWaterfall } from './waterfall.js';

/** Where a connection's frames and its close go. */
export interface LinkHandlers {
  /** Every server frame after `authenticated` (possibly before the link's promise settled). */
  onEvent(event: ServerEvent): void;
  /** Once, however the connection ends after `authenticated`. */
  onClose(info: CloseInfo): void;
}

/** One authenticated connection, as the driver uses it. */
export interface LinkConnection {
  send(event: ClientEvent): void;
  /** Stop reading frames (backpressure); a link that cannot pause ignores it. */
  pause(): void;
  resume(): void;
  close(code?: number, reason?: string): void;
}

/** Opens one authenticated connection; rejects with a VoxpipeError when it cannot. */
export type Link = (handlers: LinkHandlers) => Promise<LinkConnection>;

/** The reliable machine's HTTP reads; each answers with a result, never throws. */
export interface Reads {
  status(requestId: string, signal: AbortSignal): Promise<StatusResult>;
  segmentAudio(url: string, signal: AbortSignal): Promise<SegmentAudioResult>;
}

/** Every event either machine reports. */
export type DriverEvent = MachineEvent | SimpleEvent;

/** A machine the driver drives (`ReliableMachine`, `SimpleMachine`). */
export interface DrivenMachine {
  handle(input: MachineInput | SimpleInput): void;
  pending(): SegmentInput[];
  /** Why a segment cannot be queued now, by the mode's own rules; absent: the protocol's segment limits. */
  refusal?(segment: SegmentInput): VoxpipeError | undefined;
}

/** Audio as the driver hands it on: a `TransportAudio` whose bytes are the platform's (`Buffer` in Node). */
export type DriverAudio<B extends Uint8Array = Uint8Array> = Omit<TransportAudio, 'data'> & { data: B };

/** Who hands the driver's results on (the Node session's events, the browser's callbacks). */
export interface DriverOwner<Summary, B extends Uint8Array = Uint8Array> {
  ready(info: ReadyInfo): void;
  audio(chunk: DriverAudio<B>): void;
  /** The driver's own ledger restarted a segment (`onPartialSegment: 'restart'`). */
  discontinuity(segmentId: string, droppedBytes: number): void;
  segmentCompleted(result: RealtimeSegmentResult): void;
  /** Every machine event, after the driver's own bookkeeping. */
  event(event: DriverEvent): void;
  /** What `end()` resolves with, once the machine finished. */
  summarize(): Summary;
}

export interface DriverOptions<M extends DrivenMachine, B extends Uint8Array = Uint8Array> {
  /** Makes the machine, with the driver as its port. */
  machine(port: MachinePort & SimplePort): M;
  link: Link;
  /** The reliable machine's reads; simple mode reads nothing. */
  reads?: Reads;
  /** The id the client chose (`start.request_id`), for a `ready` that does not carry one the client reads. */
  requestId?: string | undefined;
  /** Policy of the driver's own ledger; default the format's (`defaultPartialPolicy`). */
  partialPolicy?: PartialSegmentPolicy | undefined;
  /** The platform's view of audio bytes (Node: a `Buffer` over the same memory). */
  bytes(data: Uint8Array): B;
  /** Aborts the request (as `abort()`). */
  signal?: AbortSignal | undefined;
}

/** A promise with its resolve and reject at hand. */
interface Waiter<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function waiter<T>(): Waiter<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Anything thrown, as a VoxpipeError. */
function asVoxpipeError(err: unknown): VoxpipeError {
  return err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * What `ready` tells the stream. `requestId`: the id the client chose, for a
 * deployment whose `ready` does not carry it under a name the client reads.
 */
function readyInfoFrom(ready: ReadyEvent, requestId?: string): ReadyInfo {
  return {
    transport: TransportName.realtime,
    mode: ready.mode,
    requestId: ready.request_id || requestId || '',
    sessionId: ready.session_id,
    provider: ready.provider,
    model: ready.model,
    voiceId: ready.voice_id,
    format: ready.format as AudioFormat,
    // Compressed formats may omit PCM metadata; their decoder learns it from the stream.
    sampleRate: ready.sample_rate ?? 24_000,
    channels: ready.channels ?? 1,
    bitDepth: ready.bit_depth ?? 16,
  };
}

/**
 * The machine's named one-shot timers on the global `setTimeout`: starting
 * an id again replaces it; a timer that fires calls `fire(id)`.
 */
class TimerTable<Id> {
  // A machine runs a few timers at once: two short arrays, not a Map (memory per stream).
  readonly #ids: Id[] = [];
  readonly #handles: ReturnType<typeof setTimeout>[] = [];
  constructor(private readonly fire: (id: Id) => void) {}

  start(id: Id, ms: number): void {
    this.cancel(id);
    const handle = setTimeout(() => {
      this.#forget(id, handle);
      this.fire(id);
    }, ms);
    this.#ids.push(id);
    this.#handles.push(handle);
  }

  cancel(id: Id): void {
    const i = this.#ids.indexOf(id);
    if (i < 0) return;
    clearTimeout(this.#handles[i]);
    this.#ids.splice(i, 1);
    this.#handles.splice(i, 1);
  }

  clear(): void {
    for (const handle of this.#handles) clearTimeout(handle);
    this.#ids.length = 0;
    this.#handles.length = 0;
  }

  #forget(id: Id, handle: ReturnType<typeof setTimeout>): void {
    const i = this.#ids.indexOf(id);
    if (i < 0 || this.#handles[i] !== handle) return;
    this.#ids.splice(i, 1);
    this.#handles.splice(i, 1);
  }
}

/** A segment sent: its waterfall, and the waiter of its `send()` until it completed. */
interface Sent {
  waterfall: WireWaterfall;
  waiter: Waiter<RealtimeSegmentResult> | undefined;
}

/** Drives one machine for one request: the machine's port, and the lifecycle a transport offers. */
export class Driver<M extends DrivenMachine, Summary, B extends Uint8Array = Uint8Array> implements MachinePort, SimplePort {
  readonly machine: M;
  /** Session-level times: each the first time it happened. */
  readonly timings: SessionTimings = {};
  readonly #owner: DriverOwner<Summary, B>;
  readonly #link: Link;
  readonly #reads: Reads | undefined;
  readonly #requestId: string | undefined;
  readonly #policy: PartialSegmentPolicy | undefined;
  readonly #bytes: (data: Uint8Array) => B;
  readonly #timers = new TimerTable<TimerId | SimpleTimerId>((id) => this.machine.handle({ type: 'timer', id } as MachineInput));
  readonly #segments = new Map<string, Sent>();
  /** What the listener has of each segment: the stream's ledger once bound, else the driver's own (made at first need). */
  #ledger: HeardAudio | undefined;
  /** The driver's own ledger, when nobody bound one: it splices what it lets through. */
  #own: SpliceLedger | undefined;
  /** Tag of the already-spliced audio the driver's own ledger lets through: one unbroken stream, one attempt. */
  #splicedTag = 0;
  /** The machine's latest attempt and its process-unique tag (attempts only go up). */
  #machineAttempt = -1;
  #tag = 0;
  #connection: LinkConnection | undefined;
  /** Bumped whenever a connection is dropped or the request ended: what an older one sends is ignored. */
  #generation = 0;
  #paused = false;
  #ready: ReadyInfo | undefined;
  #openWaiter: Waiter<ReadyInfo> | undefined;
  #endWaiter: Waiter<Summary> | undefined;
  #summary: Summary | undefined;
  #ended = false;
  #error: VoxpipeError | undefined;
  /** Cancels reads in flight when the request ends; made at the first read (most requests never read). */
  #http: AbortController | undefined;
  #unlinkSignal: (() => void) | undefined;

  constructor(options: DriverOptions<M, B>, owner: DriverOwner<Summary, B>) {
    this.#owner = owner;
    this.#link = options.link;
    this.#reads = options.reads;
    this.#requestId = options.requestId;
    this.#policy = options.partialPolicy;
    this.#bytes = options.bytes;
    this.machine = options.machine(this);
    if (options.signal) this.#linkSignal(options.signal);
  }

  /** The summary, once the machine finished. */
  get summary(): Summary | undefined {
    return this.#summary;
  }

  /** The stream reading this request keeps the one ledger: hand it the machine's audio raw, and ask it what was heard. Before `open`. */
  bindLedger(ledger: HeardAudio): void {
    this.#ledger = ledger;
    this.#own = undefined;
  }

  open(signal?: AbortSignal): Promise<ReadyInfo> {
    if (this.#openWaiter) return this.#openWaiter.promise;
    this.#openWaiter = waiter();
    if (this.#ended) {
      // Nothing left to open: the request failed, or ended (`end()` with nothing sent).
      this.#openWaiter.reject(this.#error ?? new VoxpipeError(ErrorCode.invalidState, 'open() after the request ended'));
      return this.#openWaiter.promise;
    }
    if (signal) this.#linkSignal(signal);
    this.timings.openMs ??= performance.now();
    this.machine.handle({ type: 'open' });
    return this.#openWaiter.promise;
  }

  send(segment: SegmentInput): Promise<RealtimeSegmentResult> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#ended || this.#endWaiter) return Promise.reject(new VoxpipeError(ErrorCode.invalidState, 'send() after end()'));
    let refused: VoxpipeError | undefined;
    try {
      refused = this.machine.refusal ? this.machine.refusal(segment) : (validateSegment(segment), undefined);
    } catch (err) {
      refused = asVoxpipeError(err);
    }
    if (!refused && this.#segments.has(segment.segmentId)) refused = new VoxpipeError(ErrorCode.idempotencyConflict, `segment ${segment.segmentId} was already sent`);
    if (refused) return Promise.reject(refused);
    const w = waiter<RealtimeSegmentResult>();
    this.#segments.set(segment.segmentId, { waterfall: { queuedMs: performance.now() }, waiter: w });
    this.machine.handle({ type: 'segment-queued', segmentId: segment.segmentId, text: segment.text });
    return w.promise;
  }

  end(): Promise<Summary> {
    if (this.#endWaiter) return this.#endWaiter.promise;
    this.#endWaiter = waiter();
    if (this.#error) this.#endWaiter.reject(this.#error);
    else if (this.#ended) this.#endWaiter.resolve(this.#summary as Summary);
    else this.machine.handle({ type: 'stop-requested' });
    return this.#endWaiter.promise;
  }

  abort(reason: VoxpipeError = new AbortError()): void {
    this.machine.handle({ type: 'abort-requested', reason });
  }

  pause(): void {
    this.#paused = true;
    this.#connection?.pause();
    this.machine.handle({ type: 'reader', paused: true });
  }

  resume(): void {
    this.#paused = false;
    this.#connection?.resume();
    this.machine.handle({ type: 'reader', paused: false });
  }

  /** A completed segment as a transport reports it. */
  result(r: MachineSegmentResult): RealtimeSegmentResult {
    const result: RealtimeSegmentResult = { segmentId: r.segmentId, units: r.units, audioBytes: r.audioBytes, transport: TransportName.realtime, waterfall: this.#segments.get(r.segmentId)?.waterfall ?? {} };
    if (r.expectedBytes !== undefined) result.expectedBytes = r.expectedBytes;
    return result;
  }

  /** A connection is open (for `dropConnection`-style tests of the platforms). */
  get connected(): boolean {
    return this.#connection !== undefined;
  }

  // ------------------------------------------------------------ the machine's port

  sendFrame(event: ClientEvent): void {
    this.#connection?.send(event);
  }

  audioOf(segmentId: string): HeardSegment {
    return this.#heard().segment(segmentId);
  }

  emitAudio(audio: MachineAudio): void {
    const ready = this.#ready;
    if (!ready) return;
    const data = this.#bytes(audio.data);
    if (this.#machineAttempt !== audio.attempt) {
      this.#machineAttempt = audio.attempt;
      this.#tag = nextAttemptTag();
    }
    const raw: DriverAudio<B> = { data, segmentId: audio.segmentId, attempt: this.#tag, offset: audio.offset, sequence: audio.sequence, format: ready.format, sampleRate: ready.sampleRate, channels: ready.channels, bitDepth: ready.bitDepth };
    this.#heard();
    const own = this.#own;
    if (!own) {
      if (data.length === 0) return;
      this.timings.firstAudioMs ??= performance.now();
      this.#owner.audio(raw);
      return;
    }
    const offset = own.segment(audio.segmentId).emittedBytes;
    const { chunk, restart } = own.accept(raw);
    if (restart) this.#owner.discontinuity(audio.segmentId, restart.droppedBytes);
    if (chunk.data.length === 0) return;
    this.timings.firstAudioMs ??= performance.now();
    this.#owner.audio({ ...chunk, attempt: (this.#splicedTag ||= nextAttemptTag()), offset });
  }

  emit(event: DriverEvent): void {
    switch (event.type) {
      case 'ready':
        this.#ready = readyInfoFrom(event.ready, this.#requestId);
        this.timings.readyMs ??= performance.now();
        this.#owner.ready(this.#ready);
        this.#openWaiter?.resolve(this.#ready);
        break;
      case 'mark': {
        const waterfall = this.#segments.get(event.segmentId)?.waterfall;
        if (waterfall) markStage(waterfall, event.stage, performance.now());
        break;
      }
      case 'segment-completed': {
        const result = this.result(event.result);
        this.#owner.segmentCompleted(result);
        const sent = this.#segments.get(result.segmentId);
        sent?.waiter?.resolve(result);
        if (sent) sent.waiter = undefined;
        break;
      }
      case 'finished':
        this.#summary = this.#owner.summarize();
        this.#cleanup();
        this.#endWaiter?.resolve(this.#summary);
        break;
      case 'failed':
        this.#error = event.error;
        this.#cleanup();
        this.#openWaiter?.reject(event.error);
        for (const sent of this.#segments.values()) {
          sent.waiter?.reject(event.error);
          sent.waiter = undefined;
        }
        this.#endWaiter?.reject(event.error);
        break;
    }
    this.#owner.event(event);
  }

  startTimer(id: TimerId | SimpleTimerId, ms: number): void {
    this.#timers.start(id, ms);
  }

  cancelTimer(id: TimerId | SimpleTimerId): void {
    this.#timers.cancel(id);
  }

  openTransport(): void {
    const generation = ++this.#generation;
    // Frames and a close that arrive before the link resolved are held and
    // replayed after `transport-opened`, so the machine sees them in order.
    let held: ServerEvent[] | undefined = [];
    let closedEarly: CloseInfo | undefined;
    const onEvent = (event: ServerEvent): void => {
      if (generation !== this.#generation) return;
      if (held) held.push(event);
      else this.machine.handle({ type: 'frame', event });
    };
    const onClose = (info: CloseInfo): void => {
      if (generation !== this.#generation) return;
      if (held) closedEarly = info;
      else this.#closed(info);
    };
    this.#link({ onEvent, onClose }).then(
      (connection) => {
        if (generation !== this.#generation) {
          connection.close();
          return;
        }
        this.timings.authenticatedMs ??= performance.now();
        this.#connection = connection;
        if (this.#paused) connection.pause();
        const early = held!;
        held = undefined;
        this.machine.handle({ type: 'transport-opened' });
        for (const event of early) {
          if (generation !== this.#generation) return;
          this.machine.handle({ type: 'frame', event });
        }
        if (closedEarly && generation === this.#generation) this.#closed(closedEarly);
      },
      (err: unknown) => {
        if (generation === this.#generation) this.machine.handle({ type: 'transport-failed', error: asVoxpipeError(err) });
      },
    );
  }

  closeTransport(code: number, reason: string): void {
    this.#generation++;
    const connection = this.#connection;
    this.#connection = undefined;
    connection?.close(code, reason);
  }

  fetchStatus(requestId: string): void {
    const reads = this.#reads;
    if (!reads) return;
    const generation = this.#generation;
    void reads.status(requestId, this.#httpSignal()).then((result) => {
      if (generation === this.#generation) this.machine.handle({ type: 'status-fetched', result });
    });
  }

  fetchSegmentAudio(segmentId: string, url: string): void {
    const reads = this.#reads;
    if (!reads) return;
    const generation = this.#generation;
    void reads.segmentAudio(url, this.#httpSignal()).then((result) => {
      if (generation === this.#generation) this.machine.handle({ type: 'audio-fetched', segmentId, result });
    });
  }

  random(): number {
    return Math.random();
  }

  // ---------------------------------------------------------------- inside

  #heard(): HeardAudio {
    return (this.#ledger ??= this.#own = new SpliceLedger(this.#policy === undefined ? {} : { policy: this.#policy }));
  }

  #closed(info: CloseInfo): void {
    this.#connection = undefined;
    const input: MachineInput = { type: 'transport-closed', code: info.code, reason: info.reason, wasClean: info.wasClean };
    if (info.error) input.error = info.error;
    this.machine.handle(input);
  }

  #httpSignal(): AbortSignal {
    return (this.#http ??= new AbortController()).signal;
  }

  #linkSignal(signal: AbortSignal): void {
    const onAbort = (): void => this.abort(new AbortError('aborted by signal', { cause: signal.reason }));
    if (signal.aborted) {
      queueMicrotask(onAbort);
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    const previous = this.#unlinkSignal;
    this.#unlinkSignal = () => {
      previous?.();
      signal.removeEventListener('abort', onAbort);
    };
  }

  /** The request ended: no timer, read, signal or connection of it is left. */
  #cleanup(): void {
    this.#ended = true;
    this.#timers.clear();
    this.#http?.abort();
    this.#unlinkSignal?.();
    this.#unlinkSignal = undefined;
    this.closeTransport(CloseCode.normal, 'ended');
  }
}
