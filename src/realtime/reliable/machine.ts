/**
 * The reliable-mode state machine, sans-IO (README, Layout).
 *
 * One input, `handle(event)`; every effect goes through the injected
 * `MachinePort`. It never reads a clock, opens a socket or starts a real
 * timer, so each transition is a plain unit test and the same class runs in
 * a browser. `ReliableSession` wires it to `ws`, timers and `fetch`.
 *
 * What it guarantees:
 * - Pacing (spec 6, rule 4): one `text` frame in flight until its
 *   `input_ack`; one `flush` in flight until its `segment_completed`. The
 *   text of the next segment may go out while the previous one generates.
 * - Resume (spec 3.5, 7.7): on `error` with `retryable: true`, close 1012 or
 *   1013, or a dropped transport after `start`, it backs off (exponential,
 *   jitter), reads the request-status route and then reopens with
 *   `retry_failed` (failed_retryable), starts again with the same
 *   `request_id` (unknown request), recovers audio from the manifest
 *   (completed), polls (running) or fails (failed_terminal).
 * - Completed segments are never sent again. Audio leaves raw, tagged with
 *   its segment, its attempt (a connection, or a stored file of the
 *   manifest) and its offset in that attempt: the machine keeps no byte
 *   counters and splices nothing. The listener's ledger (`splice.ts`,
 *   `AudioLedger`) strips the stream header and decides continue or restart
 *   (no byte reaches the listener twice, except under `restart`, announced
 *   by `discontinuity`); the machine reads what it has (`port.audioOf`) to
 *   tell a short segment.
 * - Non-retryable errors fail at once, with no retry.
 * - Audio leaves in `sequence` order (spec 6, rule 2): frames are reordered
 *   within `reorderWindowFrames`, repeats dropped, gaps reported as an
 *   `audio_sequence_gap` warning.
 * - Every wait on the server has a deadline: `startTimeoutMs` for `ready`,
 *   `progressTimeoutMs` for whatever else is owed and `finishTimeoutMs` for
 *   `finish` after `stop` (not while the reader is paused; only frames that
 *   move what is owed count, never `pong`), `statusTimeoutMs` for a status
 *   read; one recovery is bounded by `maxRetries` attempts and
 *   `maxResumeMs`, after which it fails with `retries_exhausted`.
 * - A frame it needs but cannot use (an `input_ack` for a sequence never
 *   sent, a `segment_completed` for a segment not flushed) ends the attempt
 *   at once, as a quiet server does (a stall): status read, then resume, at
 *   most `maxStallResumes` times until a segment completes on the wire.
 */
import { AudioIncompleteError, ConnectionError, ProtocolError, RealtimeServerError, ResumeError, TimeoutError, type VoxpipeError } from '../../errors.js';
import { CloseAction, closePolicy, CloseCode, FinishReason, Mode, RequestState } from '../../protocol/constants.js';
import { WarningCode } from '../../protocol/codes.js';
import type {
  AudioEvent,
  ClientEvent,
  ErrorEvent,
  FinishEvent,
  ReadyEvent,
  SegmentCompletedEvent,
  ServerEvent,
  StartEvent,
  StartRequest,
} from '../../protocol/events.js';
import { backoffDelayMs, resolveBackoff, type BackoffPolicy } from '../../backoff.js';
import { Journal, type JournalEntry } from './journal.js';
import { decideRecovery } from './recovery.js';
import {
  PartialSegmentPolicy,
  ResumeErrorCode,
  SegmentState,
  TimerId,
  WaterfallStage,
  type MachineInput,
  type MachineOptions,
  type MachinePort,
  type MachineSummary,
  type SegmentAudioResult,
  type StatusResult,
} from './types.js';
import { defaultPartialPolicy } from '../../splice.js';
import { AudioOrder, DEFAULT_REORDER_WINDOW_FRAMES, describeGaps, type SequenceGap, type SequenceVerdict } from '../sequence-window.js';
import { checkBudgets, PROGRESS_SLICES, RECOVERY_DEFAULTS, type OverloadWatch } from '../budgets.js';

