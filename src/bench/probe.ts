/**
 * One measured stream: open it (warm) or not (cold), start the timer when the
 * text is written, and stop it at the first DECODABLE audio: the stream's
 * bytes go through the pipeline's own decoder (`createDecoder`: pcm cut to
 * whole sample frames, wav past its header, mp3 and opus decoded) and the
 * timer stops at the decoder's first output, not at the first byte of a
 * container header. The decoded audio's arrival times then give the
 * real-time factor and the playback underruns.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { ServiceConfig } from '../config.js';
import { VoxpipeError } from '../errors.js';
import type { ReadyInfo } from '../transport.js';
import type { SpeechStream } from '../stream/speech-stream.js';
import { createDecoder } from '../codecs/decoder.js';
import { measureSeams } from '../sinks/seams.js';
import type { Decoder } from '../codecs/base.js';
import { Variant, type BenchCase } from './cases.js';
import { replayPlayback, type Arrival } from './playback.js';
import { createBenchStream, isHttpTransport, warmHttpConnection } from './streams.js';
import { BENCH_TEXTS } from './texts.js';

/** What one stream of one run measured. Times in ms. */
export interface RunSample {
  /**
   * Realtime: `open()` to `ready` (connect, authenticate, start). Warm runs
   * measure it before the timer starts; cold runs inside the timed span.
   * HTTP transports have no connection step of their own: absent.
   */
  connectMs?: number;
  /** Text written to the first decodable audio. Absent when the run failed before any audio. */
  ttfaMs?: number;
  /** Text written to the last decoded audio. */
  generationMs?: number;
  /** Decoded audio, ms. */
  audioMs: number;
  /** Encoded bytes received. */
  bytes: number;
  underruns: number;
  underrunMs: number;
  retries: number;
  /** Error code when the stream failed. */
  error?: string;
  /** Every seam between segments (pcm mono streams): silence each side, the sample jump (`sinks/seams.ts`). */
  seams?: SeamSample[];
}

/** One seam of one stream. */
export interface SeamSample {
  silenceBeforeMs: number;
  silenceAfterMs: number;
  gapMs: number;
  jump: number;
  click: boolean;
}

/** A stream made ready for its timed part. */
interface Prepared {
  speech: SpeechStream;
  decoder: Decoder | undefined;
  connectMs: number | undefined;
  failed: string | undefined;
}

function errorCode(err: unknown): string {
  if (err instanceof VoxpipeError) return err.code;
  return 'internal_error';
}

/** Wait until a decoder's `_construct` (WebAssembly instantiation for mp3/opus: ~25 ms) is done. */
function decoderConstructed(decoder: Decoder): Promise<void> {
  // Writes wait for construction; an empty one is a no-op for every decoder.
  return new Promise((resolve, reject) => decoder.write(Buffer.alloc(0), (err) => (err ? reject(err) : resolve())));
}

function newDecoder(info: Pick<ReadyInfo, 'format' | 'sampleRate' | 'channels' | 'bitDepth'>): Decoder {
  return createDecoder({ format: info.format, sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth });
}

/** Formats whose decoder loads WebAssembly: built and loaded before the timer starts. */
function needsPreload(format: string): boolean {
  return format === 'mp3' || format === 'opus';
}

/**
 * The decoder, built before the timer where building it costs time (mp3 and
 * opus take their layout from the bitstream, so the announced one is not
 * needed); pcm and wav decoders cost nothing and are built at the first
 * audio from the layout in `ready`.
 */
async function preloadDecoder(format: BenchCase['format']): Promise<Decoder | undefined> {
  if (!needsPreload(format)) return undefined;
  const decoder = newDecoder({ format, sampleRate: 48_000, channels: 1, bitDepth: 16 });
  await decoderConstructed(decoder);
  return decoder;
}

/**
 * Everything before the timer: the stream, and for warm runs the open
 * connection (realtime) or a warm keep-alive connection (HTTP), and the
 * decoder built and loaded.
 */
async function prepare(config: ServiceConfig, c: BenchCase, signal: AbortSignal): Promise<Prepared> {
  const speech = createBenchStream(config, c, signal);
  // An 'error' without listener would crash the process; the run records it instead.
  speech.on('error', () => undefined);
  const decoder = await preloadDecoder(c.format);
  if (c.variant === Variant.cold) return { speech, decoder, connectMs: undefined, failed: undefined };
  if (isHttpTransport(c.transport)) await warmHttpConnection(config, c, signal);
  const t0 = performance.now();
  try {
    await speech.open();
    const connectMs = isHttpTransport(c.transport) ? undefined : performance.now() - t0;
    return { speech, decoder, connectMs, failed: undefined };
  } catch (err) {
    decoder?.destroy();
    speech.destroy();
    return { speech, decoder: undefined, connectMs: undefined, failed: errorCode(err) };
  }
}

