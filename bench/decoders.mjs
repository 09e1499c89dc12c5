// Decoder speed: mp3 (mpg123-decoder) and Ogg Opus (ogg-opus-decoder), as
// multiples of real time, through voxpipe's streaming decoders (4 KiB chunks
// in, s16le out) and through each library alone on the whole buffer.
// Test audio: 60 s of a speech-like signal (voiced harmonics with a syllable
// envelope and some noise), 24 kHz mono; mp3 by lamejs at 48 kbit/s, opus by
// the system ffmpeg at 32 kbit/s (skipped without ffmpeg).
// Run `npm run build` first. Writes bench/out/decoders.json.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Mp3Encoder } from '@breezystack/lamejs';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { createDecoder } from '../dist/codecs/decoder.js';
import { resultPath } from './_common.mjs';

const SAMPLE_RATE = 24_000;
const AUDIO_MS = 60_000;
const CHUNK_BYTES = 4096;
const ROUNDS = 7;

function speechLike() {
  const frames = (SAMPLE_RATE * AUDIO_MS) / 1000;
  const samples = new Int16Array(frames);
  let seed = 1;
  const noise = () => ((seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
  for (let i = 0; i < frames; i++) {
    const t = i / SAMPLE_RATE;
    const f0 = 120 + 30 * Math.sin(2 * Math.PI * 0.7 * t); // wandering pitch
    let v = 0;
    for (let h = 1; h <= 8; h++) v += Math.sin(2 * Math.PI * f0 * h * t) / h;
    const syllable = Math.max(0, Math.sin(2 * Math.PI * 4 * t)); // ~4 syllables per second
    samples[i] = Math.round(6000 * (v * syllable + 0.05 * noise()));
  }
  return samples;
}

function encodeMp3(samples) {
  const encoder = new Mp3Encoder(1, SAMPLE_RATE, 48);
  const parts = [];
  for (let i = 0; i < samples.length; i += 1152) parts.push(Buffer.from(encoder.encodeBuffer(samples.subarray(i, i + 1152))));
  parts.push(Buffer.from(encoder.flush()));
  return Buffer.concat(parts);
}

function encodeOpus(samples) {
  const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 's16le', '-ar', String(SAMPLE_RATE), '-ac', '1', '-i', '-',
    '-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg', 'pipe:1'], { input: Buffer.from(samples.buffer), maxBuffer: 1 << 28 });
  return result.status === 0 ? result.stdout : undefined;
}

async function streamDecode(format, bytes) {
  const decoder = createDecoder({ format, sampleRate: SAMPLE_RATE, channels: 1, bitDepth: 16 });
  let pcmBytes = 0;
  decoder.on('data', (chunk) => (pcmBytes += chunk.length));
  const ended = new Promise((resolve, reject) => {
    decoder.on('end', resolve);
    decoder.on('error', reject);
  });
  // Wait for the WebAssembly to compile before timing (a real pipeline does this once per stream, before audio).
  await new Promise((resolve) => decoder.write(Buffer.alloc(0), resolve));
  const t0 = performance.now();
  for (let i = 0; i < bytes.length; i += CHUNK_BYTES) {
    if (!decoder.write(bytes.subarray(i, i + CHUNK_BYTES))) await new Promise((resolve) => decoder.once('drain', resolve));
  }
  decoder.end();
  await ended;
  const ms = performance.now() - t0;
  return { ms, audioMs: (pcmBytes / 2 / decoder.pcmInfo.sampleRate) * 1000 };
}

async function libraryDecode(format, bytes) {
  const decoder = format === 'mp3' ? new MPEGDecoder() : new OggOpusDecoder();
  await decoder.ready;
  const t0 = performance.now();
  const decoded = format === 'mp3' ? decoder.decode(bytes) : await decoder.decodeFile(bytes);
  const ms = performance.now() - t0;
  decoder.free();
  return { ms, audioMs: (decoded.samplesDecoded / decoded.sampleRate) * 1000 };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measure(format, bytes) {
  const stream = [];
  const library = [];
  await streamDecode(format, bytes); // warm-up
  await libraryDecode(format, bytes);
  for (let r = 0; r < ROUNDS; r++) {
    stream.push(await streamDecode(format, bytes));
    library.push(await libraryDecode(format, bytes));
  }
  const summary = (runs) => {
    const ms = median(runs.map((run) => run.ms));
    const audioMs = runs[0].audioMs;
    return { decodeMs: Number(ms.toFixed(1)), audioMs: Math.round(audioMs), xRealtime: Math.round(audioMs / ms) };
  };
  return { encodedBytes: bytes.length, stream: summary(stream), library: summary(library) };
}

const samples = speechLike();
const results = { mp3: await measure('mp3', encodeMp3(samples)) };
const opus = encodeOpus(samples);
results.opus = opus ? await measure('opus', opus) : { skipped: 'ffmpeg not found: no Ogg Opus encoder to make the test audio' };

const report = {
  bench: 'decoders',
  date: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  input: { audioMs: AUDIO_MS, sampleRate: SAMPLE_RATE, channels: 1, chunkBytes: CHUNK_BYTES, rounds: ROUNDS, mp3Kbps: 48, opusKbps: 32 },
  results,
};

for (const [format, result] of Object.entries(results)) {
  if (result.skipped) {
    console.log(`${format}: skipped (${result.skipped})`);
    continue;
  }
  console.log(`${format}: ${result.encodedBytes} bytes for ${result.stream.audioMs} ms of audio`);
  console.log(`  voxpipe stream decoder: ${result.stream.decodeMs} ms, ${result.stream.xRealtime}x real time`);
  console.log(`  library, whole buffer:  ${result.library.decodeMs} ms, ${result.library.xRealtime}x real time`);
}

const out = resultPath('decoders.json');
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${out}`);
