/** Helpers shared by the engine tests. */
import type { SpeechEngine, SynthesisOptions } from '../../../src/server/engines/types.js';

export const VOICE = { basePitchHz: 110, rate: 1, espeakVoice: 'en-us' } as const;

/** Collects every chunk of one synthesis. */
export async function collect(engine: SpeechEngine, text: string, options: Partial<SynthesisOptions> = {}): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of engine.synthesize(text, { voice: VOICE, ...options })) chunks.push(chunk);
  return chunks;
}

export function samplesOf(pcm: Buffer): Int16Array {
  const copy = Buffer.from(pcm); // aligned copy
  return new Int16Array(copy.buffer, copy.byteOffset, copy.length / 2);
}

export function rms(pcm: Buffer): number {
  const samples = samplesOf(pcm);
  let sum = 0;
  for (const s of samples) sum += s * s;
  return samples.length === 0 ? 0 : Math.sqrt(sum / samples.length);
}

export function durationMs(pcm: Buffer, sampleRate: number): number {
  return (pcm.length / 2 / sampleRate) * 1000;
}
