/**
 * The reliable-mode state machine, sans-IO (README, Layout).
 *
 * One input, `handle(event)`; every effect goes through the injected
 * `MachinePort`. It never reads a clock, opens a socket or starts a real
 * timer, so each transition is a plain unit test and the same class runs in
 * a browser. `ReliableSession` wires it to `ws`, timers and `fetch`.
 *
 * What it guarantees (this file keeps reliable mode's own rules; what both
 * modes share is written once beside it):
 * - Pacing (spec 6, rule 4): one `text` frame in flight until its
 *   `input_ack`; one `flush` in flight until its `segment_completed`. The
 *   text of the next segment may go out while the previous one generates.
 * - Resume (spec 3.5, 7.7): on `error` with `retryable: true`, close 1012 or
 *   1013, or a dropped transport after `start`, it backs off (exponential,
 *   jitter), reads the request-status route and then reopens with
 *   `retry_failed` (failed_retryable), starts again with the same
 *   `request_id` (unknown request), recovers audio from the manifest
 *   (completed), polls (running) or fails (failed_terminal): the base class,
 *   `ReliableRecovery` (recovery.ts), runs those steps and their bounds.
 * - Completed segments are never sent again. Audio leaves raw, tagged with
 *   its segment, its attempt (a connection, or a stored file of the
 *   manifest) and where the ledger has that attempt up to: the machine
 *   counts no audio and splices nothing. The listener's ledger (`splice.ts`,
 *   `AudioLedger`) strips the stream header and decides continue or restart
 *   (no byte reaches the listener twice, except under `restart`, announced
 *   by `discontinuity`); the machine asks it (`port.audioOf`) where an
 *   attempt stands and, by the one rule (`shortOf`), whether a segment is
 *   short. The listener's output sequence is not the machine's to number.
 * - Non-retryable errors fail at once, with no retry.
 * - Audio leaves in `sequence` order (spec 6, rule 2): `AudioOrder`
 *   (sequence-window.ts, shared with simple mode) reorders within
 *   `reorderWindowFrames`, drops repeats and reports gaps, one per connection.
 * - Every wait on the server has a deadline (`Deadlines`, deadlines.ts):
 *   `startTimeoutMs` for `ready`, `progressTimeoutMs` for whatever else is
 *   owed and `finishTimeoutMs` for `finish` after `stop` (not while the
 *   reader is paused; only frames that move what is owed count, never
 *   `pong`), `statusTimeoutMs` for a status read; one recovery is bounded by
 *   `maxRetries` attempts and `maxResumeMs`, after which it fails with
 *   `retries_exhausted`.
 * - A frame it needs but cannot use (an `input_ack` for a sequence never
 *   sent, a `segment_completed` for a segment not flushed) ends the attempt
 *   at once, as a quiet server does (a stall): status read, then resume, at
 *   most `maxStallResumes` times until a segment completes on the wire.
 */
import { AudioIncompleteError, ConnectionError, ProtocolError, RealtimeServerError, ResumeError, TimeoutError, type VoxpipeError } from '../../errors.js';
import { CloseAction, closePolicy, CloseCode, FinishReason, Mode } from '../../protocol/constants.js';
import { WarningCode } from '../../protocol/codes.js';
import type { AudioEvent, ClientEvent, ErrorEvent, FinishEvent, ReadyEvent, SegmentCompletedEvent, ServerEvent, StartEvent, StartRequest } from '../../protocol/events.js';
import { Journal, type JournalEntry } from './journal.js';
import { ReliableRecovery } from './recovery.js';
import {
  CONNECTED_PHASES as CONNECTED,
  PartialSegmentPolicy,
  Phase,
  ResumeErrorCode,
  SegmentState,
  TimerId,
  WaterfallStage,
  type MachineInput,
  type MachineOptions,
  type MachinePort,
  type MachineSummary,
} from './types.js';
import { defaultPartialPolicy, expectedAudioBytes, shortOf } from '../../splice.js';
import { AudioOrder, DEFAULT_REORDER_WINDOW_FRAMES, type SequenceVerdict } from '../sequence-window.js';
import { checkBudgets, RECOVERY_DEFAULTS } from '../budgets.js';
import { Deadlines } from '../deadlines.js';

