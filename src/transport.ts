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

/** Events every transport emits. */
export interface TransportEvents {
  ready: (info: ReadyInfo) => void;
  /** Audio in sequence order. Never emitted twice for the same bytes. */
  audio: (chunk: AudioChunk) => void;
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
 * pacing rules itself.
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
}
