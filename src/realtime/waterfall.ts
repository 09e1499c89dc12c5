/**
 * Latency waterfall of realtime segments and sessions.
 * Times are `performance.now()` milliseconds; a stage not reached is absent.
 */
import type { SegmentResult } from '../transport.js';
import { WaterfallStage } from './reliable/types.js';

/**
 * When each wire stage of a realtime segment happened (first occurrence; a
 * resumed segment keeps its first times). `SpeechStream`'s `SegmentWaterfall`
 * is the stream's view, which takes these over.
 */
export interface WireWaterfall {
  /** `send()` called. */
  queuedMs?: number;
  /** First `text` frame sent. */
  sentMs?: number;
  /** `input_ack` of its last `text` frame. */
  inputAckMs?: number;
  segmentAcceptedMs?: number;
  /** First audio byte released to the listener. */
  firstAudioMs?: number;
  completedMs?: number;
}

/** Session-level times. */
export interface SessionTimings {
  /** `open()` called. */
  openMs?: number;
  /** First WebSocket connection authenticated. */
  authenticatedMs?: number;
  /** First `ready`. */
  readyMs?: number;
  /** First audio byte of the request. */
  firstAudioMs?: number;
}

/** A completed segment with its waterfall. */
export interface RealtimeSegmentResult extends SegmentResult {
  waterfall: WireWaterfall;
}

const FIELD: Record<WaterfallStage, keyof WireWaterfall> = {
  [WaterfallStage.sent]: 'sentMs',
  [WaterfallStage.inputAck]: 'inputAckMs',
  [WaterfallStage.accepted]: 'segmentAcceptedMs',
  [WaterfallStage.firstAudio]: 'firstAudioMs',
  [WaterfallStage.completed]: 'completedMs',
};

/** Record `stage` at `atMs` unless already recorded. */
export function markStage(waterfall: WireWaterfall, stage: WaterfallStage, atMs: number): void {
  const field = FIELD[stage];
  waterfall[field] ??= atMs;
}
