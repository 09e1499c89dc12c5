/**
 * The vocabulary of the reliable state machine: what goes in (`MachineInput`,
 * one `handle()` call each), what comes out (`MachinePort`, the only way the
 * machine acts on the world) and what it reports (`MachineEvent`).
 */
import type { VoxpipeError } from '../../errors.js';
import type { ClientEvent, ReadyEvent, RequestStatus, ServerEvent, StartRequest } from '../../protocol/events.js';
import type { BackoffPolicy } from '../../backoff.js';
import type { OverloadWatch } from '../budgets.js';

import { PartialSegmentPolicy } from '../../splice.js';
import type { SegmentAudio } from '../../transport.js';
export type { SegmentAudio };

export { PartialSegmentPolicy };

/** Where the reliable machine is. */
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

/** The phases with a connection up. */
export const CONNECTED_PHASES: ReadonlySet<Phase> = new Set([Phase.starting, Phase.running, Phase.stopping]);

/** Journal state of one segment. */
export const SegmentState = {
  /** Known to the client only. */
  queued: 'queued',
  /** Some of its `text` frames were sent on the current connection. */
  sending: 'sending',
  /** `flush` sent. */
  flushed: 'flushed',
  /** `segment_accepted` received. */
  accepted: 'accepted',
  /** `segment_completed` received (or its audio recovered from the manifest): never sent again. */
  completed: 'completed',
} as const;
export type SegmentState = (typeof SegmentState)[keyof typeof SegmentState];

/** The machine's timers. */
export const TimerId = {
  /** Backoff before the next recovery step. */
  backoff: 'backoff',
  /** `start` sent, no `ready` yet. */
  start: 'start',
  /** The status route said `running`: read it again later. */
  statusPoll: 'status-poll',
  /**
   * The machine waits on the server (an `input_ack`, audio and a
   * `segment_completed`, the `finish` after `stop`): one slice of the budget
   * (`progressTimeoutMs`, or `finishTimeoutMs` after `stop`); the machine
   * stalls once `PROGRESS_SLICES` slices in a row brought no progress.
   * Not armed while the listener's reader is paused (backpressure).
   */
  progress: 'progress',
  /** A read of the request-status route is out, unanswered for `statusTimeoutMs`. */
  status: 'status',
  /** One recovery (from its first retry until progress) ran longer than `maxResumeMs`. */
  resumeDeadline: 'resume-deadline',
} as const;
export type TimerId = (typeof TimerId)[keyof typeof TimerId];

/** Waterfall stages the machine marks per segment; the session stamps them with the clock. */
export const WaterfallStage = {
  sent: 'sent',
  inputAck: 'input_ack',
  accepted: 'segment_accepted',
  firstAudio: 'first_audio',
  completed: 'completed',
} as const;
export type WaterfallStage = (typeof WaterfallStage)[keyof typeof WaterfallStage];

/** Result of reading the request-status route. */
export type StatusResult =
  | { kind: 'found'; status: RequestStatus }
  /** 404: the service never registered the request. */
  | { kind: 'not-found' }
  | { kind: 'error'; error: VoxpipeError };

/** Result of downloading one segment's audio from the manifest. */
export type SegmentAudioResult = { kind: 'ok'; data: Uint8Array } | { kind: 'error'; error: VoxpipeError };