/** Where the machine is. */
export const Phase = {
  idle: 'idle',
  /** `openTransport()` asked, waiting for `transport-opened`. */
  connecting: 'connecting',
  /** `start` sent, waiting for `ready`. */
  starting: 'starting',
  /** `ready` received: segments flow. */
  running: 'running',
  /** `stop` sent, waiting for `finish`. */
  stopping: 'stopping',
  /** A backoff or status-poll timer runs. */
  waiting: 'waiting',
  /** Reading the request-status route. */
  fetchingStatus: 'fetching-status',
  /** Downloading missing audio from the manifest. */
  recovering: 'recovering',
  /** The service completed the request (recovered from the manifest); waiting for the user's stop. */
  completedRemotely: 'completed-remotely',
  done: 'done',
  failed: 'failed',
  aborted: 'aborted',
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** One bit per timer: the timers running are a number, not a Set (memory per stream, issue 29). */
const TIMER_BIT: Record<TimerId, number> = {
  [TimerId.backoff]: 1,
  [TimerId.start]: 2,
  [TimerId.statusPoll]: 4,
  [TimerId.progress]: 8,
  [TimerId.status]: 16,
  [TimerId.resumeDeadline]: 32,
};
const TIMER_IDS = Object.keys(TIMER_BIT) as TimerId[];

const TERMINAL: ReadonlySet<Phase> = new Set([Phase.done, Phase.failed, Phase.aborted]);
const CONNECTED: ReadonlySet<Phase> = new Set([Phase.starting, Phase.running, Phase.stopping]);

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
  /** Puts this connection's `audio` frames back in `sequence` order. */
  order: AudioOrder<AudioEvent>;
  /** An `audio_sequence_gap` warning was given on this connection. */
  gapReported: boolean;
  // What each segment had on this connection (its offset, its stated size, a skip) is its journal entry's, reset per connection.
}

interface ManifestItem {
  entry: JournalEntry;
  /** Where its audio is; `undefined`: complete it with what was emitted. */
  url: string | undefined;
  units: number;
  /** Audio bytes the manifest says the segment carries, when it says. */
  audioBytes: number | undefined;
}

/** What to do once the manifest's audio is recovered. */
type AfterRecovery = 'reopen' | 'finish';

export class ReliableMachine {
  readonly requestId: string;
  readonly #port: MachinePort;
  readonly #request: StartRequest;
  readonly #journal = new Journal();
  readonly #backoff: BackoffPolicy;
  readonly #maxRetries: number;
  readonly #maxStatusPolls: number;
  readonly #startTimeoutMs: number;
  readonly #maxResumeMs: number;
  readonly #progressTimeoutMs: number;
  readonly #finishTimeoutMs: number;
  readonly #statusTimeoutMs: number;
  readonly #maxStallResumes: number;
  readonly #reorderWindowFrames: number;
  readonly #eventIdPrefix: string;
  readonly #policyOption: PartialSegmentPolicy | undefined;
  readonly #overload: OverloadWatch | undefined;

  #phase: Phase = Phase.idle;
  #conn: ConnectionState | undefined;
  #transportOpen = false;
  /** The timers running, one bit each (`TIMER_BIT`). */
  #timers = 0;
  #eventCounter = 0;
  #outSequence = 0;
  /** The last attempt tag given (a connection, or a stored file of the manifest). */
  #attempts = 0;
  #ready: ReadyEvent | undefined;
  #policy: PartialSegmentPolicy = PartialSegmentPolicy.continue;
  /** `start` was sent at least once: the service may know the request. */
  #startSent = false;
  /** The user will queue nothing more. */
  #ending = false;
  /** Attempts of the current recovery (reset once a resumed connection makes progress). */
  #attempt = 0;
  /** The listener does not read audio now (backpressure): no progress deadline. */
  #readerPaused = false;
  /** A frame moved what is owed during the current slice of the progress deadline. */
  #progressSeen = false;
  /** Slices of the progress deadline in a row that brought no progress. */
  #quietSlices = 0;
  /** The budget the running progress timer measures (`progressTimeoutMs` or `finishTimeoutMs`). */
  #watchBudget = 0;
  /** Stalls resumed since a segment last completed on the wire (`maxStallResumes`). */
  #stalls = 0;
  #retries = 0;
  #resumed = 0;
  #statusReads = 0;
  /** The server's activity (`OverloadWatch.activity`) when the current status read went out. */
  #statusActivity: number | undefined;
  #statusPolls = 0;
  /** A recovery is under way: the next `ready` is a resume. */
  #resuming = false;
  #manifestQueue: ManifestItem[] = [];
  #afterRecovery: AfterRecovery = 'finish';
  #error: VoxpipeError | undefined;
  /** The failure that started the current recovery attempt. */
  #lastRetryError: VoxpipeError | undefined;
  /** `maxResumeMs` passed while a resumed connection was live: the next failure gives up. */
  #resumeOverdue = false;

