/**
 * MP3 for the `mp3` wire format, with `@breezystack/lamejs` (pure JS LAME,
 * CBR, bit reservoir disabled). Every segment is a complete LAME stream:
 * `endSegment()` flushes the encoder and the next segment starts a fresh one,
 * so each segment ends on a frame boundary, holds all of its audio, decodes on
 * its own and the concatenation is a valid mp3 stream. The price is ~50 ms of
 * encoder delay and padding at each segment boundary.
 */
import { Mp3Encoder } from '@breezystack/lamejs';
import type { PcmInfo } from '../../protocol/audio.js';
import { Int16Reader } from './pcm.js';

/** Options of `Mp3SegmentEncoder`. */
export interface Mp3EncoderOptions {
  /** Constant bitrate in kbps; default 48 below 32 kHz (MPEG-2 rates), else 64. */
  kbps?: number;
}

/**
 * Samples per channel handed to LAME at once. lamejs has a large cost per
 * call: 20 ms chunks cost about twice the CPU of 1152-sample blocks (one
 * MPEG-1 frame, two MPEG-2 frames), and LAME would hold most of it back anyway.
 */
const BLOCK_SAMPLES = 1152;

function toBuffer(data: Int8Array | Uint8Array): Buffer {
  // lamejs returns a fresh Int8Array for each call: a view is enough.
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** Encodes s16le PCM (mono, or stereo written in whole frames) to MP3, one LAME stream per segment. */
export class Mp3SegmentEncoder {
  readonly #info: PcmInfo;
  readonly #kbps: number;
  readonly #reader = new Int16Reader();
  readonly #block: Int16Array; // interleaved samples waiting for a full block
  #blockLength = 0;
  #lame: Mp3Encoder | undefined;

  constructor(info: PcmInfo, options: Mp3EncoderOptions = {}) {
    if (info.bitDepth !== 16 || (info.channels !== 1 && info.channels !== 2)) {
      throw new RangeError(`mp3 needs 16-bit mono or stereo PCM, got ${info.bitDepth}-bit ${info.channels} channels`);
    }
    this.#info = info;
    this.#kbps = options.kbps ?? (info.sampleRate < 32_000 ? 48 : 64); // kbps
    this.#block = new Int16Array(BLOCK_SAMPLES * info.channels);
  }

  write(pcm: Uint8Array): Buffer {
    const samples = this.#reader.read(pcm);
    const out: Buffer[] = [];
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(samples.length - offset, this.#block.length - this.#blockLength);
      this.#block.set(samples.subarray(offset, offset + take), this.#blockLength);
      this.#blockLength += take;
      offset += take;
      if (this.#blockLength === this.#block.length) out.push(this.#encodeBlock());
    }
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
  }

  /** Flushes the segment's LAME stream; empty when nothing was written since the last boundary. */
  endSegment(): Buffer {
    const rest = this.#blockLength > 0 ? this.#encodeBlock() : Buffer.alloc(0);
    const lame = this.#lame;
    if (lame === undefined) return rest;
    this.#lame = undefined;
    return Buffer.concat([rest, toBuffer(lame.flush())]);
  }

  #encodeBlock(): Buffer {
    const samples = this.#block.subarray(0, this.#blockLength);
    this.#blockLength = 0;
    this.#lame ??= new Mp3Encoder(this.#info.channels, this.#info.sampleRate, this.#kbps);
    if (this.#info.channels === 1) return toBuffer(this.#lame.encodeBuffer(samples));
    const frames = samples.length >> 1;
    const left = new Int16Array(frames);
    const right = new Int16Array(frames);
    for (let i = 0; i < frames; i++) {
      left[i] = samples[2 * i] ?? 0;
      right[i] = samples[2 * i + 1] ?? 0;
    }
    return toBuffer(this.#lame.encodeBuffer(left, right));
  }
}