/** Every input of the machine. */
export type MachineInput =
  /** The user opened the session: connect and start the request. */
  | { type: 'open' }
  /** The transport asked for with `openTransport()` is connected and authenticated. */
  | { type: 'transport-opened' }
  /** The transport asked for could not be opened (handshake refused, network, timeout). */
  | { type: 'transport-failed'; error: VoxpipeError }
  /** A decoded server event from the current transport. */
  | { type: 'frame'; event: ServerEvent }
  /** The current transport closed (not sent after `closeTransport()`). */
  | { type: 'transport-closed'; code: number; reason: string; wasClean: boolean; error?: VoxpipeError }
  | { type: 'timer'; id: TimerId }
  /** The user queued a segment (text already within the protocol's limits). */
  | { type: 'segment-queued'; segmentId: string; text: string }
  /** The user has no more segments: `stop` once all completed. */
  | { type: 'stop-requested' }
  /** Barge-in or abort: stop now, emit nothing more. */
  | { type: 'abort-requested'; reason: VoxpipeError }
  | { type: 'status-fetched'; result: StatusResult }
  | { type: 'audio-fetched'; segmentId: string; result: SegmentAudioResult }
  /** The listener stopped (`paused: true`) or restarted reading audio: no progress deadline while it is paused. */
  | { type: 'reader'; paused: boolean };

/**
 * Audio as the machine hands it over, in order: raw bytes of one attempt at
 * a segment (a stream header and bytes the listener already has included),
 * for the listener's ledger (`AudioLedger`) to splice. The session passes it
 * on as a `TransportAudio` (`transport.ts`), the attempt number mapped to a
 * process-unique tag. It carries no output sequence: the listener's is
 * numbered once, by the stream that reads it.
 */
export interface MachineAudio {
  segmentId: string;
  /** The attempt that carried them: one tag per connection, one per stored file of the manifest. */
  attempt: number;
  /** Where they start in the attempt's bytes of the segment (raw, a stream header included): where the ledger has the attempt up to. */
  offset: number;
  data: Uint8Array;
}


/** A completed segment as the machine reports it. */
export interface MachineSegmentResult {
  segmentId: string;
  units: number;
  /** Bytes emitted for the segment, including a WAV stream header and, under `restart`, repeated bytes. */
  audioBytes: number;
  /** Audio bytes the server says the segment carries (no stream header); absent when it does not say. */
  expectedBytes?: number;
}

/** What the machine reports to the session. */
export type MachineEvent =
  | { type: 'ready'; ready: ReadyEvent }
  | { type: 'resumed'; attempt: number; requestId: string; pendingSegments: string[] }
  | { type: 'retry'; attempt: number; error: VoxpipeError; delayMs: number }
  | { type: 'segment-accepted'; segmentId: string }
  | { type: 'segment-completed'; result: MachineSegmentResult }
  | { type: 'usage'; segmentId: string; segmentUnits: number; sessionUnits: number; quotaRemaining: number; audioBytes?: number }
  | { type: 'warning'; code: string; message: string }
  | { type: 'mark'; segmentId: string; stage: WaterfallStage }
  | { type: 'finished'; summary: MachineSummary }
  | { type: 'failed'; error: VoxpipeError };

export interface MachineSummary {
  requestId: string;
  units: number;
  /** Recovery attempts (backoffs) made. */
  retries: number;
  /** Times the request continued on a new connection or from the manifest. */
  resumed: number;
  /** Reads of the request-status route. */
  statusReads: number;
  segments: MachineSegmentResult[];
}

/** Everything the machine does to the world goes through here. */
export interface MachinePort {
  sendFrame(event: ClientEvent): void;
  /** Hand audio to the listener's ledger (synchronously: `audioOf` counts it on return). */
  emitAudio(audio: MachineAudio): void;
  /** What the listener has of a segment, and where its current attempt stands (its ledger's counts): the machine keeps none of its own. */
  audioOf(segmentId: string): SegmentAudio;
  emit(event: MachineEvent): void;
  startTimer(id: TimerId, ms: number): void;
  cancelTimer(id: TimerId): void;
  /** Connect and authenticate; answer with `transport-opened` or `transport-failed`. */
  openTransport(): void;
  /** Close the current transport and forget it: no input may come from it afterwards. */
  closeTransport(code: number, reason: string): void;
  /** Read `GET {rt_http_url}/v2/tts/requests/{id}`; answer with `status-fetched`. */
  fetchStatus(requestId: string): void;
  /** Download a manifest entry's audio; answer with `audio-fetched`. */
  fetchSegmentAudio(segmentId: string, url: string): void;
  /** A number in [0, 1) for backoff jitter. */
  random(): number;
}

