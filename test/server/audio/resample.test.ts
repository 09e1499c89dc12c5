import { describe, expect, it } from 'vitest';
import { Resampler } from '../../../src/server/audio/resample.js';
import { sinePcm, sineHz } from './helpers.js';

function int16(pcm: Buffer): Int16Array {
  return new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
}

function run(resampler: Resampler, input: Int16Array, chunk: number): Int16Array {
  const parts: number[] = [];
  for (let i = 0; i < input.length; i += chunk) parts.push(...resampler.push(input.subarray(i, i + chunk)));
  parts.push(...resampler.flush());
  return Int16Array.from(parts);
}

describe('Resampler', () => {
  const input = int16(sinePcm(22_050, 0.5, 440));

  it('gives outRate/inRate as many samples and keeps the frequency', () => {
    const out = run(new Resampler(22_050, 24_000), input, 1000);
    expect(out.length).toBe(Math.round((input.length * 24_000) / 22_050));
    const samples = Float32Array.from(out, (s) => s / 32_768);
    expect(sineHz({ samples, sampleRate: 24_000, errors: 0 })).toBeCloseTo(440, -1);
  });

  it('does not depend on how the input is chunked', () => {
    const a = run(new Resampler(22_050, 24_000), input, 1000);
    const b = run(new Resampler(22_050, 24_000), input, 37);
    expect(Buffer.from(b.buffer).equals(Buffer.from(a.buffer))).toBe(true);
  });

  it('passes equal rates through untouched', () => {
    const resampler = new Resampler(24_000, 24_000);
    expect(resampler.push(input)).toBe(input);
    expect(resampler.flush()).toHaveLength(0);
  });

  it('starts afresh after flush', () => {
    const resampler = new Resampler(22_050, 24_000);
    const first = run(resampler, input, 500);
    const second = run(resampler, input, 500);
    expect(Buffer.from(second.buffer).equals(Buffer.from(first.buffer))).toBe(true);
  });
});
