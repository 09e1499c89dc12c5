/**
 * Recovery of reliable mode: what the machine does between a retryable
 * failure and a connection that makes progress again (backoff, the
 * request-status route, the manifest's stored audio, the bounds of one
 * recovery), kept out of the machine's body. `ReliableRecovery` runs those
 * phases and holds their counters; the machine extends it and supplies the
 * steps a recovery takes (connect, complete, fail ...), and the world is
 * reached through the machine's port.
 *
 * `decideRecovery` is its pure decision: from what the status route
 * answered and the segments still pending, what to do next.
 *
 * - A failed read: back off and read again if it is retryable, else fail.
 * - Unknown request (404): the service never registered it; start it again
 *   under the same id, without `retry_failed`.
 * - `running`: read again later.
 * - `failed_retryable`: take from the manifest the audio of the leading run
 *   of pending segments the service completed (order must hold), then reopen
 *   with `retry_failed` for the rest.
 * - `completed`: settle every pending segment from the manifest (audio where
 *   offered, else what was emitted); a pending segment that was never sent
 *   cannot be, since the request is over.
 * - `failed_terminal` or a state not in the spec: fail.
 */
import { AudioIncompleteError, ResumeError, TimeoutError, type VoxpipeError } from '../../errors.js';
import { RequestState } from '../../protocol/constants.js';
import { WarningCode } from '../../protocol/codes.js';
import { backoffDelayMs, resolveBackoff, type BackoffPolicy } from '../../backoff.js';
import { defined } from '../../defined.js';
import { expectedAudioBytes, shortOf } from '../../splice.js';
import { RECOVERY_DEFAULTS, type OverloadWatch } from '../budgets.js';
import type { Deadlines } from '../deadlines.js';
import type { Journal, JournalEntry } from './journal.js';
import { CONNECTED_PHASES, Phase, ResumeErrorCode, TimerId, type MachineOptions, type MachinePort, type MachineSummary, type SegmentAudioResult, type StatusResult } from './types.js';

/** What the decision needs to know of a pending segment. */
export interface PendingSegment {
  segmentId: string;
  /** Its flush was sent at least once. */
  everFlushed: boolean;
}

/** A pending segment settled from the manifest. */
export interface ManifestSettlement {
  segmentId: string;
  /** Where its complete audio is; undefined: complete it with what was emitted. */
  url: string | undefined;
  units: number;
  /** Audio bytes the manifest says the segment carries, when it says. */
  audioBytes?: number;
}

export type RecoveryAction =
  | { kind: 'retry'; error: VoxpipeError }
  | { kind: 'fail'; error: VoxpipeError }
  /** Start the request again under the same id, without `retry_failed`. */
  | { kind: 'restart' }
  /** The request still runs: read the status again later. */
  | { kind: 'poll' }
  /** Settle `items` from the manifest, then `reopen` (resume the rest) or `finish`. */
  | { kind: 'recover'; after: 'reopen' | 'finish'; items: ManifestSettlement[] };

export function decideRecovery(result: StatusResult, pending: readonly PendingSegment[], requestId: string): RecoveryAction {
  if (result.kind === 'error') return result.error.retryable ? { kind: 'retry', error: result.error } : { kind: 'fail', error: result.error };
  if (result.kind === 'not-found') return { kind: 'restart' };
  const status = result.status;
  const manifest = new Map((status.segments ?? []).map((s) => [s.segment_id, s]));
  switch (status.state) {
    case RequestState.running:
      return { kind: 'poll' };
    case RequestState.failedRetryable: {
      const items: ManifestSettlement[] = [];
      for (const segment of pending) {
        const item = manifest.get(segment.segmentId);
        if (item?.state !== 'completed' || item.audio_url === undefined) break;
        items.push({ segmentId: segment.segmentId, url: item.audio_url, units: item.units });
      }
      return { kind: 'recover', after: 'reopen', items };
    }
    case RequestState.completed: {
      const items: ManifestSettlement[] = [];
      for (const segment of pending) {
        if (!segment.everFlushed) {
          return { kind: 'fail', error: new ResumeError(ResumeErrorCode.requestCompleted, `request ${requestId} completed before segment ${segment.segmentId} was sent`, { requestId }) };
        }
        const item = manifest.get(segment.segmentId);
        const done = item?.state === 'completed';
        items.push({ segmentId: segment.segmentId, url: done ? item.audio_url : undefined, units: done ? item.units : 0, ...(done && item.audio_bytes !== undefined && { audioBytes: item.audio_bytes }) });
      }
      return { kind: 'recover', after: 'finish', items };
    }
    default:
      return { kind: 'fail', error: new ResumeError(ResumeErrorCode.requestFailedTerminal, `request ${requestId} failed terminally`, { requestId }) };
  }
}

