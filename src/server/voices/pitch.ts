/**
 * Fundamental frequency by normalized autocorrelation on voiced frames.
 * A frame is voiced when it is loud enough relative to the recording and
 * its best normalized autocorrelation peak is strong; the pitch of the
 * recording is the median over voiced frames, which shrugs off the octave
 * errors and glitches of a few frames.
 */
import { ANALYSIS_RATE, frameRms, quantile } from './signal.js';

export interface PitchOptions {
  /** Lowest F0 searched; default 60 Hz. */
  minHz?: number;
  /** Highest F0 searched; default 500 Hz. */
  maxHz?: number;
  /** Correlation window; default 25 ms. */
  windowMs?: number;
  /** Hop between frames; default 20 ms (the median needs many frames, not every frame). */
  hopMs?: number;
  /** Normalized correlation a voiced frame reaches; default 0.6. */
  voicingThreshold?: number;
}

export interface PitchEstimate {
  /** Median F0 of voiced frames in Hz; undefined when no frame is voiced. */
  medianHz: number | undefined;
  /** F0 of each voiced frame, in time order. */
  frameHz: number[];
  /** Share of frames with energy that are voiced (0..1). */
  voicedRatio: number;
}

/** Frames quieter than this share of the loud (95th percentile) frames are silence. */
const SILENCE_RATIO = 0.1;
/** Absolute floor of a frame's RMS (digital silence and dither). */
const SILENCE_FLOOR = 1e-3;
/** A shorter lag whose correlation is at least this share of the best wins (avoids picking 2T). */
const OCTAVE_PREFERENCE = 0.9;

/**
 * Correlation of the frame at `start` with itself `lag` samples later,
 * normalized to -1..1.
 */
function ncc(x: Float32Array, start: number, window: number, lag: number): number {
  let xy = 0;
  let xx = 0;
  let yy = 0;
  for (let i = start; i < start + window; i++) {
    const a = x[i]!;
    const b = x[i + lag]!;
    xy += a * b;
    xx += a * a;
    yy += b * b;
  }
  return xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
}

/** The F0 of one frame in Hz, or undefined when unvoiced. */
function framePitch(x: Float32Array, start: number, window: number, minLag: number, maxLag: number, threshold: number): number | undefined {
  const r = new Float32Array(maxLag + 2);
  let best = -1;
  for (let lag = minLag - 1; lag <= maxLag + 1; lag++) r[lag] = ncc(x, start, window, lag);
  for (let lag = minLag; lag <= maxLag; lag++) if (r[lag]! > best) best = r[lag]!;
  if (best < threshold) return undefined;
  for (let lag = minLag; lag <= maxLag; lag++) {
    const c = r[lag]!;
    if (c >= OCTAVE_PREFERENCE * best && c >= r[lag - 1]! && c >= r[lag + 1]!) {
      // Parabolic interpolation between the neighbours refines the period below one sample.
      const a = r[lag - 1]!;
      const b = r[lag + 1]!;
      const denom = a - 2 * c + b;
      const shift = denom < 0 ? (0.5 * (a - b)) / denom : 0;
      return ANALYSIS_RATE / (lag + shift);
    }
  }
  return undefined;
}

/** Estimate the pitch of `samples` (mono, at ANALYSIS_RATE). */
export function estimatePitch(samples: Float32Array, options: PitchOptions = {}): PitchEstimate {
  const minHz = options.minHz ?? 60; // Hz
  const maxHz = options.maxHz ?? 500; // Hz
  const window = Math.round(((options.windowMs ?? 25) * ANALYSIS_RATE) / 1000); // 25 ms
  const hop = Math.round(((options.hopMs ?? 20) * ANALYSIS_RATE) / 1000); // 20 ms
  const threshold = options.voicingThreshold ?? 0.6;
  const minLag = Math.floor(ANALYSIS_RATE / maxHz);
  const maxLag = Math.ceil(ANALYSIS_RATE / minHz);
  const span = window + maxLag + 2;
  const rms = frameRms(samples, span, hop);
  const loud = quantile(rms, 0.95);
  const gate = Math.max(SILENCE_FLOOR, loud * SILENCE_RATIO);
  const frameHz: number[] = [];
  let active = 0;
  for (let f = 0; f < rms.length; f++) {
    if (rms[f]! < gate) continue;
    active++;
    const hz = framePitch(samples, f * hop, window, minLag, maxLag, threshold);
    if (hz !== undefined) frameHz.push(hz);
  }
  return {
    medianHz: frameHz.length > 0 ? quantile(frameHz, 0.5) : undefined,
    frameHz,
    voicedRatio: active > 0 ? frameHz.length / active : 0,
  };
}
