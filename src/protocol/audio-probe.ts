/**
 * The layout an encoded stream announces in its first bytes. Spec 6 rule 2
 * puts PCM metadata on `ready` for pcm (and we add it for wav); for mp3 and
 * opus a deployment may say nothing, or a default, so the client reads the
 * stream itself: the first MPEG audio frame header, the Ogg `OpusHead`
 * (Opus always decodes at 48 kHz, RFC 7845, as ffprobe reports it), or the
 * WAV `fmt ` chunk.
 */
import { AudioFormat } from './audio.js';
import { scanWav } from './wav.js';

export interface EncodedLayout {
  sampleRate: number;
  channels: number;
}

/** Opus always decodes at 48 kHz (RFC 7845). */
export const OPUS_DECODE_RATE = 48_000;

const MPEG_RATES: Record<number, readonly number[]> = {
  3: [44_100, 48_000, 32_000], // MPEG-1
  2: [22_050, 24_000, 16_000], // MPEG-2
  0: [11_025, 12_000, 8_000], // MPEG-2.5
};

/** Length of a leading ID3v2 tag, footer included (0 when there is none): 10-byte header, size in four 7-bit bytes. */
export function id3v2Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return 0;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  return Math.min(bytes.length, 10 + size + ((bytes[5]! & 0x10) !== 0 ? 10 : 0));
}

/** Sample rate and channels of the first MPEG audio frame header (after any ID3v2 tag), if one is found. */
export function mp3Layout(bytes: Uint8Array): EncodedLayout | undefined {
  for (let i = id3v2Length(bytes); i + 4 <= bytes.length; i++) {
    if (bytes[i] !== 0xff || (bytes[i + 1]! & 0xe0) !== 0xe0) continue;
    const version = (bytes[i + 1]! >> 3) & 0x03;
    const layer = (bytes[i + 1]! >> 1) & 0x03;
    const rateIndex = (bytes[i + 2]! >> 2) & 0x03;
    const bitrateIndex = bytes[i + 2]! >> 4;
    if (version === 1 || layer === 0 || rateIndex === 3 || bitrateIndex === 0x0f) continue; // reserved: not a frame
    const sampleRate = MPEG_RATES[version]?.[rateIndex];
    if (sampleRate === undefined) continue;
    return { sampleRate, channels: bytes[i + 3]! >> 6 === 3 ? 1 : 2 };
  }
  return undefined;
}

/** Channels from the Ogg `OpusHead` packet, if present; the rate is always 48 kHz. */
export function opusLayout(bytes: Uint8Array): EncodedLayout | undefined {
  const magic = Buffer.from('OpusHead');
  const at = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(magic);
  if (at < 0 || at + 10 > bytes.length) return undefined;
  return { sampleRate: OPUS_DECODE_RATE, channels: bytes[at + 9]! };
}

function wavLayout(bytes: Uint8Array): EncodedLayout | undefined {
  const scan = scanWav(bytes);
  return scan.status === 'header' && scan.fmt ? { sampleRate: scan.fmt.sampleRate, channels: scan.fmt.channels } : undefined;
}

/** The layout `bytes` (the start of a stream in `format`) announce; undefined for pcm or when they do not say. */
export function probeEncodedLayout(format: string, bytes: Uint8Array): EncodedLayout | undefined {
  switch (format) {
    case AudioFormat.mp3:
      return mp3Layout(bytes);
    case AudioFormat.opus:
      return opusLayout(bytes);
    case AudioFormat.wav:
      return wavLayout(bytes);
    default:
      return undefined;
  }
}

/** What the first bytes of a body are, by their signature: a RIFF/WAVE file, an mp3 (ID3 tag, or an MPEG audio frame at the start), an Ogg stream; undefined when none. */
export type SniffedContainer = 'wav' | 'mp3' | 'ogg';

/**
 * The container `bytes` start with. `mpegSync`: also take an MPEG frame
 * header at byte 0 as mp3 (a weak sign: raw PCM may start with such bytes,
 * so a body labelled raw PCM is not sniffed for it).
 */
export function sniffContainer(bytes: Uint8Array, mpegSync = true): SniffedContainer | undefined {
  const ascii = (at: number, text: string) => bytes.length >= at + text.length && [...text].every((c, i) => bytes[at + i] === c.charCodeAt(0));
  if (ascii(0, 'RIFF') && ascii(8, 'WAVE')) return 'wav';
  if (ascii(0, 'OggS')) return 'ogg';
  if (ascii(0, 'ID3')) return 'mp3';
  if (mpegSync && bytes.length >= 4 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0 && mp3Layout(bytes.subarray(0, 4)) !== undefined) return 'mp3';
  return undefined;
}
