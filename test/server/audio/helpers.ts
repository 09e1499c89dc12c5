/** Test helpers: signals, real decoders and container parsers. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { oggCrc32 } from '../../../src/server/audio/ogg.js';

/** `seconds` of a sine at `hz`, s16le mono. */
export function sinePcm(sampleRate: number, seconds: number, hz = 440, amplitude = 8000): Buffer {
  const samples = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  return Buffer.from(samples.buffer);
}

export interface Decoded {
  samples: Float32Array;
  sampleRate: number;
  errors: number;
}

export async function decodeMp3(data: Uint8Array): Promise<Decoded> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const result = decoder.decode(data);
    return { samples: result.channelData[0] ?? new Float32Array(0), sampleRate: result.sampleRate, errors: result.errors.length };
  } finally {
    decoder.free();
  }
}

export async function decodeOggOpus(data: Uint8Array): Promise<Decoded> {
  const decoder = new OggOpusDecoder();
  await decoder.ready;
  try {
    const result = await decoder.decodeFile(data);
    return { samples: result.channelData[0] ?? new Float32Array(0), sampleRate: result.sampleRate, errors: result.errors.length };
  } finally {
    decoder.free();
  }
}

export function durationSeconds(decoded: Decoded): number {
  return decoded.samples.length / decoded.sampleRate;
}

/** Upward zero crossings per second over the middle half: the frequency of a sine. */
export function sineHz(decoded: Decoded): number {
  const { samples } = decoded;
  const from = Math.floor(samples.length / 4);
  const to = Math.floor((samples.length * 3) / 4);
  let crossings = 0;
  for (let i = from + 1; i < to; i++) if ((samples[i - 1] ?? 0) < 0 && (samples[i] ?? 0) >= 0) crossings++;
  return (crossings / (to - from)) * decoded.sampleRate;
}

/** Lengths of the MPEG audio frames `data` consists of; throws unless it is exactly whole frames. */
export function mp3FrameLengths(data: Uint8Array): number[] {
  const lengths: number[] = [];
  let i = 0;
  while (i < data.length) {
    if (i + 4 > data.length || data[i] !== 0xff || ((data[i + 1] ?? 0) & 0xe0) !== 0xe0) throw new Error(`no frame sync at ${i}`);
    const version = ((data[i + 1] ?? 0) >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
    const bitrateIndex = (data[i + 2] ?? 0) >> 4;
    const rateIndex = ((data[i + 2] ?? 0) >> 2) & 3;
    const padding = ((data[i + 2] ?? 0) >> 1) & 1;
    const bitrates = version === 3 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
    const rates = version === 3 ? [44_100, 48_000, 32_000] : version === 2 ? [22_050, 24_000, 16_000] : [11_025, 12_000, 8_000];
    const kbps = bitrates[bitrateIndex] ?? 0;
    const rate = rates[rateIndex] ?? 0;
    const length = Math.floor(((version === 3 ? 144_000 : 72_000) * kbps) / rate) + padding;
    if (length <= 0 || i + length > data.length) throw new Error(`truncated frame at ${i}`);
    lengths.push(length);
    i += length;
  }
  return lengths;
}

export interface OggPageInfo {
  flags: number;
  granule: bigint;
  serial: number;
  sequence: number;
  lacing: number[];
  body: Buffer;
}

/** Pages `data` consists of; throws unless it is exactly whole pages with valid CRCs. */
export function oggPages(data: Buffer): OggPageInfo[] {
  const pages: OggPageInfo[] = [];
  let i = 0;
  while (i < data.length) {
    if (data.toString('ascii', i, i + 4) !== 'OggS') throw new Error(`no capture pattern at ${i}`);
    const count = data[i + 26] ?? 0;
    const lacing = [...data.subarray(i + 27, i + 27 + count)];
    const bodyBytes = lacing.reduce((a, b) => a + b, 0);
    const end = i + 27 + count + bodyBytes;
    if (end > data.length) throw new Error(`truncated page at ${i}`);
    const page = Buffer.from(data.subarray(i, end));
    const crc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    if (oggCrc32(page) !== crc) throw new Error(`bad CRC on page at ${i}`);
    pages.push({ flags: page[5] ?? 0, granule: page.readBigInt64LE(6), serial: page.readUInt32LE(14), sequence: page.readUInt32LE(18), lacing, body: page.subarray(27 + count) });
    i = end;
  }
  return pages;
}

/** ffprobe's duration of a file in seconds, or undefined when ffprobe is not installed. */
export function ffprobeDuration(data: Uint8Array, extension: string): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-audio-'));
  try {
    const file = join(dir, `probe.${extension}`);
    writeFileSync(file, data);
    const result = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' });
    if (result.error) return undefined;
    if (result.status !== 0) throw new Error(`ffprobe failed: ${result.stderr}`);
    return Number.parseFloat(result.stdout.trim());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Samples ffmpeg decodes from a file (mono, at `sampleRate`), or undefined when ffmpeg is not installed. */
export function ffmpegSampleCount(data: Uint8Array, extension: string, sampleRate: number): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-audio-'));
  try {
    const file = join(dir, `decode.${extension}`);
    writeFileSync(file, data);
    const result = spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', String(sampleRate), '-'], { maxBuffer: 1 << 26 });
    if (result.error) return undefined;
    if (result.status !== 0 || result.stderr.length > 0) throw new Error(`ffmpeg failed: ${result.stderr.toString()}`);
    return result.stdout.length / 2;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
