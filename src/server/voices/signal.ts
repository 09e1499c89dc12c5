/**
 * Small signal helpers of the voice analysis: framing and frame energies.
 * Pure functions over Float32Array. (Resampling is the server's one
 * resampler, `server/audio/resample.ts`.)
 */

/** Rate every analysis runs at: enough for F0 up to 500 Hz and syllable envelopes. */
export const ANALYSIS_RATE = 16_000;

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
