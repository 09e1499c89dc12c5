/**
 * The vocabulary of the simple-mode state machine, as the reliable one's
 * (`../reliable/types.ts`): what goes in (`SimpleInput`, one `handle()` call
 * each), what comes out (`SimplePort`, the only way the machine acts on the
 * world) and what it reports (`SimpleEvent`).
 */
import type { VoxpipeError } from '../../errors.js';
import type { ClientEvent, ReadyEvent, ServerEvent, StartRequest } from '../../protocol/events.js';
import type { MachineAudio, MachineSegmentResult, SegmentAudio } from '../reliable/types.js';

export type { MachineAudio, MachineSegmentResult, SegmentAudio };

/** The machine's timers. */
export const SimpleTimerId = {
  /** `start` sent, no `ready` yet (`startTimeoutMs`). */
  start: 'start',
  /** After the commit: one slice of `progressTimeoutMs` (`PROGRESS_SLICES` quiet slices in a row fail the request). */
  progress: 'progress',
} as const;
export type SimpleTimerId = (typeof SimpleTimerId)[keyof typeof SimpleTimerId];

/** Every input of the machine. */
export type SimpleInput =
  /** The user opened the session: connect and start the request. */
  | { type: 'open' }
  /** The transport asked for with `openTransport()` is connected and authenticated. */
  | { type: 'transport-opened' }
  /** The transport asked for could not be opened (handshake refused, network, timeout). */
  | { type: 'transport-failed'; error: VoxpipeError }
  /** A decoded server event from the transport. */
  | { type: 'frame'; event: ServerEvent }
  /** The transport closed (not sent after `closeTransport()`). */
  | { type: 'transport-closed'; code: number; reason: string; wasClean: boolean; error?: VoxpipeError }
  | { type: 'timer'; id: SimpleTimerId }
  /** The user queued a part of the request (checked with `refusal()` first). */
  | { type: 'segment-queued'; segmentId: string; text: string }
  /** The user has no more parts: commit the last one (or end at once when there is none). */
  | { type: 'stop-requested' }
  /** Abort: stop now, emit nothing more. */
  | { type: 'abort-requested'; reason: VoxpipeError }
  /** The listener stopped (`paused: true`) or restarted reading audio: no deadline while it is paused. */
  | { type: 'reader'; paused: boolean };

/** What the machine reports to its shell. */
export type SimpleEvent =
  | { type: 'ready'; ready: ReadyEvent }
  | { type: 'warning'; code: string; message: string }
  /** At `finish`, one per part in order: the last carries the request's units and bytes, the others zero. */
  | { type: 'segment-completed'; result: MachineSegmentResult }
  | { type: 'finished'; summary: SimpleMachineSummary }
  | { type: 'failed'; error: VoxpipeError };

export interface SimpleMachineSummary {
  /** The request's id (`ready`'s, else the one asked for, else empty). */
  requestId: string;
  units: number;
  /** Bytes of the request's audio the listener got, as its ledger counts them (a stream header included). */
  audioBytes: number;
  segments: MachineSegmentResult[];
}

/** Everything the machine does to the world goes through here. */
export interface SimplePort {
  sendFrame(event: ClientEvent): void;
  /** Hand audio over: raw bytes of the request, tagged with the part that committed it, attempt 1, to the listener's ledger (synchronously: `audioOf` counts it on return). */
  emitAudio(audio: MachineAudio): void;
  /** What the listener has of a part, as its ledger counts it: the machine keeps no count of its own. */
  audioOf(segmentId: string): SegmentAudio;
  emit(event: SimpleEvent): void;
  startTimer(id: SimpleTimerId, ms: number): void;
  cancelTimer(id: SimpleTimerId): void;
  /** Connect and authenticate; answer with `transport-opened` or `transport-failed`. */
  openTransport(): void;
  /** Close the transport and forget it: no input may come from it afterwards. */
  closeTransport(code: number, reason: string): void;
}

export interface SimpleMachineOptions {
  request: StartRequest;
  /** Sent as `start.request_id`; default: the server makes one. */
  requestId?: string;
  /** `start` to `ready`; default 10_000 ms (`RECOVERY_DEFAULTS`). */
  startTimeoutMs?: number;
  /**
   * After the commit, longest quiet before failing with a retryable
   * TimeoutError; default `RECOVERY_DEFAULTS.progressTimeoutMs`. Only audio,
   * `finish` and `error` are progress. Not while the reader is paused.
   */
  progressTimeoutMs?: number;
  /** `audio` frames held while an earlier `sequence` is missing; default 16 (`DEFAULT_REORDER_WINDOW_FRAMES`). */
  reorderWindowFrames?: number;
  /** Prefix of every `event_id` the machine makes; default `simple`. */
  eventIdPrefix?: string;
}