export { Phase };

const TIMERS: readonly TimerId[] = [TimerId.backoff, TimerId.start, TimerId.statusPoll, TimerId.progress, TimerId.status, TimerId.resumeDeadline];

const TERMINAL: ReadonlySet<Phase> = new Set([Phase.done, Phase.failed, Phase.aborted]);

export { ResumeErrorCode } from './types.js';

/** `warning` codes the machine raises itself: the client's one list (protocol/codes.ts). */
export { WarningCode as MachineWarning };

export { defaultPartialPolicy };

/** State of the current connection; a new one for every `transport-opened`. */
interface ConnectionState {
  /** `start` carries `retry_failed: true`. */
  retryFailed: boolean;
  /** Last `text.sequence` sent (the protocol counts from 1 per connection). */
  sequence: number;
  /** A `text` frame waits for its `input_ack`. */
  awaitingAck: boolean;
  /** The segment whose `flush` waits for `segment_completed`. */
  flushOutstanding: string | undefined;
  /** The attempt tag of this connection's audio. */
  attempt: number;
  /** Puts this connection's `audio` frames back in `sequence` order, and says what it dropped or skipped. */
  audio: AudioOrder<AudioEvent>;
  // What each segment had on this connection (its stated size, a skip) is its journal entry's, reset per connection.
}

export class ReliableMachine extends ReliableRecovery {
  readonly #port: MachinePort;
  readonly #request: StartRequest;
  readonly #journal: Journal;
  readonly #timers: Deadlines<TimerId>;
  readonly #startTimeoutMs: number;
  readonly #progressTimeoutMs: number;
  readonly #finishTimeoutMs: number;
  readonly #reorderWindowFrames: number;
  readonly #eventIdPrefix: string;
  readonly #policyOption: PartialSegmentPolicy | undefined;

  #phase: Phase = Phase.idle;
  #conn: ConnectionState | undefined;
  #transportOpen = false;
  #eventCounter = 0;
  /** The last attempt tag given (a connection, or a stored file of the manifest). */
  #attempts = 0;
  #ready: ReadyEvent | undefined;
  #policy: PartialSegmentPolicy = PartialSegmentPolicy.continue;
  /** `start` was sent at least once: the service may know the request. */
  #startSent = false;
  /** The user will queue nothing more. */
  #ending = false;
  /** The listener does not read audio now (backpressure): no progress deadline. */
  #readerPaused = false;
  #error: VoxpipeError | undefined;

  constructor(options: MachineOptions, port: MachinePort) {
    checkBudgets(options);
    const timers = new Deadlines(port, TIMERS, TimerId.progress, options.overload);
    const journal = new Journal();
    super(options, port, timers, journal);
    this.#timers = timers;
    this.#journal = journal;
    this.#request = options.request;
    this.#port = port;
    this.#policyOption = options.onPartialSegment;
    this.#startTimeoutMs = options.startTimeoutMs ?? RECOVERY_DEFAULTS.startTimeoutMs;
    this.#progressTimeoutMs = options.progressTimeoutMs ?? RECOVERY_DEFAULTS.progressTimeoutMs;
    this.#finishTimeoutMs = options.finishTimeoutMs ?? RECOVERY_DEFAULTS.finishTimeoutMs;
    this.#reorderWindowFrames = options.reorderWindowFrames ?? DEFAULT_REORDER_WINDOW_FRAMES;
    // Keep ids within the 128-character limit whatever the prefix.
    this.#eventIdPrefix = (options.eventIdPrefix ?? 'ev').slice(0, 100);
  }

