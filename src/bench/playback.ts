/**
 * Playback underruns of a run: the decoded audio, at the times it arrived,
 * played through a clock-paced `NullClockSink` (a 100 ms device buffer,
 * playback starting at the first audio). The clock is a `ManualClock` moved
 * to each arrival time in turn, so the sink sees exactly what it would have
 * seen in real time, and a run need not last as long as its audio. This
 * equals real-time playback as long as the player's backpressure would not
 * have changed when audio arrived, which holds whenever audio arrives faster
 * than it plays (a slower stream is exactly what underruns reveal).
 */
import type { PcmInfo } from '../protocol/audio.js';
import { pcmDurationMs } from '../protocol/audio.js';
import { ManualClock } from '../sinks/clock.js';
import { NullClockSink } from '../sinks/null-clock.js';

/** Decoded PCM bytes that became available at `atMs` (any monotonic origin). */
export interface Arrival {
  atMs: number;
  bytes: number;
}

export interface PlaybackResult {
  /** Times the device buffer ran dry before the end. */
  underruns: number;
  /** Silence heard in total, ms. */
  underrunMs: number;
  /** Audio played, ms. */
  audioMs: number;
}

/** Device buffer of the simulated player, ms (NullClockSink's default). */
export const DEVICE_BUFFER_MS = 100;

/** Replay `arrivals` through a NullClockSink on a manual clock. */
export async function replayPlayback(arrivals: readonly Arrival[], pcm: PcmInfo, deviceBufferMs = DEVICE_BUFFER_MS): Promise<PlaybackResult> {
  const first = arrivals[0];
  if (!first) return { underruns: 0, underrunMs: 0, audioMs: 0 };
  const clock = new ManualClock(first.atMs);
  const sink = new NullClockSink(pcm, { clock, deviceBufferMs, drainOnEnd: false, highWaterMark: Number.MAX_SAFE_INTEGER });
  // The sink reads only lengths: one zeroed buffer serves every write.
  const largest = arrivals.reduce((m, a) => Math.max(m, a.bytes), 0);
  const zeros = Buffer.alloc(largest);
  let totalBytes = 0;
  for (const a of arrivals) {
    if (a.atMs > clock.now()) clock.advance(a.atMs - clock.now());
    if (a.bytes > 0) sink.write(zeros.subarray(0, a.bytes));
    totalBytes += a.bytes;
  }
  // Let the writes still queued behind a full device buffer go in, then stop.
  clock.advance(pcmDurationMs(totalBytes, pcm) + deviceBufferMs + 1);
  sink.end();
  const result = await sink.done;
  return { underruns: result.underruns ?? 0, underrunMs: result.underrunMs ?? 0, audioMs: result.durationMs ?? pcmDurationMs(totalBytes, pcm) };
}
