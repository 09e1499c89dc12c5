/**
 * Decoding an audio input to what the recognizer wants: 16 kHz mono 16-bit
 * PCM. 16-bit PCM WAV is decoded here (downmix and a cubic resampler);
 * anything else goes through ffmpeg when it is installed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Resampler } from '../audio/resample.js';
import { parseWavHeader } from '../audio/wav.js';
import { ProcessError, runProcess, withTempDir } from './process.js';

/** Sample rate the recognizer works at. */
export const RECOGNIZER_SAMPLE_RATE = 16_000;

/** The input is not audio this server can decode (reachable, but unprocessable). */
export class UnprocessableMediaError extends Error {
  override name = 'UnprocessableMediaError';
}

export interface DecodedAudio {
  /** s16le, mono, 16 kHz. */
  pcm: Buffer;
  durationSeconds: number;
}

export interface DecodeOptions {
  /** ffmpeg for non-WAV inputs; undefined: WAV only. */
  ffmpeg?: string | undefined;
  /** Decode at most this much audio; default 600 s. */
  maxSeconds?: number;
  signal?: AbortSignal | undefined;
}

/** Mono 16-bit samples of interleaved 16-bit PCM (averaging the channels). */
function downmix(data: Buffer, channels: number): Int16Array {
  const frames = Math.floor(data.length / (2 * channels));
  const out = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += data.readInt16LE((i * channels + c) * 2);
    out[i] = Math.round(sum / channels);
  }
  return out;
}

/** Decode a 16-bit PCM WAV; undefined when `data` is not one (other WAV variants go to ffmpeg). */
export function decodeWav16k(data: Buffer, maxSeconds = 600): DecodedAudio | undefined {
  const header = parseWavHeader(data);
  if (!header || header.info.bitDepth !== 16 || header.info.channels < 1 || header.info.sampleRate < 1) return undefined;
  const { channels, sampleRate } = header.info;
  const available = data.length - header.dataOffset;
  const maxBytes = Math.floor(maxSeconds * sampleRate) * channels * 2;
  const bytes = Math.min(available, header.dataBytes ?? available, maxBytes);
  const mono = downmix(data.subarray(header.dataOffset, header.dataOffset + bytes), channels);
  const resampler = new Resampler(sampleRate, RECOGNIZER_SAMPLE_RATE);
  const head = resampler.push(mono);
  const tail = resampler.flush();
  const pcm = Buffer.alloc((head.length + tail.length) * 2);
  pcm.set(new Uint8Array(head.buffer, head.byteOffset, head.byteLength), 0);
  pcm.set(new Uint8Array(tail.buffer, tail.byteOffset, tail.byteLength), head.byteLength);
  return { pcm, durationSeconds: mono.length / sampleRate };
}

/**
 * Decode any audio the machine can: WAV here, the rest through ffmpeg.
 * Throws UnprocessableMediaError when the bytes are not decodable audio.
 */
export async function decodeAudio16k(data: Buffer, options: DecodeOptions = {}): Promise<DecodedAudio> {
  const maxSeconds = options.maxSeconds ?? 600; // 10 min
  const wav = decodeWav16k(data, maxSeconds);
  if (wav) return wav;
  const ffmpeg = options.ffmpeg;
  if (!ffmpeg) throw new UnprocessableMediaError('not a 16-bit PCM WAV file, and ffmpeg (needed for other formats) is not installed');
  return withTempDir(async (dir) => {
    const input = join(dir, 'input');
    await writeFile(input, data);
    try {
      const { stdout } = await runProcess(
        ffmpeg,
        ['-v', 'error', '-nostdin', '-i', input, '-t', String(maxSeconds), '-vn', '-ac', '1', '-ar', String(RECOGNIZER_SAMPLE_RATE), '-acodec', 'pcm_s16le', '-f', 's16le', 'pipe:1'],
        { timeoutMs: 120_000, signal: options.signal }, // 2 min
      );
      if (stdout.length === 0) throw new UnprocessableMediaError('holds no audio stream');
      return { pcm: stdout, durationSeconds: stdout.length / 2 / RECOGNIZER_SAMPLE_RATE };
    } catch (err) {
      if (err instanceof ProcessError && err.message.includes('aborted')) throw err;
      if (err instanceof UnprocessableMediaError) throw err;
      throw new UnprocessableMediaError(`is not decodable audio (${(err as Error).message})`);
    }
  });
}
