/**
 * The simple-mode state machine, sans-IO, beside the reliable one
 * (`../reliable/machine.ts`) and built the same way: one input,
 * `handle(input)`; every effect goes through the injected `SimplePort`. It
 * never reads a clock, opens a socket or starts a real timer: deadlines are
 * named timers the shell runs. `SimpleSession` wires it to `ws` and timers.
 *
 * Simple mode (spec 3.4b, 4.10) carries one generation per connection and
 * commits once: every part but the last goes out as `input` with
 * `commit: false` once `ready` came, and `stop-requested` sends the last one
 * with `commit: true`. Then the server owes audio and `finish`.
 *
 What it guarantees (this file keeps simple mode's own rules; what both
 * modes share is written once beside it):
 * - Audio leaves in `sequence` order (spec 6, rule 2): `AudioOrder`
 *   (sequence-window.ts, shared with reliable mode) reorders within
 *   `reorderWindowFrames`, drops repeats and reports gaps once. It leaves raw (a stream header included), tagged
 *   with the part that committed it (the last: the request's audio is all
 *   one generation) and attempt 1, placed where the ledger has it up to
 *   (`port.audioOf`): the machine counts no audio and numbers no output.
 * - Deadlines (`Deadlines`, deadlines.ts): `startTimeoutMs` for `ready`,
 *   then after the commit `progressTimeoutMs` of quiet (only audio, `finish`
 *   and `error` count), checked in slices; none while the reader is paused.
 *   A deadline that passes fails with a retryable `TimeoutError`.
 * - Simple mode never retries: a close before `finish` fails, `retryable`
 *   as the close-code policy says (`protocol/close-codes.ts`).
 * - At `finish`, one result per part: the last carries the request's units,
 *   the bytes the ledger emitted and, when the server said them (`usage` or
 *   `segment_completed` audio bytes, under any name the tolerant reader
 *   knows), `expectedBytes` by the one header rule (`expectedAudioBytes`);
 *   the others zero.
 */
import { ConnectionError, RealtimeServerError, TimeoutError, VoxpipeError } from '../../errors.js';
import { closePolicy, CloseCode, ErrorCode, FinishReason, Mode } from '../../protocol/constants.js';
import { WarningCode } from '../../protocol/codes.js';
import type { AudioEvent, ReadyEvent, ServerEvent, StartEvent } from '../../protocol/events.js';
import { countChars, LIMITS } from '../../protocol/limits.js';
import { expectedAudioBytes } from '../../splice.js';
import type { SegmentInput } from '../../transport.js';
import { checkBudgets, RECOVERY_DEFAULTS } from '../budgets.js';
import { Deadlines } from '../deadlines.js';
import { AudioOrder, type SequenceVerdict } from '../sequence-window.js';
import { validateSegment } from '../session-util.js';
import { SimpleTimerId, type MachineSegmentResult, type SimpleInput, type SimpleMachineOptions, type SimpleMachineSummary, type SimplePort } from './types.js';

/** Where the machine is. */
export const SimplePhase = {
  idle: 'idle',
  /** `openTransport()` asked, waiting for `transport-opened`. */
  connecting: 'connecting',
  /** `start` sent, waiting for `ready`. */
  starting: 'starting',
  /** `ready` received: parts go out uncommitted. */
  running: 'running',
  /** The last part went out with `commit: true`: waiting for audio and `finish`. */
  committed: 'committed',
  done: 'done',
  failed: 'failed',
  aborted: 'aborted',
} as const;
export type SimplePhase = (typeof SimplePhase)[keyof typeof SimplePhase];

const TERMINAL: ReadonlySet<SimplePhase> = new Set([SimplePhase.done, SimplePhase.failed, SimplePhase.aborted]);
const CONNECTED: ReadonlySet<SimplePhase> = new Set([SimplePhase.starting, SimplePhase.running, SimplePhase.committed]);
const TIMERS: readonly SimpleTimerId[] = [SimpleTimerId.start, SimpleTimerId.progress];
/** Simple mode has one connection: every audio byte belongs to its one attempt. */
const ATTEMPT = 1;

export class SimpleMachine {
  readonly #port: SimplePort;
  readonly #opts: SimpleMachineOptions;
  readonly #startTimeoutMs: number;
  readonly #progressTimeoutMs: number;
  readonly #eventIdPrefix: string;
  /** Puts `audio` frames back in `sequence` order, and says what it dropped or skipped. */
  readonly #order: AudioOrder<AudioEvent>;
  readonly #timers: Deadlines<SimpleTimerId>;