  constructor(options: MachineOptions, port: MachinePort) {
    this.requestId = options.requestId;
    this.#request = options.request;
    this.#port = port;
    this.#policyOption = options.onPartialSegment;
    this.#overload = options.overload;
    this.#backoff = resolveBackoff(options.backoff);
    this.#maxRetries = options.maxRetries ?? 6;
    this.#maxStatusPolls = options.maxStatusPolls ?? 20;
    this.#startTimeoutMs = options.startTimeoutMs ?? 10_000; // 10 s
    this.#maxResumeMs = options.maxResumeMs ?? 60_000; // 60 s
    checkBudgets(options);
    this.#progressTimeoutMs = options.progressTimeoutMs ?? RECOVERY_DEFAULTS.progressTimeoutMs;
    this.#finishTimeoutMs = options.finishTimeoutMs ?? RECOVERY_DEFAULTS.finishTimeoutMs;
    this.#statusTimeoutMs = options.statusTimeoutMs ?? RECOVERY_DEFAULTS.statusTimeoutMs;
    this.#maxStallResumes = options.maxStallResumes ?? RECOVERY_DEFAULTS.maxStallResumes;
    this.#reorderWindowFrames = options.reorderWindowFrames ?? DEFAULT_REORDER_WINDOW_FRAMES;
    // Keep ids within the 128-character limit whatever the prefix.
    this.#eventIdPrefix = (options.eventIdPrefix ?? 'ev').slice(0, 100);
  }