/**
 * The reliable machine's options: the one place each recovery bound is
 * documented. The shells take them as they are (`ReliableSessionOptions`
 * extends this type, `BrowserSessionOptions` picks from it, `speech.ts`'s
 * `RealtimeTuning` picks from the session's) and pass them on with
 * `defined()`; each default is set once, in `RECOVERY_DEFAULTS` (budgets.ts).
 */
export interface MachineOptions {
  /** Idempotency key of this generation, reused on every resume. */
  requestId: string;
  /** Generation parameters of `start.request`. */
  request: StartRequest;
  /** Default: `continue` for pcm and wav, `restart` for mp3 and opus. */
  onPartialSegment?: PartialSegmentPolicy;
  /**
   * Recovery attempts of one recovery before giving up; default 6. The count
   * starts again only once a resumed connection made progress (new audio
   * released or a segment completed), not at a mere `ready`.
   */
  maxRetries?: number;
  /** Longest one recovery may take, from its first failure until progress; default 60_000 ms. */
  maxResumeMs?: number;
  /**
   * Longest quiet while the machine waits for a frame it needs (`input_ack`
   * for the text it sent, audio and `segment_completed` after a `flush`);
   * default 5_000 ms (`RECOVERY_DEFAULTS`, where the reasons are). Detected
   * within 1.25 times the budget; then the attempt ends (status read, resume,
   * at most `maxStallResumes` times, then failure: failover under `auto`).
   * Only what moves the awaited thing is progress: a matching `input_ack`,
   * `segment_accepted`, audio or `usage` of a pending segment. Keep-alive
   * `pong`s, warnings, repeats and frames about other segments are not. A
   * paused reader stops the clock.
   */
  progressTimeoutMs?: number;
  /** Longest wait for `finish` after `stop` (every segment completed already); default 2_000 ms. */
  finishTimeoutMs?: number;
  /**
   * Deadline of one read of the request-status route; default 3_000 ms. A
   * read that does not answer in time ends the recovery with a
   * `TimeoutError` (failover under `auto`): the route is not retried.
   */
  statusTimeoutMs?: number;
  /**
   * Resumes after a stall (quiet past `progressTimeoutMs`/`finishTimeoutMs`,
   * or a frame the machine needs but cannot use, such as an `input_ack` for a
   * sequence it never sent or a `segment_completed` for a segment it did not
   * flush) until a segment completes on the wire again; default 1. The next
   * stall fails (`TimeoutError`, or `ResumeError` `retries_exhausted`).
   */
  maxStallResumes?: number;
  /**
   * Progress of every stream of this process on the same server origin
   * (`new OverloadWatch(serverActivity(url))`): a slice in which another
   * stream progressed is busy, not quiet, for at most `OVERLOAD_MAX_BUDGETS`
   * budgets (overload is not death, src/realtime/budgets.ts). Absent: every
   * slice without own progress is quiet.
   */
  overload?: OverloadWatch;
  /** `audio` frames held while an earlier `sequence` is missing; default 16 (`DEFAULT_REORDER_WINDOW_FRAMES`). */
  reorderWindowFrames?: number;
  /** Delay between recovery attempts; default base 200 ms, factor 2, cap 5_000 ms, jitter 0.5. */
  backoff?: Partial<BackoffPolicy>;
  /** Reads of a `running` request before giving up; default 20. */
  maxStatusPolls?: number;
  /** Wait for `ready` after `start`; default 10_000 ms. */
  startTimeoutMs?: number;
  /** Prefix of every `event_id` the machine makes (unique per session); default `ev`. */
  eventIdPrefix?: string;
}

export { ResumeErrorCode } from '../../protocol/codes.js';
