/**
 * Speaking rate from the energy envelope: syllable nuclei are the loud
 * humps of speech, so counting the prominent peaks of a smoothed RMS
 * envelope, per second of non-silent audio, estimates syllables per second
 * (the articulation rate; pauses do not count).
 */
import { ANALYSIS_RATE, frameRms, quantile } from './signal.js';

export interface RateEstimate {
  /** Prominent envelope peaks per second of non-silent audio; undefined when there is too little speech. */
  syllablesPerSecond: number | undefined;
  /** Peaks counted. */
  peaks: number;
  /** Non-silent audio, ms. */
  speechMs: number;
}

const FRAME_MS = 20; // ms of each RMS frame
const HOP_MS = 10; // ms between frames
/** Moving-average length over frames (50 ms): merges the ripples inside a syllable. */
const SMOOTH_FRAMES = 5;
/** Peaks closer than this are one syllable (no one speaks 12 syllables a second). */
const MIN_PEAK_DISTANCE_MS = 80;
/** Between two syllables the envelope falls below this share of the smaller peak. */
const VALLEY_RATIO = 0.75;
/** Frames quieter than this share of the loud frames are pauses. */
const SILENCE_RATIO = 0.1;
const SILENCE_FLOOR = 1e-3;
/** Less speech than this gives no estimate. */
const MIN_SPEECH_MS = 300;

function smooth(values: Float32Array, length: number): Float32Array {
  const out = new Float32Array(values.length);
  const half = Math.floor(length / 2);
  for (let i = 0; i < values.length; i++) {
    let sum = 0;
    let n = 0;
    for (let j = Math.max(0, i - half); j <= Math.min(values.length - 1, i + half); j++) {
      sum += values[j]!;
      n++;
    }
    out[i] = sum / n;
  }
  return out;
}

/** Estimate the speaking rate of `samples` (mono, at ANALYSIS_RATE). */
export function estimateRate(samples: Float32Array): RateEstimate {
  const hop = Math.round((HOP_MS * ANALYSIS_RATE) / 1000);
  const env = smooth(frameRms(samples, Math.round((FRAME_MS * ANALYSIS_RATE) / 1000), hop), SMOOTH_FRAMES);
  const gate = Math.max(SILENCE_FLOOR, quantile(env, 0.95) * SILENCE_RATIO);
  let active = 0;
  for (const v of env) if (v >= gate) active++;
  const speechMs = active * HOP_MS;
  const minDistance = Math.round(MIN_PEAK_DISTANCE_MS / HOP_MS);
  const peaks: number[] = [];
  for (let i = 1; i < env.length - 1; i++) {
    const v = env[i]!;
    if (v < gate || v < env[i - 1]! || v <= env[i + 1]!) continue;
    const last = peaks.at(-1);
    if (last === undefined) {
      peaks.push(i);
      continue;
    }
    let valley = Infinity;
    for (let j = last; j <= i; j++) valley = Math.min(valley, env[j]!);
    const separated = i - last >= minDistance && valley < VALLEY_RATIO * Math.min(v, env[last]!);
    if (separated) peaks.push(i);
    else if (v > env[last]!) peaks[peaks.length - 1] = i; // the same syllable: keep its highest point
  }
  return {
    syllablesPerSecond: speechMs >= MIN_SPEECH_MS ? peaks.length / (speechMs / 1000) : undefined,
    peaks: peaks.length,
    speechMs,
  };
}
