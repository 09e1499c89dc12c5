/**
 * Reliable mode (spec 3.4b, 3.5, 4.10) over a journal of segments.
 *
 * Flow: `start` (mode reliable, event_id, request_id) → `ready`; `text` →
 * `input_ack`; `flush` → `segment_accepted`, `audio`..., `usage`,
 * `segment_completed`; `stop` → `finish` (completed) once every accepted
 * segment completed → close 1000. Segments generate one at a time, in flush
 * order; a flush while one generates is queued.
 *
 * Rules and the code of each violation (non-terminal unless said; a refused
 * frame changes nothing):
 * - `text.sequence` must be the next expected value, which starts at 1 on
 *   every connection (a retry connection starts at 1 again) and grows by one
 *   per accepted `text`: otherwise `invalid_state` (frame ignored).
 * - a `text` that would make the buffered segment pass LIMITS.segmentMaxChars:
 *   `segment_too_large` (its sequence is not consumed).
 * - `flush` with nothing buffered: `empty_segment`.
 * - `input` (simple-mode event), or `text`/`flush`/`stop` after `stop`: `invalid_state`.
 * - `flush` of a segment already accepted on this connection and not yet
 *   completed: `invalid_state`.
 * - `flush` reusing a `segment_id` with different text: `idempotency_conflict`, terminal.
 * - on a retried request, a not-completed journal segment re-sent out of
 *   order, or a new segment before every not-completed one was re-sent:
 *   `idempotency_conflict`, terminal (the journal is untouched, the request
 *   goes back to `failed_retryable`).
 * - a flush over the session's units or the account's quota:
 *   `session_limit_exceeded` / `quota_exceeded` (non-terminal: the buffer is
 *   kept; the client may `stop` to finish with what was generated).
 * - a re-flushed completed segment with the same text is answered with
 *   `segment_completed` at once: no audio, no charge.
 * - `stop` with unflushed text: the text is discarded with a `warning`
 *   (`unflushed_text_discarded`). Journal segments a retry did not re-send
 *   stay `failed` in the manifest of the completed request.
 *
 * Start with a known `request_id`:
 * - different `start.request` parameters: `idempotency_conflict`, terminal;
 * - no `retry_failed`: `request_status`, then close 1000 (nothing generated or charged);
 * - `retry_failed` on `failed_retryable`: re-executed (`ready` with `resumed: true`);
 *   on `completed`: `request_status` and close; on `running` (another
 *   connection owns it): `invalid_state`, retryable, terminal; on
 *   `failed_terminal`: `idempotency_conflict`, terminal.
 * - `retry_failed` with an unknown `request_id` starts it as new.
 */
import { countChars, LIMITS } from '../../protocol/limits.js';
import { ErrorCode, FinishReason, Mode, RequestState } from '../../protocol/constants.js';
import type { FlushEvent, InputEvent, StartEvent, StartRequest, StopEvent, TextEvent } from '../../protocol/events.js';
import type { PumpResult } from './audio-pump.js';
import { segmentRefId } from './billing.js';
import { createRequestEncoder, synthesisOptions } from './encoding.js';
import { RealtimeFailure } from './failure.js';
import { readyBody } from './ready.js';
import { requestUnits, resultAvailable, SegmentState, storedAudioBytes, type JournalSegment, type RequestRecord, type RequestStore } from './request-store.js';
import type { ResolvedRequest } from './resolve-request.js';
import { SegmentQueue, type SegmentJob } from './segment-queue.js';
import type { EventBody, RequestHandler, SessionPort } from './session-port.js';
import { REALTIME_TUNING } from './tuning.js';

/** Code of the warning sent when `stop` discards unflushed text. */
export const WARNING_UNFLUSHED_TEXT = 'unflushed_text_discarded';

/** Same parameters, whatever the key order. */
function sameRequest(a: StartRequest, b: StartRequest): boolean {
  const canon = (r: StartRequest) => JSON.stringify(Object.entries(r).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : 1)));
  return canon(a) === canon(b);
}

/** Body of the `request_status` event of a stored request. */
export function requestStatusEvent(record: RequestRecord): EventBody<'request_status'> {
  return {
    request_id: record.requestId,
    state: record.state,
    retryable: record.state === RequestState.failedRetryable,
    units: requestUnits(record),
    result_available: resultAvailable(record),
  };
}