  #phase: SimplePhase = SimplePhase.idle;
  #transportOpen = false;
  #ready: ReadyEvent | undefined;
  #requestId: string;
  /** Every part queued, in order. */
  readonly #sent: SegmentInput[] = [];
  /** Parts already sent as `input` frames; the last is held back until the commit. */
  #inputs = 0;
  #requestChars = 0;
  #ending = false;
  #readerPaused = false;
  #eventCounter = 0;
  /** Audio bytes the server stated, per server segment (`usage`, `segment_completed`). */
  readonly #stated = new Map<string, number>();
  /** Server segments that carried audio. */
  readonly #withAudio = new Set<string>();
  #summary: SimpleMachineSummary | undefined;
  #error: VoxpipeError | undefined;

  constructor(options: SimpleMachineOptions, port: SimplePort) {
    checkBudgets(options);
    this.#opts = options;
    this.#port = port;
    this.#requestId = options.requestId ?? '';
    this.#startTimeoutMs = options.startTimeoutMs ?? RECOVERY_DEFAULTS.startTimeoutMs;
    this.#progressTimeoutMs = options.progressTimeoutMs ?? RECOVERY_DEFAULTS.progressTimeoutMs;
    this.#eventIdPrefix = (options.eventIdPrefix ?? 'simple').slice(0, 100);
    this.#order = new AudioOrder<AudioEvent>(options.reorderWindowFrames, 1, port);
    this.#timers = new Deadlines(port, TIMERS, SimpleTimerId.progress);
  }

  get phase(): SimplePhase {
    return this.#phase;
  }

  get error(): VoxpipeError | undefined {
    return this.#error;
  }

  get summary(): SimpleMachineSummary | undefined {
    return this.#summary;
  }

