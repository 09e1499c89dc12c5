/**
 * MP3 for the `mp3` wire format, with `@breezystack/lamejs` (pure JS LAME).
 * Every segment is a complete LAME stream: `endSegment()` flushes the encoder
 * and the next segment starts a fresh one, so each segment ends on a frame
 * boundary, decodes on its own (no bit reservoir reaching back into the
 * previous segment) and the concatenation is a valid mp3 stream. The price is
 * ~50 ms of encoder delay and padding at each segment boundary.
 */
import { Mp3Encoder } from '@breezystack/lamejs';
import type { PcmInfo } from '../../protocol/audio.js';
import { Int16Reader } from './pcm.js';

/** Options of `Mp3SegmentEncoder`. */
export interface Mp3EncoderOptions {
  /** Constant bitrate in kbps; default 48 below 32 kHz (MPEG-2 rates), else 64. */
  kbps?: number;
}

function copyBytes(data: Int8Array | Uint8Array): Buffer {
  // lamejs returns an Int8Array view of its own buffer: copy before the next call reuses it.
  return Buffer.from(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

/** Encodes s16le PCM (mono or stereo) to MP3, one LAME stream per segment. */
export class Mp3SegmentEncoder {
  readonly #info: PcmInfo;
  readonly #kbps: number;
  readonly #reader = new Int16Reader();
  #lame: Mp3Encoder | undefined;

  constructor(info: PcmInfo, options: Mp3EncoderOptions = {}) {
    if (info.bitDepth !== 16 || (info.channels !== 1 && info.channels !== 2)) {
      throw new RangeError(`mp3 needs 16-bit mono or stereo PCM, got ${info.bitDepth}-bit ${info.channels} channels`);
    }
    this.#info = info;
    this.#kbps = options.kbps ?? (info.sampleRate < 32_000 ? 48 : 64); // kbps
  }

  write(pcm: Uint8Array): Buffer {
    const samples = this.#reader.read(pcm);
    if (samples.length === 0) return Buffer.alloc(0);
    this.#lame ??= new Mp3Encoder(this.#info.channels, this.#info.sampleRate, this.#kbps);
    if (this.#info.channels === 1) return copyBytes(this.#lame.encodeBuffer(samples));
    const frames = samples.length >> 1;
    const left = new Int16Array(frames);
    const right = new Int16Array(frames);
    for (let i = 0; i < frames; i++) {
      left[i] = samples[2 * i] ?? 0;
      right[i] = samples[2 * i + 1] ?? 0;
    }
    return copyBytes(this.#lame.encodeBuffer(left, right));
  }

  /** Flushes the segment's LAME stream; empty when nothing was written since the last boundary. */
  endSegment(): Buffer {
    const lame = this.#lame;
    if (lame === undefined) return Buffer.alloc(0);
    this.#lame = undefined;
    return copyBytes(lame.flush());
  }
}