/**
 * Handle a reliable `start`: a new request, a retry of a failed one, or a
 * repeat answered with `request_status` (then undefined is returned).
 */
export function openReliable(port: SessionPort, requests: RequestStore, resolved: ResolvedRequest, start: StartEvent): ReliableRequest | undefined {
  // The codec requires request_id for reliable starts.
  const requestId = start.request_id!;
  const userId = port.account.userId;
  const existing = requests.get(userId, requestId);
  if (!existing) {
    const record = requests.create(userId, requestId, start.request, resolved.format, port.sessionId);
    return new ReliableRequest(port, requests, record, resolved, start, false);
  }
  if (!sameRequest(existing.request, start.request)) {
    throw new RealtimeFailure(ErrorCode.idempotencyConflict, 'request_id was already used with different request parameters; use a new request_id', { terminal: true, path: 'request', stage: 'start' });
  }
  if (start.retry_failed === true) {
    switch (existing.state) {
      case RequestState.failedRetryable:
        existing.state = RequestState.running;
        existing.ownerSessionId = port.sessionId;
        existing.ownerProcess = requests.ownerProcess;
        existing.failure = undefined;
        requests.save(existing);
        return new ReliableRequest(port, requests, existing, resolved, start, true);
      case RequestState.running:
        throw new RealtimeFailure(ErrorCode.invalidState, 'the request is running on another connection; read its status and retry later', { terminal: true, retryable: true, stage: 'start' });
      case RequestState.failedTerminal:
        throw new RealtimeFailure(ErrorCode.idempotencyConflict, 'the request failed terminally and cannot be retried; use a new request_id', { terminal: true, stage: 'start' });
      default:
        break; // completed: answer its status
    }
  }
  port.answerStatusAndClose(requestStatusEvent(existing), start.event_id);
  return undefined;
}

/** A reliable-mode request on one connection (a new one, or a retry of a failed one). */
export class ReliableRequest implements RequestHandler {
  readonly mode = Mode.reliable;
  readonly requestId: string;
  #active = true;
  #nextSequence = 1;
  #buffer: string[] = [];
  #bufferedChars = 0;
  /** Journal index after the last segment flushed on this connection. */
  #cursor = 0;
  #stopped = false;
  #stopEventId: string | undefined;
  /** Journal indexes accepted on this connection and not completed yet. */
  readonly #inFlight = new Map<number, SegmentJob>();
  readonly #queue: SegmentQueue;

  constructor(
    private readonly port: SessionPort,
    private readonly requests: RequestStore,
    private readonly record: RequestRecord,
    resolved: ResolvedRequest,
    start: StartEvent,
    resumed: boolean,
  ) {
    this.requestId = record.requestId;
    this.#queue = new SegmentQueue(
      port,
      {
        requestId: this.requestId,
        format: resolved.format,
        // The stream header (wav) belongs to the request's first segment, so
        // a retry that starts later does not repeat it and regenerated
        // segments are byte-identical to the originals.
        encoder: (first) => createRequestEncoder(resolved.format, port.ctx, { streamStart: first.index === 0 }),
        synthesis: synthesisOptions(resolved),
        keepAudio: true,
      },
      {
        onFirstAudio: (job) => this.#onFirstAudio(job),
        onCompleted: (job, result) => this.#onCompleted(job, result),
        onIdle: () => {
          if (this.#stopped) this.#complete();
        },
      },
    );
    const completed = record.segments.filter((s) => s.state === SegmentState.completed).length;
    port.send('ready', readyBody(port, resolved, Mode.reliable, this.requestId, { resumed, segments_completed: completed, next_sequence: 1 }), start.event_id);
  }

  get active(): boolean {
    return this.#active;
  }

  get busy(): boolean {
    return this.#queue.busy;
  }

  units(): number {
    return requestUnits(this.record);
  }

  handle(event: InputEvent | TextEvent | FlushEvent | StopEvent): void | Promise<void> {
    switch (event.event) {
      case 'input':
        throw new RealtimeFailure(ErrorCode.invalidState, 'input is a simple-mode event; this request is in reliable mode (send text and flush)', { stage: 'input' });
      case 'text':
        return this.#text(event);
      case 'flush':
        return this.#flush(event);
      case 'stop':
        return this.#stop(event);
    }
  }

