/**
 * An engine whose output is resampled to another PCM rate: how a dialect
 * takes the rate a deployment chooses (8 to 48 kHz) while the service's
 * rules stay the same. Everything downstream (the realtime `ready`/`audio`
 * PCM metadata, WAV headers, the `x-*` layout headers, encoders) reads the
 * rate from the engine, so all of them state the drawn rate. The resampler
 * counts whole samples, so the output does not depend on how the engine
 * chunks its PCM: the same text gives the same bytes at that rate.
 */
import { Resampler } from '../audio/resample.js';
import type { SpeechEngine, SynthesisOptions } from './types.js';

function int16Of(chunk: Buffer): Int16Array {
  // A copy: the chunk's offset may not be 2-aligned.
  const copy = new Int16Array(chunk.length >> 1);
  Buffer.from(copy.buffer).set(chunk.subarray(0, copy.length * 2));
  return copy;
}

function bytesOf(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** `engine` at `sampleRate` (the engine itself when it already is). */
export function resampledEngine(engine: SpeechEngine, sampleRate: number): SpeechEngine {
  if (engine.sampleRate === sampleRate) return engine;
  return {
    name: engine.name,
    sampleRate,
    async *synthesize(text: string, options: SynthesisOptions): AsyncIterable<Buffer> {
      const resampler = new Resampler(engine.sampleRate, sampleRate);
      for await (const chunk of engine.synthesize(text, options)) {
        const out = resampler.push(int16Of(chunk));
        if (out.length > 0) yield bytesOf(out);
      }
      const rest = resampler.flush();
      if (rest.length > 0) yield bytesOf(rest);
    },
    warmUp: () => engine.warmUp(),
    close: () => engine.close(),
  };
}
