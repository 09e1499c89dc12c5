/**
 * The contract between `SpeechStream` and whatever carries its segments:
 * realtime reliable or simple sessions, and the HTTP fallbacks (sync, async,
 * compat). SpeechStream segments text and hands each segment to a transport;
 * the transport emits audio in sequence order and says when each segment is
 * complete. Failover (`auto`) moves the segments not yet completed to another
 * transport at a segment boundary.
 */
import type { EventEmitter } from 'eventemitter3';
import type { AudioChunk, AudioFormat, PcmInfo } from './protocol/audio.js';
import type { VoxpipeError } from './errors.js';

/** What `transport` of a speech stream may name: realtime, the HTTP routes, or `auto` (realtime failing over to sync HTTP). */
export const TRANSPORT_CHOICES = ['auto', 'realtime', 'sync', 'async', 'compat'] as const;
export type TransportChoice = (typeof TRANSPORT_CHOICES)[number];

export const TransportName = {
  realtime: 'realtime',
  sync: 'sync',
  async: 'async',
  compat: 'compat',
} as const;
export type TransportName = (typeof TransportName)[keyof typeof TransportName];

/** What the service confirmed when the request started (`ready`). */
export interface ReadyInfo extends PcmInfo {
  transport: TransportName;
  mode: 'simple' | 'reliable' | 'http';
  requestId: string;
  sessionId?: string;
  provider?: string;
  model: string;
  voiceId: string;
  format: AudioFormat;
}

/** One segment to speak. `segmentId` is the idempotency key (1 to 128 characters). */
export interface SegmentInput {
  segmentId: string;
  text: string;
}

export interface SegmentResult {
  segmentId: string;
  /** Billing units of the segment. */
  units: number;
  /** Audio bytes emitted for the segment. */
  audioBytes: number;
  /** Audio bytes the server says the segment carries, in the segment's own byte space (no stream header); absent when it does not say. */
  expectedBytes?: number;
  /** Which transport produced it (differs from the first under failover). */
  transport: TransportName;
}

export interface UsageInfo {
  segmentId: string;
  segmentUnits: number;
  sessionUnits: number;
  quotaRemaining: number;
  /** Absent when the deployment does not say. */
  audioBytes?: number;
}

export interface TransportSummary {
  requestId: string;
  units: number;
  /** Reconnect attempts made. */
  retries: number;
  /** Times the request was resumed on a new connection (reliable `retry_failed`). */
  resumed: number;
  segments: SegmentResult[];
}

/**
 * Audio as every transport hands it over: raw bytes of one
 * attempt at a segment, in order, tagged with the segment, the attempt and
 * where they start in that attempt's own byte space. The stream's one ledger
 * (`AudioLedger`, `splice.ts`; SpeechStream's) makes of them what the
 * listener gets; a transport never splices, counts or strips on its own.
 *
 * - `attempt`: a tag from `nextAttemptTag()`, unique in the process. One
 *   attempt is one generation of the segment's audio: a realtime connection,
 *   a stored file of the status route's manifest, one HTTP fetch of the
 *   segment. A failover is therefore a new attempt by construction (the new
 *   transport's tag differs): no special call from SpeechStream.
 * - `offset`: where `data` starts among the attempt's raw bytes of the
 *   segment (a stream header included). Consecutive chunks of an attempt
 *   are contiguous; the ledger drops a repeat (offset behind what it has) and
 *   refuses a hole (offset beyond it) with `audio_incomplete`.
 * - The stream header (format `wav`, `protocol/audio.ts`): a transport hands
 *   the bytes of an attempt as its protocol edge has them, a streaming
 *   header at the start of an attempt included. The ONE ledger strips every
 *   header except the stream's very first, once. (HTTP routes return whole
 *   files: their own headers, with real sizes and the layout, are read and
 *   replaced by the streaming header at the HTTP edge, `http-audio.ts`.)
 * - No `sequence`: the listener's numbering is the speech core's alone (a
 *   failover's transport would count from 1 again).
 * - The layout fields are what the audio says (its `audio` event, its WAV
 *   header, its Content-Type), never an assumption made before it came.
 */
export interface TransportAudio extends Omit<AudioChunk, 'sequence'> {
  /** The attempt that carried the bytes (`nextAttemptTag()`); a new tag starts a new attempt at the segment. */
  attempt: number;
  /** Where `data` starts in the attempt's raw bytes of the segment (a stream header included). */
  offset: number;
}