  abort(state: typeof RequestState.failedRetryable | typeof RequestState.failedTerminal, failure?: { code: string; message: string }): void {
    if (!this.#active) return;
    this.#active = false;
    this.#queue.abort();
    // Another connection may own the record by now only if this one had let it go.
    if (this.record.ownerSessionId !== this.port.sessionId) return;
    const inFlight = [...this.#inFlight.keys()];
    this.#inFlight.clear();
    this.requests.failInFlight(this.record, inFlight, state, failure);
  }

  #assertNotStopped(name: string): void {
    if (this.#stopped) throw new RealtimeFailure(ErrorCode.invalidState, `${name} after stop: the request is ending`, { stage: 'input' });
  }

  #text(event: TextEvent): void {
    this.#assertNotStopped('text');
    if (event.sequence !== this.#nextSequence) {
      throw new RealtimeFailure(ErrorCode.invalidState, `expected text sequence ${this.#nextSequence}, got ${event.sequence}; frame ignored`, { path: 'sequence', stage: 'input' });
    }
    const chars = countChars(event.text);
    if (this.#bufferedChars + chars > LIMITS.segmentMaxChars) {
      throw new RealtimeFailure(ErrorCode.segmentTooLarge, `a segment holds at most ${LIMITS.segmentMaxChars} characters (${this.#bufferedChars} buffered, this text ${chars}); flush first`, { path: 'text', stage: 'input' });
    }
    this.#buffer.push(event.text);
    this.#bufferedChars += chars;
    this.#nextSequence++;
    this.port.send(
      'input_ack',
      {
        request_id: this.requestId,
        sequence: event.sequence,
        characters: chars,
        buffered_characters: this.#bufferedChars,
        remaining_capacity: LIMITS.segmentMaxChars - this.#bufferedChars,
      },
      event.event_id,
    );
  }

  /** First journal index at or after the cursor that is not completed: the segment a retry must re-send next. */
  #expectedIndex(): number {
    const segments = this.record.segments;
    for (let i = this.#cursor; i < segments.length; i++) if (segments[i]!.state !== SegmentState.completed && !this.#inFlight.has(i)) return i;
    return segments.length;
  }

  #flush(event: FlushEvent): void | Promise<void> {
    this.#assertNotStopped('flush');
    if (this.#bufferedChars === 0) throw new RealtimeFailure(ErrorCode.emptySegment, 'flush with no buffered text', { stage: 'flush' });
    const text = this.#buffer.join('');
    const characters = this.#bufferedChars;
    const known = this.record.segments.find((s) => s.segmentId === event.segment_id);
    if (known) return this.#reflush(event, known, text);
    const expected = this.#expectedIndex();
    if (expected < this.record.segments.length) {
      const missing = this.record.segments[expected]!;
      throw new RealtimeFailure(ErrorCode.idempotencyConflict, `segment ${missing.segmentId} (index ${expected}) must be re-sent before new segments`, { terminal: true, path: 'segment_id', stage: 'flush' });
    }
    return this.#reserve(characters, event.segment_id).then((reservation) => {
      if (!reservation) return;
      const segment: JournalSegment = { segmentId: event.segment_id, index: this.record.segments.length, text, characters, state: SegmentState.accepted, units: 0, audioBytes: 0, refId: reservation.refId };
      this.record.segments.push(segment);
      this.requests.save(this.record);
      this.#accept(event, segment, reservation);
    });
  }

  /** The hold of a segment; undefined (and given back) when the request ended while it was taken. */
  async #reserve(characters: number, segmentId: string): Promise<SegmentJob['reservation'] | undefined> {
    const reservation = await this.port.billing.reserve(characters, segmentRefId(this.port.account.userId, this.requestId, segmentId));
    if (this.#active) return reservation;
    this.port.billing.release(reservation);
    return undefined;
  }

  /** A flush of a segment_id the journal already holds. */
  #reflush(event: FlushEvent, segment: JournalSegment, text: string): void | Promise<void> {
    if (segment.text !== text) {
      throw new RealtimeFailure(ErrorCode.idempotencyConflict, `segment_id ${segment.segmentId} was already used with different text`, { terminal: true, path: 'segment_id', stage: 'flush' });
    }
    if (this.#inFlight.has(segment.index)) {
      throw new RealtimeFailure(ErrorCode.invalidState, `segment ${segment.segmentId} is already accepted and generating`, { path: 'segment_id', stage: 'flush' });
    }
    if (segment.state === SegmentState.completed) {
      this.#clearBuffer();
      this.#cursor = Math.max(this.#cursor, segment.index + 1);
      this.port.send('segment_completed', { request_id: this.requestId, segment_id: segment.segmentId, units: segment.units, audio_bytes: segment.audioBytes, replayed: true }, event.event_id);
      return;
    }
    const expected = this.#expectedIndex();
    if (segment.index !== expected) {
      throw new RealtimeFailure(ErrorCode.idempotencyConflict, `segment ${segment.segmentId} is at index ${segment.index} but index ${expected} must be re-sent first`, { terminal: true, path: 'segment_id', stage: 'flush' });
    }
    // Same refId as the first attempt: a segment that already delivered audio is not charged again.
    return this.#reserve(segment.characters, segment.segmentId).then((reservation) => {
      if (!reservation) return;
      segment.state = SegmentState.accepted;
      segment.refId = reservation.refId;
      this.requests.save(this.record);
      this.#accept(event, segment, reservation);
    });
  }

  #accept(event: FlushEvent, segment: JournalSegment, reservation: SegmentJob['reservation']): void {
    this.#clearBuffer();
    this.#cursor = segment.index + 1;
    const job: SegmentJob = { segmentId: segment.segmentId, index: segment.index, text: segment.text, characters: segment.characters, reservation, inReplyTo: event.event_id, hadAudio: false, released: false };
    this.#inFlight.set(segment.index, job);
    this.port.send('segment_accepted', { request_id: this.requestId, segment_id: segment.segmentId, characters: segment.characters, reserved_units: reservation.units }, event.event_id);
    this.#queue.enqueue(job);
  }

  #clearBuffer(): void {
    this.#buffer = [];
    this.#bufferedChars = 0;
  }

  #stop(event: StopEvent): void {
    this.#assertNotStopped('stop');
    this.#stopped = true;
    this.#stopEventId = event.event_id;
    if (this.#bufferedChars > 0) {
      this.port.send('warning', { request_id: this.requestId, code: WARNING_UNFLUSHED_TEXT, message: `stop discarded ${this.#bufferedChars} unflushed characters` }, event.event_id);
      this.#clearBuffer();
    }
    if (!this.#queue.busy) this.#complete();
  }

  #onFirstAudio(job: SegmentJob): void {
    const segment = this.record.segments[job.index]!;
    segment.units = job.reservation.units;
    this.requests.save(this.record);
  }

  #onCompleted(job: SegmentJob, result: PumpResult): void {
    const segment = this.record.segments[job.index]!;
    this.#inFlight.delete(job.index);
    segment.state = SegmentState.completed;
    segment.units = job.reservation.units;
    segment.audioBytes = result.bytes;
    if (storedAudioBytes(this.record) + result.bytes <= REALTIME_TUNING.maxStoredAudioBytesPerRequest) segment.audio = Buffer.concat(result.frames);
    this.requests.save(this.record);
    const billing = this.port.billing;
    this.port.send(
      'usage',
      { request_id: this.requestId, segment_id: job.segmentId, segment_units: segment.units, session_units: billing.committedUnits, quota_remaining: billing.quotaRemaining, audio_bytes: result.bytes },
      job.inReplyTo,
    );
    this.port.send('segment_completed', { request_id: this.requestId, segment_id: job.segmentId, units: segment.units, audio_bytes: result.bytes }, job.inReplyTo);
  }

  #complete(): void {
    if (!this.#active) return;
    this.#active = false;
    this.record.state = RequestState.completed;
    this.record.ownerSessionId = undefined;
    this.record.failure = undefined;
    this.requests.save(this.record);
    this.port.finish(FinishReason.completed, this.#stopEventId);
  }
}
