/**
 * PCM helpers of the decoders: float planar to s16le interleaved, and a frame
 * aligner so a decoder only ever emits whole sample frames (a speaker or a
 * clocked sink must never see half a sample).
 */
import { endianness } from 'node:os';

const BIG_ENDIAN = endianness() === 'BE';

/**
 * Convert planar float samples in [-1, 1] to signed 16-bit little-endian,
 * interleaved. Samples outside [-1, 1] are clipped.
 * @param planes one Float32Array per decoded channel
 * @param channels output channels; when fewer than `planes`, the first planes
 *   are kept (the mp3 decoder always returns two identical planes for mono)
 */
export function floatToS16le(planes: readonly Float32Array[], samples: number, channels: number): Buffer {
  // allocUnsafeSlow: an unpooled buffer at offset 0, so the Int16Array view is aligned.
  const out = Buffer.allocUnsafeSlow(samples * channels * 2);
  const view = new Int16Array(out.buffer, out.byteOffset, samples * channels);
  for (let c = 0; c < channels; c++) {
    const plane = planes[c] ?? planes[0];
    if (!plane) throw new RangeError('no channel data');
    for (let i = 0, j = c; i < samples; i++, j += channels) {
      const v = plane[i] ?? 0;
      view[j] = v >= 1 ? 0x7fff : v <= -1 ? -0x8000 : Math.round(v < 0 ? v * 0x8000 : v * 0x7fff);
    }
  }
  if (BIG_ENDIAN) out.swap16();
  return out;
}

/** Holds back the bytes of an incomplete sample frame until the rest arrives. */
export class FrameAligner {
  private carry: Buffer = Buffer.alloc(0);

  /** @param frameBytes bytes in one sample frame (all channels) */
  constructor(private readonly frameBytes: number) {}

  /** The whole frames available after `chunk`, or undefined when there is none yet. */
  push(chunk: Buffer): Buffer | undefined {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % this.frameBytes);
    this.carry = whole === bytes.length ? Buffer.alloc(0) : Buffer.from(bytes.subarray(whole));
    return whole > 0 ? bytes.subarray(0, whole) : undefined;
  }

  /** Bytes held back (an incomplete frame). */
  get pendingBytes(): number {
    return this.carry.length;
  }
}
