/**
 * A sink that plays PCM into nothing, at the pace of a real device: it keeps
 * a small device buffer (100 ms by default) that drains at the sample rate on
 * a clock, and holds each write's callback until the buffer has room, so a
 * writer is paced exactly as by a sound card. When a write arrives after the
 * buffer ran dry, that is an underrun (audible silence on a real device).
 * Machines here have no sound card, so benchmarks measure playback with it.
 */
import { pcmDurationMs, type PcmInfo } from '../protocol/audio.js';
import { BaseSink, type SinkOptions } from './base-sink.js';
import { systemClock, type Clock } from './clock.js';
import { PlayHead, type PlayedPosition } from './play-head.js';
import { SinkKind, type SinkResult } from './types.js';

export interface NullClockSinkOptions extends SinkOptions {
  /** Clock that drives playback; default the system clock. */
  clock?: Clock;
  /** Device buffer: audio queued ahead of the play head before writes wait; default 100 ms. */
  deviceBufferMs?: number;
  /** On `end()`, wait until the queued audio has played (as a device drains); default true. */
  drainOnEnd?: boolean;
}

/** Payload of the `'underrun'` event. */
export interface Underrun {
  /** Milliseconds since the first write. */
  atMs: number;
  /** Silence until audio arrived again, in ms. */
  gapMs: number;
  /** Audio played before the underrun, in ms. */
  playedMs: number;
}

/**
 * Plays s16le PCM in `pcm`'s layout on a clock. Events: `'underrun'` `(Underrun)`.
 * The first write starts playback; writes of zero bytes are ignored.
 */
export class NullClockSink extends BaseSink implements PlayedPosition {
  readonly kind = SinkKind.nullClock;
  private readonly clock: Clock;
  private readonly deviceBufferMs: number;
  private readonly drainOnEnd: boolean;
  /** Clock time of the first write; undefined until playback starts. */
  private startedAtMs: number | undefined;
  /** Clock time at which the queued audio will have played out. */
  private dryAtMs = 0;
  private playedMs = 0;
  private underrunCount = 0;
  private underrunTotalMs = 0;
  private cancelTimer: (() => void) | undefined;
  private readonly head: PlayHead;

  constructor(
    readonly pcm: PcmInfo,
    options: NullClockSinkOptions = {},
  ) {
    super(options);
    this.clock = options.clock ?? systemClock;
    this.deviceBufferMs = options.deviceBufferMs ?? 100; // ms
    this.drainOnEnd = options.drainOnEnd ?? true;
    this.head = new PlayHead(pcm, this.clock);
  }

  /** Bytes played so far: written, less what the device buffer still holds. */
  get playedBytes(): number {
    return this.head.playedBytes;
  }

  /** Times the device buffer ran dry before the end of the stream. */
  get underruns(): number {
    return this.underrunCount;
  }

  /** Audio queued in the device buffer now, in ms. */
  get bufferedMs(): number {
    return Math.max(0, this.dryAtMs - this.clock.now());
  }

  /** Audio written so far, in ms (played or queued). */
  get writtenMs(): number {
    return this.playedMs;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (chunk.length === 0) return callback();
    this.bytesIn += chunk.length;
    const nowMs = this.clock.now();
    if (this.startedAtMs === undefined) {
      this.startedAtMs = nowMs;
      this.dryAtMs = nowMs;
    } else if (nowMs > this.dryAtMs) {
      const gapMs = nowMs - this.dryAtMs;
      this.underrunCount++;
      this.underrunTotalMs += gapMs;
      this.dryAtMs = nowMs;
      this.emit('underrun', { atMs: nowMs - this.startedAtMs, gapMs, playedMs: this.playedMs } satisfies Underrun);
    }
    this.head.wrote(chunk.length);
    const chunkMs = pcmDurationMs(chunk.length, this.pcm);
    this.dryAtMs += chunkMs;
    this.playedMs += chunkMs;
    // A device accepts more only once its buffer has room again.
    this.after(this.dryAtMs - this.deviceBufferMs - nowMs, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.drainOnEnd || this.startedAtMs === undefined) return callback();
    this.after(this.dryAtMs - this.clock.now(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (error) this.head.stop();
    callback(error);
  }

  private after(delayMs: number, callback: () => void): void {
    if (delayMs <= 0) return callback();
    this.cancelTimer = this.clock.setTimer(() => {
      this.cancelTimer = undefined;
      callback();
    }, delayMs);
  }

  protected result(): SinkResult {
    return {
      kind: this.kind,
      bytesIn: this.bytesIn,
      pcm: this.pcm,
      durationMs: this.playedMs,
      underruns: this.underrunCount,
      underrunMs: this.underrunTotalMs,
    };
  }
}