/** A pending segment to settle from the manifest. */
interface ManifestItem {
  entry: JournalEntry;
  /** Where its audio is; `undefined`: complete it with what was emitted. */
  url: string | undefined;
  units: number;
  /** Audio bytes the manifest says the segment carries, when it says. */
  audioBytes: number | undefined;
}

/**
 * The recovery of one reliable request. Bounds (each documented with its
 * default on `MachineOptions`, defaults in `RECOVERY_DEFAULTS`): `maxRetries`
 * attempts and `maxResumeMs` per recovery, `maxStatusPolls` reads of a
 * running request, `statusTimeoutMs` per status read, `maxStallResumes`
 * stalls until a segment completes on the wire.
 */
export abstract class ReliableRecovery {
  readonly requestId: string;
  readonly #port: MachinePort;
  readonly #timers: Deadlines<TimerId>;
  readonly #journal: Journal;
  readonly #overload: OverloadWatch | undefined;
  readonly #backoff: BackoffPolicy;
  /** The bounds, each as given or its default. */
  readonly #bounds: { readonly [K in keyof typeof RECOVERY_DEFAULTS]: number };

  /** Attempts of the current recovery (reset once a resumed connection makes progress). */
  #attempt = 0;
  #retries = 0;
  #resumed = 0;
  #statusReads = 0;
  #statusPolls = 0;
  /** Stalls resumed since a segment last completed on the wire. */
  #stalls = 0;
  /** A recovery is under way: the next `ready` is a resume. */
  #resuming = false;
  /** `maxResumeMs` passed while a resumed connection was live: the next failure gives up. */
  #resumeOverdue = false;
  /** The failure that started the current recovery attempt. */
  #lastError: VoxpipeError | undefined;
  /** The server's activity (`OverloadWatch.activity`) when the current status read went out. */
  #statusActivity: number | undefined;
  #manifest: ManifestItem[] = [];
  #after: 'reopen' | 'finish' = 'finish';

  constructor(options: MachineOptions, port: MachinePort, timers: Deadlines<TimerId>, journal: Journal) {
    this.requestId = options.requestId;
    this.#port = port;
    this.#timers = timers;
    this.#journal = journal;
    this.#overload = options.overload;
    this.#backoff = resolveBackoff(options.backoff);
    this.#bounds = { ...RECOVERY_DEFAULTS, ...defined(options) };
  }

  abstract get phase(): Phase;
  /** The user will queue nothing more. */
  protected abstract get ending(): boolean;
  /** Enter a phase of the recovery. */
  protected abstract enter(phase: Phase): void;
  /** Close the transport, when one is open. */
  protected abstract closeTransport(reason: string): void;
  /** Open a new connection; `start` carries `retry_failed` when asked. */
  protected abstract connect(retryFailed: boolean): void;
  protected abstract complete(entry: JournalEntry, units: number, stated?: number): void;
  /** A stored file of the manifest: a new attempt at the segment, handed over whole. */
  protected abstract handOverStored(entry: JournalEntry, data: Uint8Array): void;
  protected abstract finish(): void;
  protected abstract fail(error: VoxpipeError): void;