/** The timed part: write the text, wait for the end, then replay playback. */
async function measure(p: Prepared, c: BenchCase): Promise<RunSample> {
  const { speech } = p;
  const arrivals: Arrival[] = [];
  let bytes = 0;
  let readyAt: number | undefined;
  let error: string | undefined;
  let decoder: Decoder | undefined;
  let resolveDecoded: () => void = () => undefined;
  const decoded = new Promise<void>((resolve) => (resolveDecoded = resolve));
  const attach = (d: Decoder): Decoder => {
    d.on('data', (pcm: Buffer) => {
      arrivals.push({ atMs: performance.now(), bytes: pcm.length });
      if (c.format === 'pcm') pcmParts.push(pcm);
    });
    d.on('end', resolveDecoded);
    d.on('error', (err) => {
      error ??= errorCode(err);
      resolveDecoded();
    });
    return d;
  };
  if (p.decoder) decoder = attach(p.decoder);
  // Seams: the decoded PCM and where each segment's bytes end (pcm streams: bytes are samples).
  const pcmParts: Buffer[] = [];
  const segmentBytes: number[] = [];
  if (c.format === 'pcm') speech.on('segment', (seg) => segmentBytes.push(seg.audioBytes));
  speech.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    // `ready` always precedes audio, so the announced layout is known here.
    decoder ??= attach(newDecoder(speech.info ?? { format: c.format, sampleRate: 24_000, channels: 1, bitDepth: 16 }));
    decoder.write(chunk);
  });
  speech.once('ready', () => (readyAt = performance.now()));
  const ended = new Promise<void>((resolve) => {
    speech.on('end', resolve);
    speech.on('close', resolve);
    speech.on('error', (err) => {
      error ??= errorCode(err);
      resolve();
    });
  });
  const t0 = performance.now();
  speech.end(BENCH_TEXTS[c.text]);
  await ended;
  if (decoder) {
    decoder.end();
    await decoded;
  }
  const sample: RunSample = { audioMs: 0, bytes, underruns: 0, underrunMs: 0, retries: speech.summary().retries };
  if (error) sample.error = error;
  const connectMs = c.variant === Variant.cold ? (readyAt === undefined || isHttpTransport(c.transport) ? undefined : readyAt - t0) : p.connectMs;
  if (connectMs !== undefined) sample.connectMs = connectMs;
  const first = arrivals[0];
  const last = arrivals[arrivals.length - 1];
  if (first && last) {
    sample.ttfaMs = first.atMs - t0;
    sample.generationMs = last.atMs - t0;
    const playback = await replayPlayback(arrivals, decoder!.pcmInfo);
    sample.audioMs = playback.audioMs;
    sample.underruns = playback.underruns;
    sample.underrunMs = playback.underrunMs;
  } else if (!error) {
    sample.error = 'no_audio';
  }
  const info = decoder?.pcmInfo;
  if (!error && c.format === 'pcm' && info?.channels === 1 && segmentBytes.length > 1) sample.seams = seamsOf(Buffer.concat(pcmParts), segmentBytes, info.sampleRate);
  return sample;
}

/** The seams of one stream's mono PCM, its segments' byte counts in order. */
function seamsOf(pcm: Buffer, segmentBytes: readonly number[], sampleRate: number): SeamSample[] {
  const samples = new Int16Array(Math.floor(pcm.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2);
  const boundaries: number[] = [];
  let bytes = 0;
  for (const b of segmentBytes.slice(0, -1)) boundaries.push((bytes += b) / 2);
  return measureSeams(samples, boundaries, sampleRate).map(({ silenceBeforeMs, silenceAfterMs, gapMs, jump, click }) => ({ silenceBeforeMs, silenceAfterMs, gapMs, jump, click }));
}

/**
 * One run of a case: `concurrency` streams at once. Warm runs open every
 * stream first, then write all the texts; each stream's timer starts at its
 * own write. A run never throws: failures are samples with `error`.
 */
export async function runCase(config: ServiceConfig, c: BenchCase, runTimeoutMs: number): Promise<RunSample[]> {
  const signal = AbortSignal.timeout(runTimeoutMs);
  // Every stream of the run listens to this one deadline (a few listeners each): not a leak, so no MaxListenersExceededWarning.
  setMaxListeners(Math.max(10, c.concurrency * 16), signal);
  const prepared = await Promise.all(
    Array.from({ length: c.concurrency }, () =>
      prepare(config, c, signal).catch((err: unknown): Prepared | RunSample => ({ audioMs: 0, bytes: 0, underruns: 0, underrunMs: 0, retries: 0, error: errorCode(err) })),
    ),
  );
  return Promise.all(
    prepared.map(async (p): Promise<RunSample> => {
      if (!('speech' in p)) return p;
      if (p.failed !== undefined) return { audioMs: 0, bytes: 0, underruns: 0, underrunMs: 0, retries: p.speech.summary().retries, error: p.failed };
      try {
        return await measure(p, c);
      } catch (err) {
        p.speech.destroy();
        return { audioMs: 0, bytes: 0, underruns: 0, underrunMs: 0, retries: 0, error: errorCode(err) };
      }
    }),
  );
}
