/**
 * Where a playing sink's play head is: the bytes of its input actually played.
 * Devices and player programs do not say how far they got,
 * so the play head follows a clock: playback starts at the first write and
 * runs at the PCM's rate; when writes fall behind (an underrun), it waits
 * for the next one. It never passes the bytes written.
 */
import { frameBytes, type PcmInfo } from '../protocol/audio.js';
import { systemClock, type Clock } from './clock.js';

/** A sink that plays and says how far: what the heard-text cut reads. */
export interface PlayedPosition {
  /** Bytes of the sink's input played so far (whole frames; never more than written). */
  readonly playedBytes: number;
}

/** The play head of PCM written to a device that plays it at its rate. */
export class PlayHead {
  readonly #pcm: PcmInfo;
  readonly #clock: Clock;
  readonly #bytesPerMs: number;
  #written = 0;
  /** Clock time at which everything written will have played; undefined before the first write. */
  #dryAtMs: number | undefined;
  /** Frozen position once playback stopped (destroyed): a device stops at once. */
  #stopped: number | undefined;

  constructor(pcm: PcmInfo, clock: Clock = systemClock) {
    this.#pcm = pcm;
    this.#clock = clock;
    this.#bytesPerMs = (pcm.sampleRate * frameBytes(pcm)) / 1000;
  }

  /** `bytes` were handed to the device now. */
  wrote(bytes: number): void {
    if (this.#stopped !== undefined || bytes <= 0) return;
    const now = this.#clock.now();
    // The device ran dry before this write: it resumes playing now.
    if (this.#dryAtMs === undefined || now > this.#dryAtMs) this.#dryAtMs = now;
    this.#dryAtMs += bytes / this.#bytesPerMs;
    this.#written += bytes;
  }

  /** Playback stopped (aborted): the position stays where it is. */
  stop(): void {
    if (this.#stopped === undefined) this.#stopped = this.playedBytes;
  }

  /** Bytes written, played or queued. */
  get writtenBytes(): number {
    return this.#written;
  }

  get playedBytes(): number {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#dryAtMs === undefined) return 0;
    const queuedBytes = Math.max(0, this.#dryAtMs - this.#clock.now()) * this.#bytesPerMs;
    const frame = frameBytes(this.#pcm);
    const played = Math.max(0, this.#written - queuedBytes);
    return Math.min(this.#written, Math.floor(played / frame) * frame);
  }
}