  /** Recovery attempts (backoffs) made, times the request continued (on a new connection or from the manifest), reads of the status route. */
  protected recoveryCounts(): Pick<MachineSummary, 'retries' | 'resumed' | 'statusReads'> {
    return { retries: this.#retries, resumed: this.#resumed, statusReads: this.#statusReads };
  }

  /** A retryable failure: close what is left, back off, then read the status route. */
  protected retry(error: VoxpipeError): void {
    const timers = this.#timers;
    timers.cancel(TimerId.start);
    timers.cancel(TimerId.status);
    timers.cancel(TimerId.statusPoll);
    timers.cancel(TimerId.progress);
    this.closeTransport('retrying');
    this.#attempt++;
    this.#retries++;
    if (this.#attempt > this.#bounds.maxRetries) {
      this.#giveUp(error, this.#attempt - 1, 'to resume');
      return;
    }
    if (this.#resumeOverdue) {
      this.#giveUp(error, this.#attempt - 1, `in ${this.#bounds.maxResumeMs} ms to resume`);
      return;
    }
    if (this.#attempt === 1) timers.start(TimerId.resumeDeadline, this.#bounds.maxResumeMs);
    this.#lastError = error;
    this.#resuming = true;
    const delayMs = backoffDelayMs(this.#attempt, this.#backoff, this.#port.random());
    this.#port.emit({ type: 'retry', attempt: this.#attempt, error, delayMs });
    this.enter(Phase.waiting);
    timers.start(TimerId.backoff, delayMs);
  }

  /**
   * A stall: the server went quiet while owing a frame, or sent a frame the
   * machine needs but cannot use. The attempt ends at once (status read, then
   * resume), at most `maxStallResumes` times until a segment completes on
   * the wire again; then the request fails (failover under `auto`).
   */
  protected stall(error: VoxpipeError): void {
    this.#stalls++;
    if (this.#stalls > this.#bounds.maxStallResumes) {
      this.#giveUp(error, this.#attempt, `to resume after the server stalled ${this.#stalls} times`);
      return;
    }
    this.retry(error);
  }

  /** A segment completed on the wire: the server delivers again. */
  protected completedOnWire(): void {
    this.#stalls = 0;
  }

  /** New audio or a completed segment: the current recovery, if any, succeeded. */
  protected progressMade(): void {
    if (this.#attempt === 0 || this.#resuming) return;
    this.#attempt = 0;
    this.#resumeOverdue = false;
    this.#timers.cancel(TimerId.resumeDeadline);
  }

  /**
   * `ready` on a connection: the recovery attempt it resumes, if it resumes
   * one. The attempt count stays (a server that fails right after every
   * `ready` must not be retried forever): progress on this connection resets it.
   */
  protected readyAgain(): number | undefined {
    const resumed = this.#resuming;
    const attempt = this.#attempt;
    this.#resuming = false;
    this.#statusPolls = 0;
    if (this.#journal.allCompleted) this.progressMade(); // nothing owed: the resume is complete
    if (!resumed) return undefined;
    this.#resumed++;
    return attempt;
  }

  /** One of the recovery's timers fired (backoff, status poll, status read, resume deadline). */
  protected recoveryTimer(id: TimerId): void {
    const phase = this.phase;
    if (id === TimerId.status) {
      if (phase === Phase.fetchingStatus) this.#statusUnanswered(undefined);
      return;
    }
    if (id === TimerId.resumeDeadline) {
      // A live connection may still deliver: its progress deadline decides,
      // and the next failure of this recovery gives up.
      if (CONNECTED_PHASES.has(this.phase)) {
        this.#resumeOverdue = true;
        return;
      }
      const last = this.#lastError ?? new TimeoutError('recovery timed out', { requestId: this.requestId });
      this.#giveUp(last, this.#attempt, `in ${this.#bounds.maxResumeMs} ms to resume`);
      return;
    }
    if (phase === Phase.waiting) this.readStatus();
  }

  protected readStatus(): void {
    this.enter(Phase.fetchingStatus);
    this.#statusReads++;
    this.#statusActivity = this.#overload?.activity;
    this.#timers.start(TimerId.status, this.#bounds.statusTimeoutMs);
    this.#port.fetchStatus(this.requestId);
  }

  /** `start` named a request the service knows: it answered its state (and closes). */
  protected requestStatus(state: string, askedRetry: boolean): void {
    this.closeTransport('request status received');
    if (state === RequestState.completed) {
      // The event has no manifest: read it from the route.
      this.readStatus();
    } else if (state === RequestState.failedRetryable && !askedRetry) {
      this.#resuming = true;
      this.connect(true);
    } else if (state === RequestState.failedRetryable || state === RequestState.running) {
      // Not what a retry_failed start should answer, or not finished failing yet: back off, read again.
      this.retry(new ResumeError(ResumeErrorCode.requestNotResumable, `request ${this.requestId} is ${state}`, { requestId: this.requestId, retryable: true }));
    } else {
      this.fail(new ResumeError(ResumeErrorCode.requestFailedTerminal, `request ${this.requestId} failed terminally`, { requestId: this.requestId }));
    }
  }

  /** The status route answered. */
  protected statusFetched(result: StatusResult): void {
    this.#timers.cancel(TimerId.status);
    if (result.kind === 'error' && result.error instanceof TimeoutError) {
      this.#statusUnanswered(result.error);
      return;
    }
    const action = decideRecovery(result, this.#journal.pending(), this.requestId);
    switch (action.kind) {
      case 'retry':
        this.retry(action.error);
        return;
      case 'fail':
        this.fail(action.error);
        return;
      case 'restart':
        this.connect(false);
        return;
      case 'poll':
        this.#statusPolls++;
        if (this.#statusPolls > this.#bounds.maxStatusPolls) {
          this.fail(new ResumeError(ResumeErrorCode.requestStillRunning, `request ${this.requestId} still running after ${this.#bounds.maxStatusPolls} reads`, { requestId: this.requestId }));
          return;
        }
        this.enter(Phase.waiting);
        this.#timers.start(TimerId.statusPoll, backoffDelayMs(this.#statusPolls, this.#backoff, this.#port.random()));
        return;
      case 'recover':
        this.#manifest = action.items.map((item) => ({ entry: this.#journal.get(item.segmentId)!, url: item.url, units: item.units, audioBytes: item.audioBytes }));
        this.#after = action.after;
        this.enter(Phase.recovering);
        this.#nextManifestItem();
        return;
    }
  }

  /** A stored file of the manifest came (or its read failed). */
  protected audioFetched(segmentId: string, result: SegmentAudioResult): void {
    const item = this.#manifest[0];
    if (!item || item.entry.segmentId !== segmentId) return;
    if (result.kind === 'error') {
      if (result.error.retryable) this.retry(result.error);
      else this.fail(result.error);
      return;
    }
    this.#manifest.shift();
    this.handOverStored(item.entry, result.data);
    // Every byte accounted for: the stored file against the manifest's count.
    if (this.#shortOfManifest(item, 'its stored audio is short')) return;
    this.complete(item.entry, item.units, item.audioBytes);
    this.#nextManifestItem();
  }

  /** A recovery ends: `retries_exhausted`, saying how many attempts were made. */
  #giveUp(error: VoxpipeError, attempts: number, what: string): void {
    if (error instanceof AudioIncompleteError) {
      this.fail(new AudioIncompleteError(error.segmentId, error.expectedBytes, error.receivedBytes, { cause: error, requestId: this.requestId, why: `still short after ${attempts} attempts` }));
      return;
    }
    const message = `gave up after ${attempts} attempts ${what}: ${error.message}`;
    const options = { cause: error, requestId: this.requestId, details: { lastCode: error.code, attempts } };
    // A server that stopped answering ends in a TimeoutError, anything else in retries_exhausted.
    this.fail(error instanceof TimeoutError ? new TimeoutError(message, options) : new ResumeError(ResumeErrorCode.retriesExhausted, message, options));
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
    // Overload is not death: other streams of this process progressed on
    // the same server while the read waited, so the server is behind, not
    // gone. Read again after a back-off, within the recovery's bounds
    // (`maxRetries`, `maxResumeMs`), instead of ending a stream the
    // server would have served (bench/concurrency.mjs, 10,000 streams).
    const busy = this.#overload !== undefined && this.#statusActivity !== undefined && this.#overload.activity !== this.#statusActivity;
    const then = busy ? ' while the server served other streams; reading it again' : `; recovery of request ${this.requestId} stops here`;
    const error = new TimeoutError(`the request-status route did not answer within ${this.#bounds.statusTimeoutMs} ms${then}`, {
      retryable: true,
      requestId: this.requestId,
      ...(cause && { cause }),
      details: { attempts: this.#attempt, statusReads: this.#statusReads },
    });
    if (busy) this.retry(error);
    else this.fail(error);
  }

  #nextManifestItem(): void {
    for (;;) {
      const item = this.#manifest[0];
      if (!item) break;
      if (item.url !== undefined) {
        this.#port.fetchSegmentAudio(item.entry.segmentId, item.url);
        return;
      }
      this.#manifest.shift();
      if (this.#shortOfManifest(item, 'the completed request offers no audio for it')) return;
      const heard = this.#port.audioOf(item.entry.segmentId);
      this.#port.emit({
        type: 'warning',
        code: WarningCode.audioUnavailable,
        message: `segment ${item.entry.segmentId}: the completed request offers no audio for it; ${heard.audioBytes} bytes were emitted`,
      });
      this.complete(item.entry, item.units);
    }
    if (this.#after === 'reopen') {
      this.connect(true);
      return;
    }
    const attempt = this.#attempt;
    this.#resumed++;
    this.#resuming = false;
    this.#attempt = 0;
    this.#resumeOverdue = false;
    this.#timers.cancel(TimerId.resumeDeadline);
    this.#port.emit({ type: 'resumed', attempt, requestId: this.requestId, pendingSegments: [] });
    if (this.ending) this.finish();
    else this.enter(Phase.completedRemotely);
  }

  /** What the listener has of a manifest's segment is short of its `audio_bytes`: fails with `audio_incomplete`. */
  #shortOfManifest(item: ManifestItem, why: string): boolean {
    if (item.audioBytes === undefined) return false;
    const heard = this.#port.audioOf(item.entry.segmentId);
    const expected = expectedAudioBytes(item.audioBytes, heard.headerBytes);
    const have = shortOf(heard, expected);
    if (have === undefined) return false;
    this.fail(new AudioIncompleteError(item.entry.segmentId, expected, have, { requestId: this.requestId, why }));
    return true;
  }
}
