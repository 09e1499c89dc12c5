/**
 * Decoding reference audio for voice cloning into mono float samples.
 * WAV (integer PCM) is parsed here; mp3 and Ogg Opus go through the
 * WebAssembly decoders (no process to spawn); anything else goes through a
 * system ffmpeg when one is installed. Audio that none of them reads is
 * "unprocessable media" (422).
 */
import { spawn } from 'node:child_process';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { parseWavHeader } from '../audio/wav.js';

/** Mono audio as floats in [-1, 1]. */
export interface DecodedAudio {
  samples: Float32Array;
  sampleRate: number;
  /** Which decoder read it: `wav`, `mp3`, `opus` or `ffmpeg`. */
  decoder: string;
}

/** The audio could not be decoded (not a format any decoder here reads, or corrupt). */
export class UndecodableAudioError extends Error {
  override name = 'UndecodableAudioError';
}

/** Rate ffmpeg resamples to: plenty for pitch (60 to 500 Hz) and energy analysis. */
const FFMPEG_RATE = 16_000;
/** An ffmpeg decode that takes longer is given up; 20 s. */
const FFMPEG_TIMEOUT_MS = 20_000;

/** Average channels of planar float data into one. */
function mixDown(channels: readonly Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return channels[0]!.subarray(0, length);
  const out = new Float32Array(length);
  for (const ch of channels) for (let i = 0; i < length; i++) out[i]! += ch[i]! / channels.length;
  return out;
}

function decodeWav(bytes: Buffer): DecodedAudio | undefined {
  const header = parseWavHeader(bytes);
  if (!header) return undefined;
  const { sampleRate, channels, bitDepth } = header.info;
  const width = bitDepth / 8;
  if (![1, 2, 3, 4].includes(width) || channels < 1 || sampleRate < 1) return undefined;
  const end = Math.min(bytes.length, header.dataOffset + (header.dataBytes ?? bytes.length));
  const frames = Math.floor((end - header.dataOffset) / (width * channels));
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

/** Decode with a system ffmpeg to 16 kHz mono s16le; undefined when ffmpeg is missing or fails. */
function decodeWithFfmpeg(bytes: Buffer): Promise<DecodedAudio | undefined> {
  return new Promise((resolve) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-f', 's16le', '-ac', '1', '-ar', String(FFMPEG_RATE), 'pipe:1'], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), FFMPEG_TIMEOUT_MS);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(undefined); // ffmpeg not installed
    });
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    // ffmpeg may stop reading early on bad input: a broken pipe is its answer, not ours.
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      clearTimeout(timer);
      const pcm = Buffer.concat(chunks);
      if (code !== 0 || pcm.length < 2) return resolve(undefined);
      const samples = new Float32Array(Math.floor(pcm.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32_768;
      resolve({ samples, sampleRate: FFMPEG_RATE, decoder: 'ffmpeg' });
    });
    child.stdin.end(bytes);
  });
}

/**
 * Decode `bytes` (WAV, mp3, Ogg Opus, or whatever ffmpeg reads) to mono
 * floats. Throws UndecodableAudioError when nothing reads it.
 */
export async function decodeAudio(bytes: Buffer): Promise<DecodedAudio> {
  const attempts: (() => Promise<DecodedAudio | undefined> | DecodedAudio | undefined)[] = [];
  if (bytes.toString('latin1', 0, 4) === 'RIFF') attempts.push(() => decodeWav(bytes));
  if (looksLikeOggOpus(bytes)) attempts.push(() => decodeOggOpus(bytes));
  if (looksLikeMp3(bytes)) attempts.push(() => decodeMp3(bytes));
  attempts.push(() => decodeWithFfmpeg(bytes));
  for (const attempt of attempts) {
    try {
      const decoded = await attempt();
      if (decoded && decoded.samples.length > 0) return decoded;
    } catch {
      // A decoder choked on it: try the next one.
    }
  }
  throw new UndecodableAudioError('the reference audio could not be decoded (WAV, mp3, Ogg Opus, or a format ffmpeg reads)');
}