  get phase(): Phase {
    return this.#phase;
  }

  // ---------------------------------------------------------------- the steps a recovery takes (ReliableRecovery)

  protected get ending(): boolean {
    return this.#ending;
  }

  protected enter(phase: Phase): void {
    this.#phase = phase;
  }

  protected closeTransport(reason: string): void {
    if (!this.#transportOpen) return;
    this.#transportOpen = false;
    this.#port.closeTransport(CloseCode.normal, reason);
  }

  protected handOverStored(entry: JournalEntry, data: Uint8Array): void {
    this.#handOver(entry, ++this.#attempts, data);
  }

  /** Audio of the segment came on some connection, released or still held (`SegmentTransport.audioArrived`). */
  audioArrived(segmentId: string): boolean {
    return this.#journal.get(segmentId)?.audioArrived ?? false;
  }

  /** The failure that ended the machine, if any. */
  get error(): VoxpipeError | undefined {
    return this.#error;
  }

  get ready(): ReadyEvent | undefined {
    return this.#ready;
  }

  /** The `onPartialSegment` policy in force (known for certain once `ready` arrived). */
  get partialPolicy(): PartialSegmentPolicy {
    return this.#policy;
  }

  /** Whether a segment id is already in the journal. */
  has(segmentId: string): boolean {
    return this.#journal.has(segmentId);
  }

  /** Segments not completed, in order. */
  pending(): { segmentId: string; text: string }[] {
    return this.#journal.pending().map((e) => ({ segmentId: e.segmentId, text: e.text }));
  }

  /** The journal, read-only, for tests and diagnostics. */
  journal(): readonly Readonly<JournalEntry>[] {
    return this.#journal.all();
  }

  summary(): MachineSummary {
    const completed = this.#journal.all().filter((e) => e.completed);
    return {
      requestId: this.requestId,
      units: completed.reduce((n, e) => n + e.units, 0),
      ...this.recoveryCounts(),
      segments: completed.map((e) => ({ segmentId: e.segmentId, units: e.units, audioBytes: this.#port.audioOf(e.segmentId).emittedBytes })),
    };
  }

  /** The one input. */
  handle(input: MachineInput): void {
    if (TERMINAL.has(this.#phase)) return;
    this.#dispatch(input);
    // The progress deadline: armed while the server owes a frame and the reader reads.
    if (!TERMINAL.has(this.#phase)) this.#timers.watch(!this.#readerPaused && this.#owed(), this.#owedBudget());
  }

  #dispatch(input: MachineInput): void {
    switch (input.type) {
      case 'open':
        if (this.#phase === Phase.idle) this.connect(false);
        return;
      case 'transport-opened':
        this.#onTransportOpened();
        return;
      case 'transport-failed':
        this.#onTransportFailed(input.error);
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
        this.#onSegmentQueued(input.segmentId, input.text);
        return;
      case 'stop-requested':
        this.#ending = true;
        if (this.#phase === Phase.running) this.#pump();
        else if (this.#phase === Phase.completedRemotely) this.finish();
        return;
      case 'abort-requested':
        this.#onAbort(input.reason);
        return;
      case 'status-fetched':
        if (this.#phase === Phase.fetchingStatus) this.statusFetched(input.result);
        return;
      case 'audio-fetched':
        if (this.#phase === Phase.recovering) this.audioFetched(input.segmentId, input.result);
        return;
      case 'reader':
        this.#readerPaused = input.paused;
        return;
    }
  }

  /** Whether the machine waits on the server for something other than `ready`. */
  #owed(): boolean {
    const conn = this.#conn;
    if (this.#phase === Phase.stopping) return true;
    if (this.#phase !== Phase.running || !conn) return false;
    return conn.awaitingAck || conn.flushOutstanding !== undefined || conn.audio.held > 0;
  }

  /** The budget of what is owed now: `finishTimeoutMs` after `stop`, else `progressTimeoutMs`. */
  #owedBudget(): number {
    return this.#phase === Phase.stopping ? this.#finishTimeoutMs : this.#progressTimeoutMs;
  }

  #onTimer(id: TimerId): void {
    if (!this.#timers.fired(id)) return; // cancelled or stale
    if (id === TimerId.progress) {
      if (!this.#owed() || this.#readerPaused) return; // `handle()` cancels or re-arms
      if (this.#timers.sliceEnded()) {
        this.stall(new TimeoutError(`no progress from the server within ${this.#owedBudget()} ms while waiting for ${this.#awaited()}`, { retryable: true, requestId: this.requestId }));
      }
      return;
    }
    if (id === TimerId.start) {
      if (this.#phase === Phase.starting) {
        this.retry(new TimeoutError(`no ready within ${this.#startTimeoutMs} ms of start`, { retryable: true, requestId: this.requestId }));
      }
      return;
    }
    this.recoveryTimer(id);
  }

  /** What the machine waits for now, for the stall's message. */
  #awaited(): string {
    const conn = this.#conn;
    if (this.#phase === Phase.stopping) return 'finish after stop';
    if (conn?.awaitingAck) return `input_ack for text sequence ${conn.sequence}`;
    if (conn?.flushOutstanding !== undefined) return `audio and segment_completed of segment ${conn.flushOutstanding}`;
    return 'audio held behind a missing sequence';
  }

  // ---------------------------------------------------------------- connection

  protected connect(retryFailed: boolean): void {
    this.#phase = Phase.connecting;
    // A deployment may count audio across the whole request: a new connection is expected to go on from the last one.
    const last = this.#conn?.audio.highest;
    const audio = new AudioOrder<AudioEvent>(this.#reorderWindowFrames, last === undefined ? 1 : last + 1, this.#port);
    this.#conn = { retryFailed, sequence: 0, awaitingAck: false, flushOutstanding: undefined, attempt: ++this.#attempts, audio };
    this.#journal.resetConnection();
    this.#port.openTransport();
  }

  #onTransportOpened(): void {
    if (this.#phase !== Phase.connecting || !this.#conn) return;
    this.#transportOpen = true;
    this.#journal.resetConnection();
    const start: StartEvent = {
      event: 'start',
      mode: Mode.reliable,
      event_id: this.#nextEventId(),
      request_id: this.requestId,
      request: this.#request,
    };
    if (this.#conn.retryFailed) start.retry_failed = true;
    this.#send(start);
    this.#startSent = true;
    this.#phase = Phase.starting;
    this.#timers.start(TimerId.start, this.#startTimeoutMs);
  }

  #onTransportFailed(error: VoxpipeError): void {
    if (this.#phase !== Phase.connecting) return;
    // Before any `start` the request cannot exist: a first connection that
    // fails is the caller's to handle (wrong URL, key, network), not a resume.
    if (error.retryable && this.#startSent) this.retry(error);
    else this.fail(error);
  }

  #onTransportClosed(code: number, reason: string, wasClean: boolean, error: VoxpipeError | undefined): void {
    if (!CONNECTED.has(this.#phase)) return;
    this.#transportOpen = false;
    // What a close means and whether it is retried: the one close-code policy (protocol/close-codes.ts).
    const policy = closePolicy(code, wasClean);
    const retryable = error ? error.retryable : policy.retryable;
    const failure =
      error ??
      new ConnectionError('connection_closed', `connection closed (${code}${reason ? `: ${reason}` : ''}) before the request finished`, {
        closeCode: code,
        retryable,
        requestId: this.requestId,
      });
    // A close the policy answers with `ask-status` (1011, 1001) after
    // `ready` is not retried blindly: the status route decides. Its
    // `failed_retryable` is the service's own word that the request may go
    // on, and resuming keeps the segments already charged from being
    // generated (and charged) again by a failover.
    // After `stop` every segment is complete: a close instead of `finish` leaves only the request's end unknown, which the status route settles.
    const askStatus = !retryable && !error && this.#ready !== undefined && (policy.action === CloseAction.askStatus || this.#phase === Phase.stopping);
    if (retryable || askStatus) this.retry(failure);
    else this.fail(failure);
  }

  // ---------------------------------------------------------------- frames

  #onFrame(event: ServerEvent): void {
    switch (event.event) {
      case 'ready':
        this.#onReady(event);
        return;
      case 'request_status':
        if (this.#phase !== Phase.starting) return;
        this.#timers.cancel(TimerId.start);
        this.requestStatus(event.state, this.#conn?.retryFailed ?? false);
        return;
      case 'input_ack':
        this.#onInputAck(event.sequence);
        return;
      case 'segment_accepted': {
        const entry = this.#journal.get(event.segment_id);
        if (!entry || entry.completed) return;
        this.#timers.progress();
        entry.state = SegmentState.accepted;
        this.#mark(entry, WaterfallStage.accepted);
        if (!entry.acceptReported) {
          entry.acceptReported = true;
          this.#port.emit({ type: 'segment-accepted', segmentId: entry.segmentId });
        }
        return;
      }
      case 'audio':
        this.#onAudio(event);
        return;
      case 'usage': {
        const entry = this.#journal.get(event.segment_id);
        if (!entry || entry.completed) return;
        this.#timers.progress();
        if (event.audio_bytes !== undefined) entry.stated = event.audio_bytes;
        this.#port.emit({
          type: 'usage',
          segmentId: event.segment_id,
          segmentUnits: event.segment_units,
          sessionUnits: event.session_units,
          quotaRemaining: event.quota_remaining,
          ...(event.audio_bytes !== undefined && { audioBytes: event.audio_bytes }),
        });
        return;
      }
      case 'segment_completed':
        // One that names no segment (the reader found no id) completes the one whose flush is out.
        this.#onSegmentCompleted(event.segment_id === '' && this.#conn?.flushOutstanding !== undefined ? { ...event, segment_id: this.#conn.flushOutstanding } : event);
        return;
      case 'warning':
        this.#port.emit({ type: 'warning', code: event.code, message: event.message });
        return;
      case 'error':
        this.#onErrorEvent(event);
        return;
      case 'finish':
        this.#onFinish(event);
        return;
      case 'authenticated':
      case 'pong':
        return;
    }
  }

  #onReady(ready: ReadyEvent): void {
    if (this.#phase !== Phase.starting) return;
    this.#timers.cancel(TimerId.start);
    if (this.#ready && this.#ready.format !== ready.format) {
      this.fail(new ResumeError(ResumeErrorCode.resumeMismatch, `resumed request speaks ${ready.format}, not ${this.#ready.format}`, { requestId: this.requestId }));
      return;
    }
    const first = this.#ready === undefined;
    this.#ready = ready;
    if (first) this.#policy = this.#policyOption ?? defaultPartialPolicy(ready.format);
    this.#phase = Phase.running;
    const resumedAttempt = this.readyAgain();
    if (first) this.#port.emit({ type: 'ready', ready });
    if (resumedAttempt !== undefined) {
      this.#port.emit({ type: 'resumed', attempt: resumedAttempt, requestId: this.requestId, pendingSegments: this.#journal.pending().map((e) => e.segmentId) });
    }
    this.#pump();
  }

  /** `hint`: the sequence the ack names, when the reader found one; acks come in order, so without it the ack is the awaited text frame's. */
  #onInputAck(hint: number | undefined): void {
    const conn = this.#conn;
    if (!conn) return;
    const sequence = hint ?? (conn.awaitingAck ? conn.sequence : undefined);
    if (sequence === undefined) return; // nothing awaits an ack: a repeat
    if (!(sequence >= 1 && sequence <= conn.sequence)) {
      // It cannot be meant for any text of ours: waiting on would wait for a deadline.
      const sent = conn.sequence === 0 ? 'no text was sent' : `text sequences 1 to ${conn.sequence} were sent`;
      this.stall(new ProtocolError('invalid_server_frame', `input_ack for sequence ${sequence}, but on this connection ${sent}`, 'sequence', { retryable: true, requestId: this.requestId }));
      return;
    }
    // A repeat of an earlier ack moves nothing.
    if (!conn.awaitingAck || sequence !== conn.sequence) return;
    this.#timers.progress();
    conn.awaitingAck = false;
    const entry = this.#journal.firstUnflushed();
    if (entry && entry.framesSent === entry.frameCount) this.#mark(entry, WaterfallStage.inputAck);
    this.#pump();
  }

  #onSegmentCompleted(event: SegmentCompletedEvent): void {
    const conn = this.#conn;
    const entry = this.#journal.get(event.segment_id);
    if (entry?.completed) return; // a repeat
    if (!conn || conn.flushOutstanding !== event.segment_id) {
      // Not the segment whose flush is out: it cannot complete what the machine waits for.
      const what = entry ? `segment ${event.segment_id}, which was not flushed on this connection` : `segment ${JSON.stringify(event.segment_id)}, which this request never queued`;
      const awaited = conn?.flushOutstanding === undefined ? 'no flush is out' : `the flush out is for ${conn.flushOutstanding}`;
      this.stall(new ProtocolError('invalid_server_frame', `segment_completed for ${what} (${awaited})`, 'segment_id', { retryable: true, requestId: this.requestId }));
      return;
    }
    // The bytes the server says the segment carries: `segment_completed`'s, else its `usage`'s.
    const stated = event.audio_bytes ?? entry?.stated;
    if (entry && stated !== undefined && this.#short(conn, entry, stated)) return;
    this.#drainAudio(event.segment_id);
    // Its window is done with: frames of a completed segment are dropped before ordering (`#onAudio`).
    conn.audio.discardSegment(event.segment_id);
    conn.flushOutstanding = undefined;
    this.completedOnWire();
    if (entry) this.complete(entry, event.units, stated);
    this.#pump();
  }

  /**
   * Every byte accounted for: a completed segment's audio against the bytes
   * the server says it carries, judged by the one rule (`shortOf`, the
   * header by `expectedAudioBytes`), with what this connection brought of it
   * (what the ledger took of this attempt, and frames still held). Short
   * while nothing past the hole reached the listener: a new attempt at the
   * segment (resume; a completed segment's stored audio comes from the
   * manifest), the held frames dropped. Short otherwise (audio past a hole
   * already emitted, or a completion that brings no audio): `audio_incomplete`.
   */
  #short(conn: ConnectionState, entry: JournalEntry, stated: number): boolean {
    const heard = this.#port.audioOf(entry.segmentId);
    let onConnection = entry.attempt === conn.attempt ? heard.nextOffset : 0;
    for (const frame of conn.audio.heldOf(entry.segmentId)) onConnection += frame.audio.byteLength;
    const expected = expectedAudioBytes(stated, heard.headerBytes);
    const have = shortOf(heard, expected, onConnection - heard.headerBytes);
    if (have === undefined) return false;
    if (onConnection > 0 && !entry.skippedPast) {
      conn.audio.discardSegment(entry.segmentId);
      this.retry(new AudioIncompleteError(entry.segmentId, expected, have, { requestId: this.requestId, retryable: true, why: 'asking for it again' }));
    } else {
      this.fail(new AudioIncompleteError(entry.segmentId, expected, have, { requestId: this.requestId, why: onConnection > 0 ? 'audio after the hole was already emitted' : 'the service completed it without sending the rest' }));
    }
    return true;
  }

  #onErrorEvent(event: ErrorEvent): void {
    const error = new RealtimeServerError(event.code, event.message, event.terminal, {
      requestId: event.request_id ?? this.requestId,
      retryable: event.retryable,
      stage: event.stage,
      details: {
        ...(event.path !== undefined && { path: event.path }),
        // An error without a usable code reads as `server_error`; what the server sent is kept.
        ...('raw_code' in event && { rawCode: event['raw_code'] }),
      },
    });
    // A non-terminal, non-retryable error is about a frame of ours: with a
    // client that keeps the protocol it means a bug or a bad segment, and
    // continuing would drop that segment silently. Fail loudly instead.
    if (event.retryable) this.retry(error);
    else this.fail(error);
  }

  #onFinish(event: FinishEvent): void {
    if (event.reason === FinishReason.completed) {
      this.#drainAudio();
      if (this.#phase === Phase.stopping || this.#journal.allCompleted) this.finish();
      else this.fail(new RealtimeServerError('invalid_state', 'the request finished before all segments completed', true, { requestId: this.requestId }));
      return;
    }
    // server_draining: the close (1012) that follows drives the resume.
    if (event.reason === FinishReason.serverDraining) return;
    // error, timeout: the status route decides whether the request can go on.
    this.retry(new ConnectionError('request_interrupted', `request finished with reason ${event.reason}`, { retryable: true, requestId: this.requestId }));
  }

  // ---------------------------------------------------------------- audio

  #onAudio(event: AudioEvent): void {
    const conn = this.#conn;
    if (!conn) return;
    const entry = this.#journal.get(event.segment_id);
    if (!entry || entry.completed) {
      // Not a segment that waits for audio: no window is kept for it (nor made: ids the server invents would grow the order's map).
      if (entry) entry.audioArrived = true;
      this.#dropped(event);
      return;
    }
    entry.audioArrived = true;
    this.#timers.progress();
    this.#release(conn, conn.audio.push(event.segment_id, event.sequence, event));
  }

  /** Release the frames held behind a missing sequence: of one segment when it completed, else of all. */
  #drainAudio(segmentId?: string): void {
    const conn = this.#conn;
    if (!conn || conn.audio.held === 0) return;
    this.#release(conn, segmentId === undefined ? conn.audio.drainAll() : conn.audio.drainSegment(segmentId));
  }

  #release(conn: ConnectionState, verdict: SequenceVerdict<AudioEvent>): void {
    // Audio released past skipped sequences: a hole before it cannot be filled in by a new attempt.
    if (verdict.gaps.length > 0) {
      for (const frame of verdict.release) {
        const entry = this.#journal.get(frame.segment_id);
        if (entry) entry.skippedPast = true;
      }
    }
    for (const frame of verdict.release) {
      // A listener of one released frame may end the request (abort, barge-in): the rest are not emitted.
      if (TERMINAL.has(this.#phase) || this.#conn !== conn) return;
      const entry = this.#journal.get(frame.segment_id);
      if (!entry || entry.completed) this.#dropped(frame);
      else this.#handOver(entry, conn.attempt, frame.audio);
    }
  }

  #dropped(event: AudioEvent): void {
    this.#port.emit({ type: 'warning', code: WarningCode.unexpectedAudio, message: `dropped audio of segment ${event.segment_id}` });
  }

  /**
   * Raw bytes of an attempt at a segment, to the listener's ledger (the one
   * splice and header path), placed where the ledger has that attempt up to:
   * it counts the attempt that brought the segment's audio last, so a new
   * attempt starts at its first byte.
   */
  #handOver(entry: JournalEntry, attempt: number, data: Uint8Array): void {
    if (data.byteLength === 0) return;
    const heard = this.#port.audioOf(entry.segmentId);
    const before = heard.emittedBytes;
    const offset = entry.attempt === attempt ? heard.nextOffset : 0;
    entry.attempt = attempt;
    this.#port.emitAudio({ segmentId: entry.segmentId, attempt, offset, data });
    // Progress is audio the listener did not have: a resume that only repeats what it heard resets no budget.
    if (this.#port.audioOf(entry.segmentId).emittedBytes === before) return;
    this.progressMade();
    this.#mark(entry, WaterfallStage.firstAudio);
  }

  // ---------------------------------------------------------------- pacing

  /** Send whatever the pacing rules allow now. */
  #pump(): void {
    const conn = this.#conn;
    if (this.#phase !== Phase.running || !conn) return;
    for (;;) {
      if (conn.awaitingAck) return;
      const entry = this.#journal.firstUnflushed();
      if (!entry) break;
      if (entry.framesSent < entry.frameCount) {
        const text = entry.frameAt(entry.framesSent);
        entry.framesSent++;
        entry.state = SegmentState.sending;
        conn.sequence++;
        conn.awaitingAck = true;
        this.#send({ event: 'text', event_id: this.#nextEventId(), sequence: conn.sequence, text });
        this.#mark(entry, WaterfallStage.sent);
        return;
      }
      if (conn.flushOutstanding !== undefined) return;
      this.#send({ event: 'flush', event_id: this.#nextEventId(), segment_id: entry.segmentId });
      entry.state = SegmentState.flushed;
      entry.everFlushed = true;
      conn.flushOutstanding = entry.segmentId;
    }
    if (this.#ending && conn.flushOutstanding === undefined && this.#journal.allCompleted) {
      this.#send({ event: 'stop', event_id: this.#nextEventId() });
      this.#phase = Phase.stopping;
    }
  }

  #onSegmentQueued(segmentId: string, text: string): void {
    if (this.#phase === Phase.completedRemotely) {
      this.#journal.add(segmentId, text);
      this.fail(new ResumeError(ResumeErrorCode.requestCompleted, `request ${this.requestId} completed before segment ${segmentId} was sent`, { requestId: this.requestId }));
      return;
    }
    this.#journal.add(segmentId, text);
    this.#pump();
  }

  protected complete(entry: JournalEntry, units: number, stated?: number): void {
    this.progressMade();
    entry.state = SegmentState.completed;
    entry.units = units;
    this.#mark(entry, WaterfallStage.completed);
    const heard = this.#port.audioOf(entry.segmentId);
    const expected = stated === undefined ? {} : { expectedBytes: expectedAudioBytes(stated, heard.headerBytes) };
    this.#port.emit({ type: 'segment-completed', result: { segmentId: entry.segmentId, units, audioBytes: heard.emittedBytes, ...expected } });
  }

  // ---------------------------------------------------------------- endings

  #onAbort(reason: VoxpipeError): void {
    this.#timers.cancelAll();
    // Tell the service the request ends here before leaving.
    if (this.#transportOpen && this.#phase === Phase.running) this.#send({ event: 'stop', event_id: this.#nextEventId() });
    this.closeTransport('aborted');
    this.#phase = Phase.aborted;
    this.#error = reason;
    this.#port.emit({ type: 'failed', error: reason });
  }

  protected finish(): void {
    this.#timers.cancelAll();
    this.closeTransport('done');
    this.#phase = Phase.done;
    this.#port.emit({ type: 'finished', summary: this.summary() });
  }

  protected fail(error: VoxpipeError): void {
    this.#timers.cancelAll();
    this.closeTransport('failed');
    this.#phase = Phase.failed;
    this.#error = error;
    this.#port.emit({ type: 'failed', error });
  }

  // ---------------------------------------------------------------- port helpers

  #send(event: ClientEvent): void {
    this.#port.sendFrame(event);
  }

  #nextEventId(): string {
    return `${this.#eventIdPrefix}-${++this.#eventCounter}`;
  }

  #mark(entry: JournalEntry, stage: WaterfallStage): void {
    // Each stage once per segment, except completion (which happens once anyway).
    if (!entry.mark(stage)) return;
    this.#port.emit({ type: 'mark', segmentId: entry.segmentId, stage });
  }
}
