/**
 * Whole-text synthesis for the HTTP routes: run the engine, apply the
 * `engineFailure` and `latencyMs` faults (the engines know nothing of
 * faults), and produce one complete file. mp3 and opus are encoded while the
 * engine runs, yielding to the event loop regularly: their pure-JS encoders
 * are slow enough that encoding a long text in one go would stall every
 * other request of the server.
 */
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { AudioFormat, PcmInfo } from '../../../protocol/audio.js';
import { createStreamEncoder, encodeWhole, type StreamEncoder } from '../../audio/encoder.js';
import type { ServerContext } from '../../context.js';
import type { VoiceParams } from '../../engines/types.js';

/** Engine parameters of one voice on one model (`rate`: the model's speaking-rate factor). */
export type EngineVoiceParams = VoiceParams;

export interface SynthesisOptions {
  voice: EngineVoiceParams;
  /** 0.5 to 2; default 1. */
  speed?: number;
  /** 0 to 10; default 1. */
  volume?: number;
  signal?: AbortSignal;
}

/** The engine or an encoder failed (a real failure or an injected `engineFailure` fault). */
export class SynthesisError extends Error {
  override name = 'SynthesisError';
}

/** Longest stretch of encoding work between two yields to the event loop. */
const MAX_BUSY_MS = 20; // ms
/** PCM fed to an encoder at once when encoding a finished buffer: 0.5 s at 24 kHz. */
const ENCODE_SLICE_BYTES = 24_000;

/** PCM layout of the engine's output (s16le mono). */
export function enginePcmInfo(ctx: ServerContext): PcmInfo {
  return { sampleRate: ctx.engine.sampleRate, channels: 1, bitDepth: 16 };
}

/** Formats whose file is the PCM plus at most a header: encoded at the end, cheaply. */
function isCheap(format: AudioFormat): boolean {
  return format === 'pcm' || format === 'wav';
}

function failure(what: string, err: unknown): SynthesisError {
  if (err instanceof SynthesisError) return err;
  return new SynthesisError(`${what}: ${(err as Error)?.message ?? String(err)}`);
}

/** Yields to the event loop when more than MAX_BUSY_MS passed since the last yield. */
class Pacer {
  #since = performance.now();
  async maybeYield(): Promise<void> {
    if (performance.now() - this.#since < MAX_BUSY_MS) return;
    await yieldToLoop();
    this.#since = performance.now();
  }
}

export interface SynthesizedFile {
  /** The complete file. */
  file: Buffer;
  /** The engine's PCM (s16le mono at `enginePcmInfo`). */
  pcm: Buffer;
}

/**
 * Synthesize `text` into one complete `format` file (wav with exact sizes).
 * Throws SynthesisError when the engine or the encoder fails, or an armed
 * `engineFailure` fault matches the text.
 */
export async function synthesizeFile(ctx: ServerContext, text: string, format: AudioFormat, options: SynthesisOptions): Promise<SynthesizedFile> {
  const fault = ctx.faults.take('engineFailure', (f) => !f.match || text.includes(f.match));
  const failAfter = fault ? (fault.afterChunks ?? 0) : Infinity;
  if (failAfter === 0) throw new SynthesisError('speech engine failed (injected fault)');
  const pcm: Buffer[] = [];
  const encoded: Buffer[] = [];
  let encoder: StreamEncoder | undefined;
  const pacer = new Pacer();
  const synthesis = { voice: options.voice, speed: options.speed ?? 1, volume: options.volume ?? 1, ...(options.signal ? { signal: options.signal } : {}) };
  try {
    if (!isCheap(format)) encoder = createStreamEncoder(format, enginePcmInfo(ctx));
    for await (const chunk of ctx.engine.synthesize(text, synthesis)) {
      // Read per chunk so a test can slow down or speed up a running generation.
      const latencyMs = ctx.faults.latencyMs;
      if (latencyMs > 0) await sleep(latencyMs);
      pcm.push(chunk);
      if (pcm.length >= failAfter) throw new SynthesisError('speech engine failed (injected fault)');
      if (encoder) {
        encoded.push(encoder.write(chunk));
        await pacer.maybeYield();
      }
    }
    const all = Buffer.concat(pcm);
    if (encoder) {
      encoded.push(encoder.end());
      return { file: Buffer.concat(encoded), pcm: all };
    }
    return { file: encodeWhole(format, all, enginePcmInfo(ctx)), pcm: all };
  } catch (err) {
    throw failure('speech generation failed', err);
  }
}

/**
 * Encode finished engine PCM as one complete `format` file, yielding to the
 * event loop between slices for the slow formats. Throws SynthesisError.
 */
export async function encodeFile(ctx: ServerContext, format: AudioFormat, pcm: Buffer): Promise<Buffer> {
  try {
    if (isCheap(format)) return encodeWhole(format, pcm, enginePcmInfo(ctx));
    const encoder = createStreamEncoder(format, enginePcmInfo(ctx));
    const out: Buffer[] = [];
    const pacer = new Pacer();
    for (let at = 0; at < pcm.length; at += ENCODE_SLICE_BYTES) {
      out.push(encoder.write(pcm.subarray(at, at + ENCODE_SLICE_BYTES)));
      await pacer.maybeYield();
    }
    out.push(encoder.end());
    return Buffer.concat(out);
  } catch (err) {
    throw failure(`encoding ${format} failed`, err);
  }
}