  /** Parts not settled, in order (none once the request ended). */
  pending(): SegmentInput[] {
    return TERMINAL.has(this.#phase) ? [] : [...this.#sent];
  }

  /**
   * Why a part cannot be queued now, if it cannot: after `stop-requested`,
   * a bad id or text, or past the request's 10,000 characters. Pure: queue
   * it with `segment-queued` when this says nothing.
   */
  refusal(segment: SegmentInput): VoxpipeError | undefined {
    if (TERMINAL.has(this.#phase)) return this.#error ?? new VoxpipeError(ErrorCode.invalidState, 'send() after the request ended');
    if (this.#ending || this.#phase === SimplePhase.committed) return new VoxpipeError(ErrorCode.invalidState, 'send() after end()');
    try {
      validateSegment(segment, LIMITS.simpleRequestMaxChars);
    } catch (err) {
      return err as VoxpipeError;
    }
    if (this.#requestChars + countChars(segment.text) > LIMITS.simpleRequestMaxChars) {
      return new VoxpipeError(ErrorCode.segmentTooLarge, `a simple-mode request holds at most ${LIMITS.simpleRequestMaxChars} characters`);
    }
    return undefined;
  }

  /** The one input. */
  handle(input: SimpleInput): void {
    if (TERMINAL.has(this.#phase)) return;
    this.#dispatch(input);
    if (!TERMINAL.has(this.#phase)) this.#watch();
  }

  #dispatch(input: SimpleInput): void {
    switch (input.type) {
      case 'open':
        if (this.#phase !== SimplePhase.idle) return;
        this.#phase = SimplePhase.connecting;
        this.#port.openTransport();
        return;
      case 'transport-opened':
        this.#onTransportOpened();
        return;
      case 'transport-failed':
        if (this.#phase === SimplePhase.connecting) this.#fail(input.error);
        return;
      case 'frame':
        if (CONNECTED.has(this.#phase)) this.#onFrame(input.event);
        return;
      case 'transport-closed':
        this.#onTransportClosed(input.code, input.reason, input.wasClean, input.error);
        return;
      case 'timer':
        this.#onTimer(input.id);
        return;
      case 'segment-queued':
        if (this.refusal(input) !== undefined) return; // the shell asks first; a refused part never enters
        this.#requestChars += countChars(input.text);
        this.#sent.push({ segmentId: input.segmentId, text: input.text });
        this.#pump();
        return;
      case 'stop-requested':
        this.#ending = true;
        if (this.#sent.length === 0) this.#finish(0, 'nothing to say');
        else this.#pump();
        return;
      case 'abort-requested':
        this.#end(SimplePhase.aborted, 'aborted');
        this.#error = input.reason;
        this.#port.emit({ type: 'failed', error: input.reason });
        return;
      case 'reader':
        this.#readerPaused = input.paused;
        return;
    }
  }

  // ---------------------------------------------------------------- connection

  #onTransportOpened(): void {
    if (this.#phase !== SimplePhase.connecting) return;
    this.#transportOpen = true;
    const start: StartEvent = { event: 'start', mode: Mode.simple, event_id: this.#nextEventId(), request: this.#opts.request };
    if (this.#opts.requestId !== undefined) start.request_id = this.#opts.requestId;
    this.#phase = SimplePhase.starting;
    this.#port.sendFrame(start);
  }

  #onTransportClosed(code: number, reason: string, wasClean: boolean, error: VoxpipeError | undefined): void {
    if (!CONNECTED.has(this.#phase)) return;
    this.#transportOpen = false;
    this.#fail(
      error ??
        new ConnectionError('connection_closed', `connection closed (${code}${reason ? `: ${reason}` : ''}) before the request finished`, {
          closeCode: code,
          // Simple mode does not retry itself; whether trying again may help is the close-code policy's word.
          retryable: closePolicy(code, wasClean).retryable,
          ...(this.#requestId && { requestId: this.#requestId }),
        }),
    );
  }

  /**
   * Once `ready` came, every part but the last goes out with
   * `commit: false`; after `stop-requested`, the last with `commit: true`.
   */
  #pump(): void {
    if (this.#phase !== SimplePhase.running) return;
    while (this.#inputs < this.#sent.length - 1) {
      this.#port.sendFrame({ event: 'input', event_id: this.#nextEventId(), text: this.#sent[this.#inputs++]!.text, commit: false });
    }
    if (this.#ending && this.#inputs === this.#sent.length - 1) {
      this.#port.sendFrame({ event: 'input', event_id: this.#nextEventId(), text: this.#sent[this.#inputs++]!.text, commit: true });
      this.#phase = SimplePhase.committed;
    }
  }

  // ---------------------------------------------------------------- deadlines

  /**
   * Keep the deadline of what the server owes: `ready` after `start`
   * (`startTimeoutMs`, whole), audio or `finish` after the commit
   * (`progressTimeoutMs`, in slices). None while the reader is paused; a
   * resumed reader starts the deadline afresh.
   */
  #watch(): void {
    const timers = this.#timers;
    if (this.#readerPaused || this.#phase !== SimplePhase.starting) timers.cancel(SimpleTimerId.start);
    timers.watch(!this.#readerPaused && this.#phase === SimplePhase.committed, this.#progressTimeoutMs);
    if (!this.#readerPaused && this.#phase === SimplePhase.starting && !timers.armed(SimpleTimerId.start)) timers.start(SimpleTimerId.start, this.#startTimeoutMs);
  }

  #onTimer(id: SimpleTimerId): void {
    if (!this.#timers.fired(id)) return; // cancelled or stale
    if (id === SimpleTimerId.start) {
      if (this.#phase === SimplePhase.starting) this.#fail(this.#timeout('ready', this.#startTimeoutMs));
      return;
    }
    if (this.#phase !== SimplePhase.committed || this.#readerPaused) return; // `handle()` re-arms or cancels
    if (this.#timers.sliceEnded()) this.#fail(this.#timeout('audio or finish', this.#progressTimeoutMs));
  }

  #timeout(what: string, ms: number): TimeoutError {
    return new TimeoutError(`no ${what} from the server within ${ms} ms`, { retryable: true, ...(this.#requestId && { requestId: this.#requestId }) });
  }

  // ---------------------------------------------------------------- frames

  #onFrame(event: ServerEvent): void {
    switch (event.event) {
      case 'ready':
        if (this.#phase !== SimplePhase.starting) return;
        this.#ready = event;
        this.#requestId = event.request_id || this.#requestId;
        this.#phase = SimplePhase.running;
        this.#port.emit({ type: 'ready', ready: event });
        this.#pump();
        return;
      case 'audio':
        if (!this.#ready) return;
        this.#timers.progress();
        this.#release(this.#order.push(event.segment_id, event.sequence, event));
        return;
      case 'usage':
      case 'segment_completed':
        // What the server says a segment carries, the last word kept (`segment_completed` after its `usage`).
        if (event.audio_bytes !== undefined) this.#stated.set(event.segment_id, event.audio_bytes);
        return;
      case 'warning':
        this.#port.emit({ type: 'warning', code: event.code, message: event.message });
        return;
      case 'error':
        this.#fail(new RealtimeServerError(event.code, event.message, event.terminal, { requestId: event.request_id, retryable: event.retryable, stage: event.stage }));
        return;
      case 'finish':
        this.#timers.progress();
        if (this.#order.held > 0 && this.#ready) this.#release(this.#order.drainAll());
        if (TERMINAL.has(this.#phase)) return; // a listener of that audio ended the request
        if (event.reason === FinishReason.completed) this.#finish(event.units, 'done');
        else this.#fail(new RealtimeServerError(event.reason, `the request finished with reason ${event.reason}`, true, { requestId: event.request_id }));
        return;
      default:
        return; // simple mode needs only ready, audio, error, finish (spec 6, rule 3), and reads the byte counts a deployment may add
    }
  }

  #release(verdict: SequenceVerdict<AudioEvent>): void {
    for (const frame of verdict.release) {
      // A listener of one released frame may have ended the request (abort): the rest are not handed over.
      if (TERMINAL.has(this.#phase)) return;
      this.#handOver(frame);
    }
  }

  /** Raw audio, tagged with the part that committed the request (the last queued), placed where the ledger has the request's one attempt up to. */
  #handOver(frame: AudioEvent): void {
    const part = this.#sent[this.#sent.length - 1];
    if (!part) {
      this.#port.emit({ type: 'warning', code: WarningCode.unexpectedAudio, message: `audio of segment ${frame.segment_id} before any text was sent: dropped` });
      return;
    }
    const offset = this.#withAudio.size === 0 ? 0 : this.#port.audioOf(part.segmentId).nextOffset;
    this.#withAudio.add(frame.segment_id);
    this.#port.emitAudio({ segmentId: part.segmentId, attempt: ATTEMPT, offset, data: frame.audio });
  }

  /** Audio bytes the server said the request carries: the sum over its segments, when it said them for every segment that had audio. */
  #statedBytes(): number | undefined {
    if (this.#stated.size === 0) return undefined;
    for (const id of this.#withAudio) if (!this.#stated.has(id)) return undefined;
    let total = 0;
    for (const n of this.#stated.values()) total += n;
    return total;
  }

  // ---------------------------------------------------------------- endings

  #finish(units: number, reason: string): void {
    this.#end(SimplePhase.done, reason);
    const last = this.#sent.length - 1;
    // The request's audio is the last part's, as the ledger counts it; the header by the one rule.
    const heard = last < 0 ? undefined : this.#port.audioOf(this.#sent[last]!.segmentId);
    const stated = this.#statedBytes();
    const expected = stated === undefined || !heard ? {} : { expectedBytes: expectedAudioBytes(stated, heard.headerBytes) };
    const audioBytes = heard?.emittedBytes ?? 0;
    const segments = this.#sent.map((s, i): MachineSegmentResult => (i === last ? { segmentId: s.segmentId, units, audioBytes, ...expected } : { segmentId: s.segmentId, units: 0, audioBytes: 0 }));
    this.#summary = { requestId: this.#requestId, units, audioBytes, segments };
    for (const result of segments) this.#port.emit({ type: 'segment-completed', result });
    this.#port.emit({ type: 'finished', summary: this.#summary });
  }

  #fail(error: VoxpipeError): void {
    this.#end(SimplePhase.failed, 'failed');
    this.#error = error;
    this.#port.emit({ type: 'failed', error });
  }

  /** Into a terminal phase: no timer left, the transport closed. */
  #end(phase: SimplePhase, reason: string): void {
    this.#timers.cancelAll();
    this.#phase = phase;
    if (this.#transportOpen) {
      this.#transportOpen = false;
      this.#port.closeTransport(CloseCode.normal, reason);
    }
  }

  // ---------------------------------------------------------------- port helpers

  #nextEventId(): string {
    return `${this.#eventIdPrefix}-${++this.#eventCounter}`;
  }
}