  get phase(): Phase {
    return this.#phase;
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
      retries: this.#retries,
      resumed: this.#resumed,
      statusReads: this.#statusReads,
      segments: completed.map((e) => ({ segmentId: e.segmentId, units: e.units, audioBytes: this.#port.audioOf(e.segmentId).emittedBytes })),
    };
  }

  /** The one input. */
  handle(input: MachineInput): void {
    if (TERMINAL.has(this.#phase)) return;
    this.#dispatch(input);
    if (!TERMINAL.has(this.#phase)) this.#watchProgress();
  }

  #dispatch(input: MachineInput): void {
    switch (input.type) {
      case 'open':
        if (this.#phase === Phase.idle) this.#connect(false);
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
        else if (this.#phase === Phase.completedRemotely) this.#finishOk();
        return;
      case 'abort-requested':
        this.#onAbort(input.reason);
        return;
      case 'status-fetched':
        if (this.#phase !== Phase.fetchingStatus) return;
        this.#cancelTimer(TimerId.status);
        this.#onStatus(input.result);
        return;
      case 'audio-fetched':
        if (this.#phase === Phase.recovering) this.#onSegmentAudio(input.segmentId, input.result);
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
    return conn.awaitingAck || conn.flushOutstanding !== undefined || conn.order.held > 0;
  }

  /** The budget of what is owed now: `finishTimeoutMs` after `stop`, else `progressTimeoutMs`. */
  #owedBudget(): number {
    return this.#phase === Phase.stopping ? this.#finishTimeoutMs : this.#progressTimeoutMs;
  }

  /**
   * Keep the progress deadline: armed while something is owed and the reader
   * reads, cancelled otherwise. It runs in slices of the budget
   * (`PROGRESS_SLICES`); a frame that moves what is owed (`#advance()`) only
   * marks the current slice, so audio frames cost no timer calls, and the
   * attempt stalls once a whole budget of slices passed without one (so the
   * quiet lasts between the budget and 1 + 1/PROGRESS_SLICES of it).
   */
  #watchProgress(): void {
    if (!this.#owed() || this.#readerPaused) {
      this.#cancelTimer(TimerId.progress);
      return;
    }
    const budget = this.#owedBudget();
    if ((this.#timers & TIMER_BIT[TimerId.progress]) !== 0 && budget === this.#watchBudget) return;
    this.#watchBudget = budget;
    this.#progressSeen = false;
    this.#quietSlices = 0;
    this.#overload?.restart();
    this.#startTimer(TimerId.progress, Math.max(1, Math.ceil(budget / PROGRESS_SLICES)));
  }

  /** A frame moved what is owed: the current slice of the progress deadline is not quiet (nor for the server's other streams). */
  #advance(): void {
    this.#progressSeen = true;
    this.#overload?.progress();
  }

  /** What the machine waits for now, for the stall's message. */
  #awaited(): string {
    const conn = this.#conn;
    if (this.#phase === Phase.stopping) return 'finish after stop';
    if (conn?.awaitingAck) return `input_ack for text sequence ${conn.sequence}`;
    if (conn?.flushOutstanding !== undefined) return `audio and segment_completed of segment ${conn.flushOutstanding}`;
    return 'audio held behind a missing sequence';
  }

  /**
   * A stall: the server went quiet while owing a frame, or sent a frame the
   * machine needs but cannot use. The attempt ends at once (status read, then
   * resume), at most `maxStallResumes` times until a segment completes on
   * the wire again; then the request fails (failover under `auto`).
   */
  #stall(error: VoxpipeError): void {
    this.#stalls++;
    if (this.#stalls > this.#maxStallResumes) {
      this.#giveUp(error, this.#attempt, `to resume after the server stalled ${this.#stalls} times`);
      return;
    }
    this.#retry(error);
  }

  // ---------------------------------------------------------------- connection

  #connect(retryFailed: boolean): void {
    this.#phase = Phase.connecting;
    // A deployment may count audio across the whole request: a new connection is expected to go on from the last one.
    const last = this.#conn?.order.highest;
    const order = new AudioOrder<AudioEvent>(this.#reorderWindowFrames, last === undefined ? 1 : last + 1);
    this.#conn = { retryFailed, sequence: 0, awaitingAck: false, flushOutstanding: undefined, attempt: ++this.#attempts, order, gapReported: false };
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
    this.#startTimer(TimerId.start, this.#startTimeoutMs);
  }

  #onTransportFailed(error: VoxpipeError): void {
    if (this.#phase !== Phase.connecting) return;
    // Before any `start` the request cannot exist: a first connection that
    // fails is the caller's to handle (wrong URL, key, network), not a resume.
    if (error.retryable && this.#startSent) this.#retry(error);
    else this.#fail(error);
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
    if (retryable || askStatus) this.#retry(failure);
    else this.#fail(failure);
  }

  // ---------------------------------------------------------------- frames

  #onFrame(event: ServerEvent): void {
    switch (event.event) {
      case 'ready':
        this.#onReady(event);
        return;
      case 'request_status':
        this.#onRequestStatusEvent(event.state);
        return;
      case 'input_ack':
        this.#onInputAck(event.sequence);
        return;
      case 'segment_accepted': {
        const entry = this.#journal.get(event.segment_id);
        if (!entry || entry.completed) return;
        this.#advance();
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
        this.#advance();
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
    this.#cancelTimer(TimerId.start);
    if (this.#ready && this.#ready.format !== ready.format) {
      this.#fail(new ResumeError(ResumeErrorCode.resumeMismatch, `resumed request speaks ${ready.format}, not ${this.#ready.format}`, { requestId: this.requestId }));
      return;
    }
    const first = this.#ready === undefined;
    this.#ready = ready;
    if (first) this.#policy = this.#policyOption ?? defaultPartialPolicy(ready.format);
    this.#phase = Phase.running;
    const resumed = this.#resuming;
    const attempt = this.#attempt;
    this.#resuming = false;
    // `#attempt` stays: a server that fails right after every `ready` must
    // not be retried forever. Progress on this connection resets it.
    this.#statusPolls = 0;
    if (this.#journal.allCompleted) this.#progressMade(); // nothing owed: the resume is complete
    if (first) this.#port.emit({ type: 'ready', ready });
    if (resumed) {
      this.#resumed++;
      this.#port.emit({ type: 'resumed', attempt, requestId: this.requestId, pendingSegments: this.#journal.pending().map((e) => e.segmentId) });
    }
    this.#pump();
  }

  /** `start` named a request the service knows: it answers its state and closes. */
  #onRequestStatusEvent(state: string): void {
    if (this.#phase !== Phase.starting) return;
    this.#cancelTimer(TimerId.start);
    const askedRetry = this.#conn?.retryFailed ?? false;
    this.#closeTransport(CloseCode.normal, 'request status received');
    if (state === RequestState.completed) {
      // The event has no manifest: read it from the route.
      this.#readStatus();
    } else if (state === RequestState.failedRetryable && !askedRetry) {
      this.#resuming = true;
      this.#connect(true);
    } else if (state === RequestState.failedRetryable || state === RequestState.running) {
      // Not what a retry_failed start should answer, or not finished failing yet: back off, read again.
      this.#retry(new ResumeError(ResumeErrorCode.requestNotResumable, `request ${this.requestId} is ${state}`, { requestId: this.requestId, retryable: true }));
    } else {
      this.#fail(new ResumeError(ResumeErrorCode.requestFailedTerminal, `request ${this.requestId} failed terminally`, { requestId: this.requestId }));
    }
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
      this.#stall(new ProtocolError('invalid_server_frame', `input_ack for sequence ${sequence}, but on this connection ${sent}`, 'sequence', { retryable: true, requestId: this.requestId }));
      return;
    }
    // A repeat of an earlier ack moves nothing.
    if (!conn.awaitingAck || sequence !== conn.sequence) return;
    this.#advance();
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
      this.#stall(new ProtocolError('invalid_server_frame', `segment_completed for ${what} (${awaited})`, 'segment_id', { retryable: true, requestId: this.requestId }));
      return;
    }
    // The bytes the server says the segment carries: `segment_completed`'s, else its `usage`'s.
    const expected = event.audio_bytes ?? entry?.stated;
    if (entry && expected !== undefined && this.#short(conn, entry, expected)) return;
    this.#drainAudio(event.segment_id);
    // Its window is done with: frames of a completed segment are dropped before ordering (`#onAudio`).
    conn.order.discardSegment(event.segment_id);
    conn.flushOutstanding = undefined;
    this.#stalls = 0; // the server completes segments on the wire again
    if (entry) this.#complete(entry, event.units, expected);
    this.#pump();
  }

  /**
   * Every byte accounted for: a completed segment's audio against the bytes
   * the server says it carries (a stream header it may count in). Short
   * while nothing past the hole reached the listener: a new attempt at the
   * segment (resume; a completed segment's stored audio comes from the
   * manifest), the held frames dropped. Short otherwise (audio past a hole
   * already emitted, or a completion that brings no audio): `audio_incomplete`.
   */
  #short(conn: ConnectionState, entry: JournalEntry, expected: number): boolean {
    const held = conn.order.heldOf(entry.segmentId).reduce((n, e) => n + e.audio.byteLength, 0);
    // Raw bytes of this attempt (a stream header included, as a deployment may count it), and what the listener has.
    const onConnection = entry.attemptOffset + held;
    const heard = this.#port.audioOf(entry.segmentId);
    const haveRaw = Math.max(onConnection, heard.audioBytes + heard.headerBytes);
    if (haveRaw >= expected) return false;
    const have = haveRaw - heard.headerBytes;
    if (onConnection > 0 && !entry.skippedPast) {
      conn.order.discardSegment(entry.segmentId);
      this.#retry(new AudioIncompleteError(entry.segmentId, expected, have, { requestId: this.requestId, retryable: true, why: 'asking for it again' }));
    } else {
      this.#fail(new AudioIncompleteError(entry.segmentId, expected, have, { requestId: this.requestId, why: onConnection > 0 ? 'audio after the hole was already emitted' : 'the service completed it without sending the rest' }));
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
    if (event.retryable) this.#retry(error);
    else this.#fail(error);
  }

  #onFinish(event: FinishEvent): void {
    if (event.reason === FinishReason.completed) {
      this.#drainAudio();
      if (this.#phase === Phase.stopping || this.#journal.allCompleted) this.#finishOk();
      else this.#fail(new RealtimeServerError('invalid_state', 'the request finished before all segments completed', true, { requestId: this.requestId }));
      return;
    }
    // server_draining: the close (1012) that follows drives the resume.
    if (event.reason === FinishReason.serverDraining) return;
    // error, timeout: the status route decides whether the request can go on.
    this.#retry(new ConnectionError('request_interrupted', `request finished with reason ${event.reason}`, { retryable: true, requestId: this.requestId }));
  }

  // ---------------------------------------------------------------- audio

  #onAudio(event: AudioEvent): void {
    const conn = this.#conn;
    if (!conn) return;
    const entry = this.#journal.get(event.segment_id);
    if (!entry || entry.completed) {
      // Not a segment that waits for audio: no window is kept for it (nor made: ids the server invents would grow the order's map).
      if (entry) entry.audioArrived = true;
      this.#port.emit({ type: 'warning', code: WarningCode.unexpectedAudio, message: `dropped audio of segment ${event.segment_id}` });
      return;
    }
    entry.audioArrived = true;
    this.#advance();
    this.#releaseOrdered(conn, conn.order.push(event.segment_id, event.sequence, event), event);
  }

  /** Release the frames held behind a missing sequence: of one segment when it completed, else of all. */
  #drainAudio(segmentId?: string): void {
    const conn = this.#conn;
    if (!conn || conn.order.held === 0) return;
    this.#releaseOrdered(conn, segmentId === undefined ? conn.order.drainAll() : conn.order.drainSegment(segmentId));
  }

  #releaseOrdered(conn: ConnectionState, verdict: SequenceVerdict<AudioEvent>, event?: AudioEvent): void {
    if (event && verdict.duplicate) {
      this.#port.emit({ type: 'warning', code: WarningCode.audioRepeat, message: `dropped a repeat of audio sequence ${event.sequence} of segment ${event.segment_id}` });
    }
    if (event && verdict.late) {
      this.#port.emit({ type: 'warning', code: WarningCode.audioLate, message: `audio sequence ${event.sequence} of segment ${event.segment_id} came after later audio was emitted; it was left out` });
    }
    this.#reportGaps(verdict.gaps);
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
      this.#onOrderedAudio(conn, frame);
    }
  }

  #reportGaps(gaps: readonly SequenceGap[]): void {
    // Numbering may legally skip: said once a connection; the byte count of each segment says whether audio is missing.
    if (gaps.length === 0 || !this.#conn || this.#conn.gapReported) return;
    this.#conn.gapReported = true;
    this.#port.emit({
      type: 'warning',
      code: WarningCode.audioSequenceGap,
      message: `audio sequence ${describeGaps(gaps)} skipped (never arrived in order)`,
    });
  }

  #onOrderedAudio(conn: ConnectionState, event: AudioEvent): void {
    const entry = this.#journal.get(event.segment_id);
    if (!entry || entry.completed) {
      this.#port.emit({ type: 'warning', code: WarningCode.unexpectedAudio, message: `dropped audio of segment ${event.segment_id}` });
      return;
    }
    const offset = entry.attemptOffset;
    entry.attemptOffset = offset + event.audio.byteLength;
    this.#handOver(entry, conn.attempt, offset, event.audio);
  }

  /** Raw bytes of an attempt at a segment, to the listener's ledger (the one splice and header path). */
  #handOver(entry: JournalEntry, attempt: number, offset: number, data: Uint8Array): void {
    if (data.byteLength === 0) return;
    const before = this.#port.audioOf(entry.segmentId).emittedBytes;
    this.#port.emitAudio({ segmentId: entry.segmentId, attempt, offset, data, sequence: ++this.#outSequence });
    // Progress is audio the listener did not have: a resume that only repeats what it heard resets no budget.
    if (this.#port.audioOf(entry.segmentId).emittedBytes === before) return;
    this.#progressMade();
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
      this.#fail(new ResumeError(ResumeErrorCode.requestCompleted, `request ${this.requestId} completed before segment ${segmentId} was sent`, { requestId: this.requestId }));
      return;
    }
    this.#journal.add(segmentId, text);
    this.#pump();
  }

  #complete(entry: JournalEntry, units: number, expectedBytes?: number): void {
    this.#progressMade();
    entry.state = SegmentState.completed;
    entry.units = units;
    this.#mark(entry, WaterfallStage.completed);
    const heard = this.#port.audioOf(entry.segmentId);
    const expected = expectedBytes === undefined ? {} : { expectedBytes: Math.max(0, expectedBytes - heard.headerBytes) };
    this.#port.emit({ type: 'segment-completed', result: { segmentId: entry.segmentId, units, audioBytes: heard.emittedBytes, ...expected } });
  }

  // ---------------------------------------------------------------- recovery

  /** A retryable failure: close what is left, back off, then read the status route. */
  #retry(error: VoxpipeError): void {
    this.#cancelTimer(TimerId.start);
    this.#cancelTimer(TimerId.status);
    this.#cancelTimer(TimerId.statusPoll);
    this.#cancelTimer(TimerId.progress);
    if (this.#transportOpen) this.#closeTransport(CloseCode.normal, 'retrying');
    this.#attempt++;
    this.#retries++;
    if (this.#attempt > this.#maxRetries) {
      this.#giveUp(error, this.#attempt - 1, 'to resume');
      return;
    }
    if (this.#resumeOverdue) {
      this.#giveUp(error, this.#attempt - 1, `in ${this.#maxResumeMs} ms to resume`);
      return;
    }
    if (this.#attempt === 1) this.#startTimer(TimerId.resumeDeadline, this.#maxResumeMs);
    this.#lastRetryError = error;
    this.#resuming = true;
    const delayMs = backoffDelayMs(this.#attempt, this.#backoff, this.#port.random());
    this.#port.emit({ type: 'retry', attempt: this.#attempt, error, delayMs });
    this.#phase = Phase.waiting;
    this.#startTimer(TimerId.backoff, delayMs);
  }

  /** A recovery ends: `retries_exhausted`, saying how many attempts were made. */
  #giveUp(error: VoxpipeError, attempts: number, what: string): void {
    if (error instanceof AudioIncompleteError) {
      this.#fail(new AudioIncompleteError(error.segmentId, error.expectedBytes, error.receivedBytes, { cause: error, requestId: this.requestId, why: `still short after ${attempts} attempts` }));
      return;
    }
    const message = `gave up after ${attempts} attempts ${what}: ${error.message}`;
    const options = { cause: error, requestId: this.requestId, details: { lastCode: error.code, attempts } };
    // A server that stopped answering ends in a TimeoutError, anything else in retries_exhausted.
    this.#fail(error instanceof TimeoutError ? new TimeoutError(message, options) : new ResumeError(ResumeErrorCode.retriesExhausted, message, options));
  }

  /** New audio or a completed segment: the current recovery, if any, succeeded. */
  #progressMade(): void {
    if (this.#attempt === 0 || this.#resuming) return;
    this.#attempt = 0;
    this.#resumeOverdue = false;
    this.#cancelTimer(TimerId.resumeDeadline);
  }

  #onTimer(id: TimerId): void {
    if (!this.#stopTimer(id)) return; // cancelled or stale
    if (id === TimerId.progress) {
      if (!this.#owed() || this.#readerPaused) return; // `handle()` cancels or re-arms
      // Without own progress, a slice in which another stream on this server
      // progressed is busy, not quiet, up to OVERLOAD_MAX_BUDGETS (budgets.ts).
      const busy = this.#overload?.busy(this.#progressSeen) === true;
      this.#quietSlices = this.#progressSeen || busy ? 0 : this.#quietSlices + 1;
      this.#progressSeen = false;
      if (this.#quietSlices >= PROGRESS_SLICES) {
        this.#stall(new TimeoutError(`no progress from the server within ${this.#watchBudget} ms while waiting for ${this.#awaited()}`, { retryable: true, requestId: this.requestId }));
        return;
      }
      this.#startTimer(TimerId.progress, Math.max(1, Math.ceil(this.#watchBudget / PROGRESS_SLICES)));
      return;
    }
    if (id === TimerId.status) {
      if (this.#phase === Phase.fetchingStatus) this.#statusUnanswered(undefined);
      return;
    }
    if (id === TimerId.resumeDeadline) {
      // A live connection may still deliver: its progress deadline decides,
      // and the next failure of this recovery gives up.
      if (CONNECTED.has(this.#phase)) {
        this.#resumeOverdue = true;
        return;
      }
      const last = this.#lastRetryError ?? new TimeoutError('recovery timed out', { requestId: this.requestId });
      this.#giveUp(last, this.#attempt, `in ${this.#maxResumeMs} ms to resume`);
      return;
    }
    if (id === TimerId.start) {
      if (this.#phase === Phase.starting) {
        this.#retry(new TimeoutError(`no ready within ${this.#startTimeoutMs} ms of start`, { retryable: true, requestId: this.requestId }));
      }
      return;
    }
    if (this.#phase === Phase.waiting) this.#readStatus();
  }

  #readStatus(): void {
    this.#phase = Phase.fetchingStatus;
    this.#statusReads++;
    this.#statusActivity = this.#overload?.activity;
    this.#startTimer(TimerId.status, this.#statusTimeoutMs);
    this.#port.fetchStatus(this.requestId);
  }

  /**
   * The status route did not answer within `statusTimeoutMs` (the machine's
   * timer, or the read's own deadline): the recovery ends here, typed, and
   * failover (under `auto`) takes the rest. A route that hangs once is not
   * read again: each read would cost a call the same silence. Unless the
   * server served other streams of this process meanwhile (overloaded, not
   * gone): then it is read again, within the recovery's bounds.
   */
  #statusUnanswered(cause: VoxpipeError | undefined): void {
    if (this.#overload !== undefined && this.#statusActivity !== undefined && this.#overload.activity !== this.#statusActivity) {
      // Overload is not death: other streams of this process progressed on
      // the same server while the read waited, so the server is behind, not
      // gone. Read again after a back-off, within the recovery's bounds
      // (`maxRetries`, `maxResumeMs`), instead of ending a stream the
      // server would have served (bench/concurrency.mjs, 10,000 streams).
      const message = `the request-status route did not answer within ${this.#statusTimeoutMs} ms while the server served other streams; reading it again`;
      this.#retry(new TimeoutError(message, { retryable: true, requestId: this.requestId, ...(cause && { cause }), details: { attempts: this.#attempt, statusReads: this.#statusReads } }));
      return;
    }
    const message = `the request-status route did not answer within ${this.#statusTimeoutMs} ms; recovery of request ${this.requestId} stops here`;
    this.#fail(new TimeoutError(message, { retryable: true, requestId: this.requestId, ...(cause && { cause }), details: { attempts: this.#attempt, statusReads: this.#statusReads } }));
  }

  #onStatus(result: StatusResult): void {
    if (result.kind === 'error' && result.error instanceof TimeoutError) {
      this.#statusUnanswered(result.error);
      return;
    }
    const action = decideRecovery(result, this.#journal.pending(), this.requestId);
    switch (action.kind) {
      case 'retry':
        this.#retry(action.error);
        return;
      case 'fail':
        this.#fail(action.error);
        return;
      case 'restart':
        this.#connect(false);
        return;
      case 'poll':
        this.#statusPolls++;
        if (this.#statusPolls > this.#maxStatusPolls) {
          this.#fail(new ResumeError(ResumeErrorCode.requestStillRunning, `request ${this.requestId} still running after ${this.#maxStatusPolls} reads`, { requestId: this.requestId }));
          return;
        }
        this.#phase = Phase.waiting;
        this.#startTimer(TimerId.statusPoll, backoffDelayMs(this.#statusPolls, this.#backoff, this.#port.random()));
        return;
      case 'recover':
        this.#manifestQueue = action.items.map((item) => ({ entry: this.#journal.get(item.segmentId)!, url: item.url, units: item.units, audioBytes: item.audioBytes }));
        this.#afterRecovery = action.after;
        this.#phase = Phase.recovering;
        this.#nextManifestItem();
        return;
    }
  }

  #nextManifestItem(): void {
    for (;;) {
      const item = this.#manifestQueue[0];
      if (!item) break;
      if (item.url !== undefined) {
        this.#port.fetchSegmentAudio(item.entry.segmentId, item.url);
        return;
      }
      this.#manifestQueue.shift();
      const heard = this.#port.audioOf(item.entry.segmentId);
      if (this.#shortOfManifest(item, 'the completed request offers no audio for it')) return;
      this.#port.emit({
        type: 'warning',
        code: WarningCode.audioUnavailable,
        message: `segment ${item.entry.segmentId}: the completed request offers no audio for it; ${heard.audioBytes} bytes were emitted`,
      });
      this.#complete(item.entry, item.units);
    }
    if (this.#afterRecovery === 'reopen') {
      this.#connect(true);
      return;
    }
    const attempt = this.#attempt;
    this.#resumed++;
    this.#resuming = false;
    this.#attempt = 0;
    this.#resumeOverdue = false;
    this.#cancelTimer(TimerId.resumeDeadline);
    this.#port.emit({ type: 'resumed', attempt, requestId: this.requestId, pendingSegments: [] });
    if (this.#ending) this.#finishOk();
    else this.#phase = Phase.completedRemotely;
  }

  /** What the listener has of a manifest's segment is short of its `audio_bytes`: fails with `audio_incomplete`. */
  #shortOfManifest(item: { entry: JournalEntry; audioBytes?: number | undefined }, why: string): boolean {
    const heard = this.#port.audioOf(item.entry.segmentId);
    const have = heard.audioBytes + heard.headerBytes;
    if (item.audioBytes === undefined || have >= item.audioBytes) return false;
    this.#fail(new AudioIncompleteError(item.entry.segmentId, item.audioBytes, have, { requestId: this.requestId, why }));
    return true;
  }

  #onSegmentAudio(segmentId: string, result: SegmentAudioResult): void {
    const item = this.#manifestQueue[0];
    if (!item || item.entry.segmentId !== segmentId) return;
    if (result.kind === 'error') {
      if (result.error.retryable) this.#retry(result.error);
      else this.#fail(result.error);
      return;
    }
    this.#manifestQueue.shift();
    // A stored segment is a file of its own: a new attempt at the segment (its header is the ledger's to strip).
    this.#handOver(item.entry, ++this.#attempts, 0, result.data);
    // Every byte accounted for: the stored file against the manifest's count.
    if (this.#shortOfManifest(item, 'its stored audio is short')) return;
    this.#complete(item.entry, item.units, item.audioBytes);
    this.#nextManifestItem();
  }

  // ---------------------------------------------------------------- endings

  #onAbort(reason: VoxpipeError): void {
    this.#cancelAllTimers();
    if (this.#transportOpen) {
      // Tell the service the request ends here before leaving.
      if (this.#phase === Phase.running) this.#send({ event: 'stop', event_id: this.#nextEventId() });
      this.#closeTransport(CloseCode.normal, 'aborted');
    }
    this.#phase = Phase.aborted;
    this.#error = reason;
    this.#port.emit({ type: 'failed', error: reason });
  }

  #finishOk(): void {
    this.#cancelAllTimers();
    if (this.#transportOpen) this.#closeTransport(CloseCode.normal, 'done');
    this.#phase = Phase.done;
    this.#port.emit({ type: 'finished', summary: this.summary() });
  }

  #fail(error: VoxpipeError): void {
    this.#cancelAllTimers();
    if (this.#transportOpen) this.#closeTransport(CloseCode.normal, 'failed');
    this.#phase = Phase.failed;
    this.#error = error;
    this.#port.emit({ type: 'failed', error });
  }

  // ---------------------------------------------------------------- port helpers

  #send(event: ClientEvent): void {
    this.#port.sendFrame(event);
  }

  #closeTransport(code: number, reason: string): void {
    this.#transportOpen = false;
    this.#port.closeTransport(code, reason);
  }

  #nextEventId(): string {
    return `${this.#eventIdPrefix}-${++this.#eventCounter}`;
  }

  #mark(entry: JournalEntry, stage: WaterfallStage): void {
    // Each stage once per segment, except completion (which happens once anyway).
    if (!entry.mark(stage)) return;
    this.#port.emit({ type: 'mark', segmentId: entry.segmentId, stage });
  }

  #startTimer(id: TimerId, ms: number): void {
    this.#timers |= TIMER_BIT[id];
    this.#port.startTimer(id, ms);
  }

  #cancelTimer(id: TimerId): void {
    if (!this.#stopTimer(id)) return;
    this.#port.cancelTimer(id);
  }

  /** Forget a timer; false when it was not running (cancelled, or a stale fire). */
  #stopTimer(id: TimerId): boolean {
    const bit = TIMER_BIT[id];
    if ((this.#timers & bit) === 0) return false;
    this.#timers &= ~bit;
    return true;
  }

  #cancelAllTimers(): void {
    for (const id of TIMER_IDS) this.#cancelTimer(id);
  }
}

