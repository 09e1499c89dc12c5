/**
 * The server's one audio-decoding pipeline, for every input it is given as
 * audio (reference audio of a voice clone, speech to transcribe, the speech
 * of a lip-sync): integer PCM WAV is parsed here, mp3 and Ogg Opus go
 * through the WebAssembly decoders (no process to spawn), anything else
 * through ffmpeg when it is installed. The result is mono floats at the
 * input's rate; `toPcm16` brings it to a rate as 16-bit PCM (the
 * recognizer's). Audio that none of them reads is `UnprocessableMediaError`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { ProcessError, runProcess, withTempDir } from '../media-engines/process.js';
import { resample } from './resample.js';
import { readWavHeader } from '../../protocol/wav.js';

/** The input is not audio this server can decode (reachable, but unprocessable). */
export class UnprocessableMediaError extends Error {
  override name = 'UnprocessableMediaError';
}

/** Mono audio as floats in [-1, 1]. */
export interface DecodedAudio {
  samples: Float32Array;
  sampleRate: number;
  /** Which decoder read it: `wav`, `mp3`, `opus` or `ffmpeg`. */
  decoder: string;
}

export interface DecodeOptions {
  /** The ffmpeg executable for formats read by none of the built-in decoders; undefined: those formats are refused. */
  ffmpeg?: string | undefined;
  /** Decode at most this much audio; default 600 s. */
  maxSeconds?: number;
  signal?: AbortSignal | undefined;
}

/** Rate ffmpeg decodes to: the recognizer's, and plenty for pitch and energy analysis. */
const FFMPEG_RATE = 16_000;
/** An ffmpeg decode that takes longer is given up; 2 min. */
const FFMPEG_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_SECONDS = 600; // 10 min

/** Average channels of planar float data into one. */
function mixDown(channels: readonly Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return channels[0]!.subarray(0, length);
  const out = new Float32Array(length);
  for (const ch of channels) for (let i = 0; i < length; i++) out[i]! += ch[i]! / channels.length;
  return out;
}

/** Integer PCM WAV (8 to 32 bits, any channel count); undefined when `bytes` is not one. */
function decodeWav(bytes: Buffer, maxSeconds: number): DecodedAudio | undefined {
  const read = readWavHeader(bytes, { anyBitDepth: true });
  if (read.status !== 'header') return undefined;
  const header = read.header;
  const { sampleRate, channels, bitDepth } = header.pcm;
  const width = bitDepth / 8;
  if (![1, 2, 3, 4].includes(width) || channels < 1 || sampleRate < 1) return undefined;
  const end = Math.min(bytes.length, header.dataOffset + (header.dataBytes ?? bytes.length));
  const frames = Math.min(Math.floor((end - header.dataOffset) / (width * channels)), Math.floor(maxSeconds * sampleRate));
  const out = new Float32Array(frames);
  const scale = 2 ** (bitDepth - 1);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) {
      const at = header.dataOffset + (f * channels + c) * width;
      // 8-bit WAV is unsigned; wider sizes are signed little-endian.
      sum += width === 1 ? (bytes[at]! - 128) / 128 : bytes.readIntLE(at, width) / scale;
    }
    out[f] = sum / channels;
  }
  return { samples: out, sampleRate, decoder: 'wav' };
}

/** An ID3 tag or an MPEG audio frame sync at the start. */
function looksLikeMp3(bytes: Buffer): boolean {
  if (bytes.length < 4) return false;
  if (bytes.toString('latin1', 0, 3) === 'ID3') return true;
  return bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0;
}

function looksLikeOggOpus(bytes: Buffer): boolean {
  return bytes.length > 36 && bytes.toString('latin1', 0, 4) === 'OggS' && bytes.toString('latin1', 28, 36) === 'OpusHead';
}

async function decodeMp3(bytes: Buffer): Promise<DecodedAudio | undefined> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const out = decoder.decode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
    if (out.samplesDecoded === 0) return undefined;
    return { samples: mixDown(out.channelData, out.samplesDecoded), sampleRate: out.sampleRate, decoder: 'mp3' };
  } finally {
    decoder.free();
  }
}

