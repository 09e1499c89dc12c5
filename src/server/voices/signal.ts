/**
 * Small signal helpers of the voice analysis: resampling to the analysis
 * rate, framing and frame energies. Pure functions over Float32Array.
 */

/** Rate every analysis runs at: enough for F0 up to 500 Hz and syllable envelopes. */
export const ANALYSIS_RATE = 16_000;

/**
 * `samples` at `fromRate` resampled to `toRate`. Going down, each output
 * sample averages the input it covers (a box low-pass, so high partials do
 * not alias into the pitch range); going up, linear interpolation.
 */
export function resample(samples: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (fromRate === toRate) return samples;
  const ratio = fromRate / toRate;
  const length = Math.floor(samples.length / ratio);
  const out = new Float32Array(length);
  if (ratio > 1) {
    for (let i = 0; i < length; i++) {
      const from = Math.floor(i * ratio);
      const to = Math.min(samples.length, Math.max(from + 1, Math.floor((i + 1) * ratio)));
      let sum = 0;
      for (let j = from; j < to; j++) sum += samples[j]!;
      out[i] = sum / (to - from);
    }
  } else {
    for (let i = 0; i < length; i++) {
      const pos = i * ratio;
      const j = Math.floor(pos);
      const frac = pos - j;
      const a = samples[j] ?? 0;
      const b = samples[j + 1] ?? a;
      out[i] = a + (b - a) * frac;
    }
  }
  return out;
}

/** RMS of each hop-spaced frame of `frameSize` samples. */
export function frameRms(samples: Float32Array, frameSize: number, hop: number): Float32Array {
  const count = samples.length < frameSize ? 0 : Math.floor((samples.length - frameSize) / hop) + 1;
  const out = new Float32Array(count);
  for (let f = 0; f < count; f++) {
    let sum = 0;
    const start = f * hop;
    for (let i = start; i < start + frameSize; i++) sum += samples[i]! * samples[i]!;
    out[f] = Math.sqrt(sum / frameSize);
  }
  return out;
}

/** The `q` quantile (0..1) of `values` (which are not modified). */
export function quantile(values: ArrayLike<number>, q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  const pos = Math.min(sorted.length - 1, Math.max(0, q * (sorted.length - 1)));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
