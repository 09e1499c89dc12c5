/**
 * The driver: the one piece between a sans-IO machine (reliable or simple)
 * and the world, on every platform. The machine decides; the driver keeps
 * the lifecycle around it, once for both modes and both platforms:
 *
 * - abort, pause and resume (and, in `transport-driver.ts`, the waiters of
 *   `open()`, each `send()` and `end()`, and the abort signal);
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
import { AbortError, type VoxpipeError } from '../errors.js';
import type { AudioFormat } from '../protocol/audio.js';
import { CloseCode } from '../protocol/constants.js';
import type { ClientEvent, ReadyEvent, ServerEvent } from '../protocol/events.js';
import { SpliceLedger, type PartialSegmentPolicy } from '../splice.js';
import { nextAttemptTag, TransportName, type HeardAudio, type SegmentAudio, type ReadyInfo, type SegmentInput, type TransportAudio } from '../transport.js';
import type { CloseInfo } from './connection.js';
import type { MachineAudio, MachineEvent, MachineInput, MachinePort, SegmentAudioResult, StatusResult, TimerId } from './reliable/types.js';
import type { SimpleEvent, SimpleInput, SimplePort, SimpleTimerId } from './simple/types.js';
import type { SessionTimings } from './waterfall.js';

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
  /** Stop reading frames (backpressure); absent where the link cannot (the browser's WebSocket). */
  pause?(): void;
  resume?(): void;
  close(code?: number, reason?: string): void;
}

/** Opens one authenticated connection; rejects with a VoxpipeError (only) when it cannot. */
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

/** Audio as the driver hands it on: a `TransportAudio` whose bytes the platform's owner may view as its own (a `Buffer` in Node). */
export type DriverAudio = Omit<TransportAudio, 'data'> & { data: Uint8Array };

/** Who hands the driver's results on (the Node session's events, the browser's callbacks). */
export interface DriverOwner {
  ready(info: ReadyInfo): void;
  /** A fresh object per chunk: the owner may replace its `data` with its platform's view. */
  audio(chunk: DriverAudio): void;
  /** The driver's own ledger restarted a segment (`onPartialSegment: 'restart'`). */
  discontinuity(segmentId: string, droppedBytes: number): void;
  /** Every machine event, after the driver's own bookkeeping. */
  event(event: DriverEvent): void;
}

export interface DriverOptions<M extends DrivenMachine> {
  /** Makes the machine, with the driver as its port. */
  machine(port: MachinePort & SimplePort): M;
  link: Link;
  /** The reliable machine's reads; simple mode reads nothing. */
  reads?: Reads;
  /** The id the client chose (`start.request_id`), for a `ready` that does not carry one the client reads. */
  requestId?: string | undefined;
  /** Policy of the driver's own ledger; default the format's (`defaultPartialPolicy`). */
  partialPolicy?: PartialSegmentPolicy | undefined;
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
 * Drives one machine for one request: the machine's port, its connections,
 * timers, ledger and `ready`. The browser facade drives the machine through
 * it with inputs and listens to its events; `TransportDriver`
 * (`transport-driver.ts`) adds the waiters a `SegmentTransport` offers.
 */
export class Driver<M extends DrivenMachine> implements MachinePort, SimplePort {
  readonly machine: M;
  /** Session-level times: each the first time it happened. */
  readonly timings: SessionTimings = {};
  readonly #owner: DriverOwner;
  readonly #link: Link;
  readonly #reads: Reads | undefined;
  readonly #requestId: string | undefined;
  readonly #policy: PartialSegmentPolicy | undefined;
  /** The machine's timers: one `setTimeout` per id (a machine runs a few at once). */
  #timers: Partial<Record<TimerId | SimpleTimerId, ReturnType<typeof setTimeout> | undefined>> = {};
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
  /** Cancels reads in flight when the request ends; made at the first read (most requests never read). */
  #http: AbortController | undefined;

  constructor(options: DriverOptions<M>, owner: DriverOwner) {
    this.#owner = owner;
    this.#link = options.link;
    this.#reads = options.reads;
    this.#requestId = options.requestId;
    this.#policy = options.partialPolicy;
    this.machine = options.machine(this);
  }

