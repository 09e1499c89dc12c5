/**
 * The audio pump of one segment: engine chunks (s16le PCM) through the
 * request's encoder into `audio` frames.
 *
 * Latency first: the encoded output of the engine's first chunk goes out at
 * once, whatever its size. Later output is coalesced into frames of
 * REALTIME_TUNING.coalesceBytes to maxAudioFrameBytes, and never waits more
 * than coalesceDelayMs for more engine output. Before pulling each engine
 * chunk the pump waits while the socket's send queue is over its high-water
 * mark, so a slow reader never makes the server buffer without bound.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../protocol/constants.js';
import type { SpeechEngine, SynthesisOptions } from '../engines/types.js';
import { RealtimeFailure } from './failure.js';
import { REALTIME_TUNING } from './tuning.js';

/** The part of the request's stream encoder the pump uses. */
export interface SegmentEncoder {
  /** Encode PCM; returns the encoded bytes ready to send (possibly empty). */
  write(pcm: Buffer): Buffer;
  /** End the current segment on a boundary a decoder can stop at; returns what is left to send. */
  endSegment(): Buffer;
}

export interface PumpOptions {
  engine: SpeechEngine;
  text: string;
  synthesis: Omit<SynthesisOptions, 'signal'>;
  encoder: SegmentEncoder;
  /** Aborted when the connection ends: the pump stops without sending more. */
  signal: AbortSignal;
  /** Extra delay before each engine chunk (fault injection); read per chunk. */
  latencyMs(): number;
  /** Throw `generation_failed` once this many chunks were produced (fault injection); undefined: never. */
  failAfterChunks: number | undefined;
  /** Send one audio frame. */
  emit(frame: Buffer): void;
  /** Keep the frames in the result (for the manifest); default false. */
  keepFrames?: boolean;
  /** Resolve when the socket can take more (backpressure). */
  waitWritable(): Promise<void>;
}

export interface PumpResult {
  /** Bytes sent in `audio` frames for the segment. */
  bytes: number;
  /** Every frame sent, in order, when `keepFrames` was set; else empty. */
  frames: Buffer[];
}

/** Thrown into the engine path by an injected `engineFailure` fault. */
export class InjectedEngineFailure extends Error {
  override name = 'InjectedEngineFailure';
}

/** Generate one segment's audio and send it. Throws RealtimeFailure on engine or delivery failure. */
export async function pumpSegment(o: PumpOptions): Promise<PumpResult> {
  const result: PumpResult = { bytes: 0, frames: [] };
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let firstSent = false;
  let timer: NodeJS.Timeout | undefined;

  const send = (frame: Buffer): void => {
    if (o.signal.aborted || frame.length === 0) return;
    result.bytes += frame.length;
    if (o.keepFrames) result.frames.push(frame);
    o.emit(frame);
  };
  const flushPending = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pendingBytes === 0) return;
    const all = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    for (let at = 0; at < all.length; at += REALTIME_TUNING.maxAudioFrameBytes) send(all.subarray(at, at + REALTIME_TUNING.maxAudioFrameBytes));
  };
  const add = (bytes: Buffer): void => {
    if (bytes.length === 0) return;
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (!firstSent) {
      firstSent = true;
      flushPending();
    } else if (pendingBytes >= REALTIME_TUNING.coalesceBytes) {
      flushPending();
    } else {
      timer ??= setTimeout(flushPending, REALTIME_TUNING.coalesceDelayMs);
    }
  };

  const iterator = o.engine.synthesize(o.text, { ...o.synthesis, signal: o.signal })[Symbol.asyncIterator]();
  let chunks = 0;
  try {
    for (;;) {
      await o.waitWritable();
      if (o.signal.aborted) return result;
      if (o.failAfterChunks !== undefined && chunks >= o.failAfterChunks) throw new InjectedEngineFailure('injected engine failure');
      const latency = o.latencyMs();
      if (latency > 0) await sleep(latency, undefined, { signal: o.signal }).catch(() => undefined);
      const next = await iterator.next();
      if (o.signal.aborted) return result;
      if (next.done) break;
      chunks++;
      const wasFirst = !firstSent;
      add(o.encoder.write(next.value));
      // Let the first frame reach the socket before encoding more: a fast
      // engine yields rarely, and an mp3/opus encoder would otherwise spend
      // the rest of the turn on later audio while the first frame waits.
      if (wasFirst && firstSent) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    add(o.encoder.endSegment());
    flushPending();
    return result;
  } catch (err) {
    if (err instanceof RealtimeFailure) throw err;
    if (o.signal.aborted) return result;
    const why = err instanceof InjectedEngineFailure ? 'injected engine failure' : `speech engine failed: ${String((err as Error)?.message ?? err).slice(0, 200)}`;
    throw new RealtimeFailure(ErrorCode.generationFailed, why, { terminal: true, retryable: false, stage: 'generation' });
  } finally {
    if (timer) clearTimeout(timer);
    // Stop the engine when we leave early (abort, failure).
    void iterator.return?.().catch(() => undefined);
  }
}