async function decodeOggOpus(bytes: Buffer): Promise<DecodedAudio | undefined> {
  const decoder = new OggOpusDecoder();
  await decoder.ready;
  try {
    const out = await decoder.decodeFile(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
    if (out.samplesDecoded === 0) return undefined;
    return { samples: mixDown(out.channelData, out.samplesDecoded), sampleRate: out.sampleRate, decoder: 'opus' };
  } finally {
    decoder.free();
  }
}

/** ffmpeg to mono s16le at FFMPEG_RATE (through a file: some containers need to seek). */
function decodeWithFfmpeg(bytes: Buffer, ffmpeg: string, maxSeconds: number, signal: AbortSignal | undefined): Promise<DecodedAudio> {
  return withTempDir(async (dir) => {
    const input = join(dir, 'input');
    await writeFile(input, bytes);
    try {
      const { stdout } = await runProcess(
        ffmpeg,
        ['-v', 'error', '-nostdin', '-i', input, '-t', String(maxSeconds), '-vn', '-ac', '1', '-ar', String(FFMPEG_RATE), '-acodec', 'pcm_s16le', '-f', 's16le', 'pipe:1'],
        { timeoutMs: FFMPEG_TIMEOUT_MS, signal },
      );
      if (stdout.length < 2) throw new UnprocessableMediaError('holds no audio stream');
      const samples = new Float32Array(Math.floor(stdout.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = stdout.readInt16LE(i * 2) / 32_768;
      return { samples, sampleRate: FFMPEG_RATE, decoder: 'ffmpeg' };
    } catch (err) {
      if (err instanceof ProcessError && err.message.includes('aborted')) throw err;
      if (err instanceof UnprocessableMediaError) throw err;
      throw new UnprocessableMediaError(`is not decodable audio (${(err as Error).message})`);
    }
  });
}

/**
 * Decode `bytes` to mono floats: WAV, Ogg Opus and mp3 here, whatever else
 * ffmpeg reads when `options.ffmpeg` is given. Throws UnprocessableMediaError
 * when nothing reads it (its message completes "<the input> ...").
 */
export async function decodeAudio(bytes: Buffer, options: DecodeOptions = {}): Promise<DecodedAudio> {
  const maxSeconds = options.maxSeconds ?? DEFAULT_MAX_SECONDS;
  if (bytes.length === 0) throw new UnprocessableMediaError('is empty');
  const builtIn: (() => Promise<DecodedAudio | undefined> | DecodedAudio | undefined)[] = [];
  if (bytes.toString('latin1', 0, 4) === 'RIFF') builtIn.push(() => decodeWav(bytes, maxSeconds));
  if (looksLikeOggOpus(bytes)) builtIn.push(() => decodeOggOpus(bytes));
  if (looksLikeMp3(bytes)) builtIn.push(() => decodeMp3(bytes));
  for (const decode of builtIn) {
    try {
      const decoded = await decode();
      if (decoded && decoded.samples.length > 0) return { ...decoded, samples: decoded.samples.subarray(0, Math.floor(maxSeconds * decoded.sampleRate)) };
    } catch {
      // A decoder choked on it: try the next one.
    }
  }
  if (!options.ffmpeg) throw new UnprocessableMediaError('is not audio read without ffmpeg (WAV, mp3, Ogg Opus), and ffmpeg (needed for other formats) is not installed');
  return decodeWithFfmpeg(bytes, options.ffmpeg, maxSeconds, options.signal);
}

/** Decoded audio at `sampleRate` as 16-bit little-endian PCM (rounded, clamped). */
export function toPcm16(audio: DecodedAudio, sampleRate: number): Buffer {
  const samples = resample(audio.samples, audio.sampleRate, sampleRate);
  const pcm = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    const value = Math.round(samples[i]! * 32_768);
    pcm.writeInt16LE(value > 32_767 ? 32_767 : value < -32_768 ? -32_768 : value, i * 2);
  }
  return pcm;
}
