/** Test audio made on the spot: sine PCM, mp3 through lamejs, Ogg Opus through the system ffmpeg. */
import { spawnSync } from 'node:child_process';
import { Mp3Encoder } from '@breezystack/lamejs';
import type { Readable } from 'node:stream';
import { has } from '../helpers/needs.js';

/** Whether an ffmpeg binary answers on PATH. */
export const hasFfmpeg = has('ffmpeg');
export const hasFfprobe = has('ffprobe');

/** `ms` of a 440 Hz sine as s16le mono (or interleaved identical channels). */
export function sinePcm(sampleRate: number, ms: number, channels = 1, hz = 440): Buffer {
  const frames = Math.round((sampleRate * ms) / 1000);
  const out = Buffer.alloc(frames * channels * 2);
  for (let i = 0; i < frames; i++) {
    const v = Math.round(12_000 * Math.sin((2 * Math.PI * hz * i) / sampleRate));
    for (let c = 0; c < channels; c++) out.writeInt16LE(v, (i * channels + c) * 2);
  }
  return out;
}

/** Encode s16le mono PCM to an mp3 byte stream (no Xing header, as a live encoder sends it). */
export function encodeMp3(pcm: Buffer, sampleRate: number, kbps = 48): Buffer {
  const samples = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
  const encoder = new Mp3Encoder(1, sampleRate, kbps);
  const parts: Buffer[] = [];
  for (let i = 0; i < samples.length; i += 1152) parts.push(Buffer.from(encoder.encodeBuffer(samples.subarray(i, i + 1152))));
  parts.push(Buffer.from(encoder.flush()));
  return Buffer.concat(parts);
}

/** Encode s16le mono PCM to Ogg Opus with ffmpeg (callers skip when `hasFfmpeg` is false). */
export function encodeOpus(pcm: Buffer, sampleRate: number): Buffer {
  const result = spawnSync(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-f', 's16le', '-ar', String(sampleRate), '-ac', '1', '-i', '-',
      '-c:a', 'libopus', '-b:a', '32k', '-page_duration', '100000', '-f', 'ogg', 'pipe:1'],
    { input: pcm, maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`ffmpeg failed: ${result.stderr.toString()}`);
  return result.stdout;
}

/** Split `bytes` into chunks of `size` bytes. */
export function chunksOf(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** Read a stream to the end. */
export async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Stream facts from ffprobe: sample rate, channels, codec, container and duration. */
export function ffprobe(path: string): { codec: string; sampleRate: number; channels: number; container: string; durationMs: number } {
  const result = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,sample_rate,channels:format=format_name,duration', '-of', 'json', path]);
  if (result.status !== 0) throw new Error(`ffprobe failed: ${result.stderr.toString()}`);
  const parsed = JSON.parse(result.stdout.toString()) as {
    streams: { codec_name: string; sample_rate: string; channels: number }[];
    format: { format_name: string; duration: string };
  };
  const stream = parsed.streams[0];
  if (!stream) throw new Error(`no audio stream in ${path}`);
  return {
    codec: stream.codec_name,
    sampleRate: Number(stream.sample_rate),
    channels: stream.channels,
    container: parsed.format.format_name,
    durationMs: Number(parsed.format.duration) * 1000,
  };
}
