/**
 * What SpeechStream says: its options, events, summary, waterfalls and
 * barge-in report (the stream itself is `speech-stream.ts`).
 */
import type { VoxpipeError } from '../errors.js';
import type { ReadyInfo, SegmentResult, SegmentTransport, TransportName, UsageInfo } from '../transport.js';
import type { HeardSegment } from './heard.js';
import type { TokenSegmenterOptions } from './token-segmenter.js';
import type { WordTiming } from './word-timing.js';

/** Times of one segment, in ms since the stream was created (`performance.now()` based). */
export interface SegmentWaterfall {
  segmentId: string;
  characters: number;
  /** First character of the segment written to the stream. */
  textReceivedMs: number;
  /** Handed to the transport. */
  sentMs?: number;
  /** First `text` frame on the wire (realtime reliable). */
  wireSentMs?: number;
  /** `input_ack` of the segment's last `text` frame (realtime reliable). */
  inputAckMs?: number;
  /** `segment_accepted` (realtime reliable). */
  acceptedMs?: number;
  /** First audio byte of the segment received. */
  firstAudioMs?: number;
  /** First audio byte of the segment read by the consumer (sink). */
  firstReadMs?: number;
  completedMs?: number;
  transport?: TransportName;
}

/** Times of the whole stream, ms since creation. */
export interface StreamWaterfall {
  openStartMs?: number;
  readyMs?: number;
  /** First text written. */
  firstTextMs?: number;
  /** First audio byte received. */
  firstAudioMs?: number;
  /** Time to first audio: first audio minus first text (or open start, whichever is later). */
  ttfaMs?: number;
  endMs?: number;
}

export interface SpeechStreamSummary {
  /** The first request's id. */
  requestId: string;
  /** Every request the stream used, in order (more than one when the text was longer than one request carries). */
  requestIds: string[];
  transport: TransportName;
  /** Transport that served each segment, in order. */
  segments: StreamSegmentResult[];
  units: number;
  /**
   * Units charged a second time by failover: a segment whose audio had begun
   * on the failed transport (realtime commits the charge at the first audio,
   * spec 6 rule 4) is generated again, and charged again, by the fallback.
   * Zero without failover, and whenever the realtime request could resume.
   */
  rechargedUnits: number;
  bytes: number;
  retries: number;
  resumed: number;
  failovers: number;
  ready: ReadyInfo | undefined;
  waterfall: StreamWaterfall;
}

export interface InterruptReport {
  /** Segments whose audio was delivered to the reader, whole or in part, and what of each was heard (`heardAt`, `heard.ts`). */
  spoken: HeardSegment[];
  /** Characters of the segments delivered whole. */
  spokenChars: number;
  /** The text heard, to the word: the segments delivered whole, then the words of the partial one whose estimated end was delivered. */
  heardText: string;
  /** Confidence, 0 to 1, in the word boundary `heardText` ends at. */
  heardConfidence: number;
  /** Text written but never spoken (dropped). */
  unspokenText: string;
}

export interface SpeechStreamOptions {
  /** The transport (already constructed, not opened). */
  transport: SegmentTransport;
  /**
   * Failover: builds the transport that takes over the segments not yet
   * completed; `bytesEmitted` > 0 means the stream already started (e.g. a
   * wav stream already sent its header). Default none.
   */
  fallback?: (context: { bytesEmitted: number }) => SegmentTransport;
  segmenter?: TokenSegmenterOptions;
  /** Text written but not yet completed, in characters, before writes wait. Default 20_000. */
  maxBufferedChars?: number;
  /** Audio held for the reader, in bytes, before the transport is paused. Default 256 KiB. */
  maxBufferedAudioBytes?: number;
  /** Prefix of generated segment ids; default a random 8-character one. */
  segmentIdPrefix?: string;
  /**
   * Texts longer than one request may carry: builds the transport of a new
   * request (a new request id). The stream opens it ahead, once the current
   * request is well into its `requestUnits`, and moves on to it at a segment
   * boundary (the segmenter cuts later segments at sentence ends) when the
   * next segment would pass them, after the current request's audio is all
   * in. Default none: one request carries all the text.
   */
  nextRequest?: () => SegmentTransport;
  /** Units (characters, `countChars`) one request carries before the stream moves on to the next; default `DEFAULT_REQUEST_UNITS` (95 % of the 100,000 of a session). */
  requestUnits?: number;
  signal?: AbortSignal;
}

/** Typed events of SpeechStream (besides the Duplex ones). */
export interface SpeechStreamEventMap {
  ready: [ReadyInfo];
  /** A segment was cut from the text written (before it is sent): its id and exact text, spaces kept (captions, transcripts). */
  'segment-start': [{ segmentId: string; text: string }];
  'first-audio': [{ ttfaMs: number }];
  segment: [StreamSegmentResult];
  usage: [UsageInfo];
  warning: [{ code: string; message: string }];
  discontinuity: [{ segmentId: string; droppedBytes: number }];
  resumed: [{ attempt: number; requestId: string; pendingSegments: string[] }];
  retry: [{ attempt: number; error: VoxpipeError; delayMs: number }];
  /** `recharged`: pending segments whose audio had begun, which the new transport generates and charges again. */
  failover: [{ from: TransportName; to: TransportName; pendingSegments: string[]; recharged: string[]; error: VoxpipeError }];
}

/** One segment of the summary. */
export type StreamSegmentResult = SegmentResult & {
  /** Audio bytes of the segment the listener got, in the segment's own byte space (no stream header; since its last restart). */
  receivedBytes: number;
  waterfall: SegmentWaterfall;
  /** Units of this segment charged again after a failover (see `rechargedUnits`); absent when none. */
  recharged?: number;
  /** Where each word lies in the segment's audio, estimated from it (pcm and wav; mp3 and opus once decoded, set shortly after the `segment` event: `SpeechStream.wordTimings`). */
  words?: WordTiming[];
};
