/**
 * The resampler (src/telephony/resample.ts) is band-limited: a tone inside
 * the telephone band passes at its level, a tone above the new Nyquist
 * frequency is removed instead of folding back into the band (what dropping
 * samples or linear interpolation would do), and the output does not
 * depend on how the input was chunked.
 */
import { describe, expect, it } from 'vitest';
import { VoxpipeError } from '../../src/errors.js';
import { Resampler, resample } from '../../src/telephony/resample.js';

function tone(hz: number, rate: number, samples: number, amplitude = 10_000): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));
}

/** Level in dB relative to a sine of `amplitude`, edges (filter warm-up) left out. */
function levelDb(x: Int16Array, amplitude = 10_000, edge = 200): number {
  let sum = 0;
  for (let i = edge; i < x.length - edge; i++) sum += x[i]! * x[i]!;
  const rms = Math.sqrt(sum / (x.length - 2 * edge));
  return 20 * Math.log10(Math.max(rms, 1e-9) / (amplitude / Math.SQRT2));
}

/** Level of one frequency (a single-bin DFT), dB relative to a sine of `amplitude`. */
function binDb(x: Int16Array, hz: number, rate: number, amplitude = 10_000): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < x.length; i++) {
    re += x[i]! * Math.cos((2 * Math.PI * hz * i) / rate);
    im -= x[i]! * Math.sin((2 * Math.PI * hz * i) / rate);
  }
  return 20 * Math.log10(Math.max((2 * Math.hypot(re, im)) / x.length, 1e-9) / amplitude);
}

describe('Resampler', () => {
  for (const rate of [24_000, 22_050, 16_000, 48_000]) {
    it(`${rate} Hz -> 8 kHz: 1 kHz passes within 0.1 dB; 6 kHz is 60 dB down, not aliased to ${8000 - 6000} Hz`, () => {
      const pass = resample(tone(1000, rate, rate), rate, 8000);
      expect(pass.length).toBe(8000);
      expect(Math.abs(levelDb(pass))).toBeLessThan(0.1);
      const stop = resample(tone(6000, rate, rate), rate, 8000);
      expect(levelDb(stop)).toBeLessThan(-60);
      // Dropping samples would put the 6 kHz tone at 2 kHz at full level.
      expect(binDb(stop, 2000, 8000)).toBeLessThan(-60);
    });
  }

  it('a 3 kHz tone stays a 3 kHz tone (the phases line up in time)', () => {
    const out = resample(tone(3000, 22_050, 22_050), 22_050, 8000);
    expect(binDb(out, 3000, 8000)).toBeGreaterThan(-0.2);
  });

  it('gives the same samples however the input is chunked, ceil(n * to / from) in all', () => {
    const input = tone(1234, 22_050, 9_999);
    const whole = resample(input, 22_050, 8000);
    expect(whole.length).toBe(Math.ceil((9_999 * 8000) / 22_050));
    const r = new Resampler({ fromRate: 22_050, toRate: 8000 });
    const parts: number[] = [];
    let seed = 7;
    for (let i = 0; i < input.length; ) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const n = 1 + (seed % 500);
      parts.push(...r.push(input.subarray(i, i + n)));
      i += n;
    }
    parts.push(...r.flush());
    expect(parts).toEqual(Array.from(whole));
  });

  it('refuses a rate that is not a whole positive number of Hz, naming it', () => {
    expect(() => new Resampler({ fromRate: 0, toRate: 8000 })).toThrow(VoxpipeError);
    expect(() => new Resampler({ fromRate: 22_050.5, toRate: 8000 })).toThrow(/fromRate .* 22050\.5/);
    expect(() => new Resampler({ fromRate: 24_000, toRate: -1 })).toThrow(/toRate/);
  });
});