let attemptTags = 0;

/** A new attempt tag, unique in the process (so two transports never share one). */
export function nextAttemptTag(): number {
  return ++attemptTags;
}

/** What the listener has of a segment, as the stream's one ledger (`SegmentLedger`, splice.ts, which lies above this contract) counts it. */
export interface SegmentAudio {
  /** Every byte the listener got for the segment: the stream header and `restart` repeats included. */
  readonly emittedBytes: number;
  /** Audio bytes the listener has of the segment since its last restart (no header). */
  readonly audioBytes: number;
  /** Length of the stream header the current attempt began with (0: none). */
  readonly headerBytes: number;
  /** Where the current attempt's next raw bytes start (its stream header and audio so far). */
  readonly nextOffset: number;
  /** Audio bytes of the current attempt received (no header). */
  readonly attemptBytes: number;
}

/**
 * The stream's ledger as a transport may read it: a transport that must
 * know what the listener has (the reliable machine, deciding where a resume
 * starts and whether a segment is short) asks this instead of counting.
 */
export interface HeardAudio {
  /** The segment's counts (made at its first mention). */
  segment(segmentId: string): SegmentAudio;
}

/** Events every transport emits. */
export interface TransportEvents {
  ready: (info: ReadyInfo) => void;
  /** Raw tagged audio of each attempt at a segment, in order (see `TransportAudio`). */
  audio: (chunk: TransportAudio) => void;
  'segment-accepted': (segmentId: string) => void;
  'segment-completed': (result: SegmentResult) => void;
  usage: (usage: UsageInfo) => void;
  warning: (warning: { code: string; message: string }) => void;
  /** A reconnect succeeded and the request continues (reliable resume). */
  resumed: (info: { attempt: number; requestId: string; pendingSegments: string[] }) => void;
  /** `onPartialSegment: 'restart'`: the segment's audio starts again from its beginning. */
  discontinuity: (info: { segmentId: string; droppedBytes: number }) => void;
  /** A retryable failure; the transport is about to back off and retry. */
  retry: (info: { attempt: number; error: VoxpipeError; delayMs: number }) => void;
}

/**
 * A transport of segments. Calls come in this order: `open`, any number of
 * `send`, then `end` (or `abort` at any time). `send` may be called before the
 * previous segment completed: the transport queues, and keeps the protocol's
 * pacing rules itself. Its events are eventemitter3's: a listener may be
 * added with a context (`on(event, fn, context)`, as SpeechStream does), so a
 * transport of one's own extends eventemitter3's `EventEmitter`, not Node's.
 */
export interface SegmentTransport extends EventEmitter<TransportEvents> {
  readonly name: TransportName;
  /** Connect and start the request; resolves with `ready`. */
  open(signal?: AbortSignal): Promise<ReadyInfo>;
  /** Queue a segment. Resolves when it completed (its audio was all emitted). */
  send(segment: SegmentInput): Promise<SegmentResult>;
  /** No more segments: finish the request once all queued ones completed. */
  end(): Promise<TransportSummary>;
  /** Stop now (barge-in or abort): drop queued segments, end the request, emit no more audio. */
  abort(reason?: VoxpipeError): Promise<void>;
  /** Backpressure: stop reading audio from the network until `resume()`. */
  pause(): void;
  resume(): void;
  /** Segments queued or in flight, not yet completed, in order (for failover). */
  pending(): SegmentInput[];
  /**
   * While the transport waits for a slot of its deployment's budget
   * (`budget.ts`): settles when that wait ends, so the stream's writer waits
   * too. Absent or undefined: it does not wait.
   */
  queued?(): Promise<void> | undefined;
  /**
   * Whether the server sent audio of the segment, heard or not yet (a frame
   * held behind a missing sequence counts): it charged the segment at its
   * first audio (spec 6, rule 4), so a failover charges it again. Absent:
   * only what reached the listener tells.
   */
  audioArrived?(segmentId: string): boolean;
  /**
   * The stream that reads this transport's audio keeps the one ledger:
   * given it before `open`, a transport that needs to know what the
   * listener has asks it (and hands its audio raw). Unbound, such a
   * transport keeps an `AudioLedger` of its own for its direct listeners.
   */
  bindLedger?(ledger: HeardAudio): void;
}