  /** The stream reading this request keeps the one ledger: hand it the machine's audio raw, and ask it what was heard. Before `open`. */
  bindLedger(ledger: HeardAudio): void {
    this.#ledger = ledger;
    this.#own = undefined;
  }

  /**
   * The driver's own ledger while no stream bound one (made at first use):
   * a facade that reads the counts of what it was handed (the browser's
   * speech core) reads this one, so a request never has two.
   */
  get ownLedger(): SpliceLedger | undefined {
    this.#heard();
    return this.#own;
  }

  /** What `ready` said, once it came. */
  get ready(): ReadyInfo | undefined {
    return this.#ready;
  }

  abort(reason: VoxpipeError = new AbortError()): void {
    this.machine.handle({ type: 'abort-requested', reason });
  }

  pause(): void {
    this.#reader(true);
  }

  resume(): void {
    this.#reader(false);
  }

  /** Drop the connection as a network failure would: the machine sees an abnormal close and resumes (demos and tests). */
  dropConnection(): void {
    if (!this.#connection) return;
    this.closeTransport(CloseCode.normal, 'dropped');
    this.#closed({ code: CloseCode.abnormal, reason: 'dropped', wasClean: false });
  }

  // ------------------------------------------------------------ the machine's port

  sendFrame(event: ClientEvent): void {
    this.#connection?.send(event);
  }

  audioOf(segmentId: string): SegmentAudio {
    return this.#heard().segment(segmentId);
  }

  emitAudio(audio: MachineAudio): void {
    const ready = this.#ready;
    if (!ready) return;
    const data = audio.data;
    if (this.#machineAttempt !== audio.attempt) {
      this.#machineAttempt = audio.attempt;
      this.#tag = nextAttemptTag();
    }
    const raw: DriverAudio = { data, segmentId: audio.segmentId, attempt: this.#tag, offset: audio.offset, format: ready.format, sampleRate: ready.sampleRate, channels: ready.channels, bitDepth: ready.bitDepth };
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
    if (event.type === 'ready') {
      this.#ready = readyInfoFrom(event.ready, this.#requestId);
      this.timings.readyMs ??= performance.now();
      this.#owner.ready(this.#ready);
    } else if (event.type === 'finished' || event.type === 'failed') {
      // The request ended: no timer, read or connection of it is left, and a connection still on its way is closed when it comes.
      for (const handle of Object.values(this.#timers)) clearTimeout(handle);
      this.#timers = {};
      this.#http?.abort();
      this.closeTransport(CloseCode.normal, 'ended');
    }
    this.#owner.event(event);
  }

  /** Starting an id again replaces its timer. */
  startTimer(id: TimerId | SimpleTimerId, ms: number): void {
    clearTimeout(this.#timers[id]);
    this.#timers[id] = setTimeout(() => {
      this.#timers[id] = undefined;
      this.machine.handle({ type: 'timer', id } as MachineInput);
    }, ms);
  }

  cancelTimer(id: TimerId | SimpleTimerId): void {
    clearTimeout(this.#timers[id]);
    this.#timers[id] = undefined;
  }

  openTransport(): void {
    // Audio comes only once a transport opened: the ledger is settled by now (bound, or the driver's own).
    this.#heard();
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
        if (generation !== this.#generation) return connection.close();
        this.timings.authenticatedMs ??= performance.now();
        this.#connection = connection;
        if (this.#paused) connection.pause?.();
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
        if (generation === this.#generation) this.machine.handle({ type: 'transport-failed', error: err as VoxpipeError });
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
    const generation = this.#generation;
    void this.#reads?.status(requestId, this.#httpSignal()).then((result) => {
      if (generation === this.#generation) this.machine.handle({ type: 'status-fetched', result });
    });
  }

  fetchSegmentAudio(segmentId: string, url: string): void {
    const generation = this.#generation;
    void this.#reads?.segmentAudio(url, this.#httpSignal()).then((result) => {
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

  #reader(paused: boolean): void {
    this.#paused = paused;
    if (paused) this.#connection?.pause?.();
    else this.#connection?.resume?.();
    this.machine.handle({ type: 'reader', paused });
  }

  #httpSignal(): AbortSignal {
    return (this.#http ??= new AbortController()).signal;
  }
}
