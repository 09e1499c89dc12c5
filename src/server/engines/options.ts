import { LIMITS } from '../../protocol/limits.js';
import type { SynthesisOptions } from './types.js';

/** Synthesis options with defaults applied and values clamped to the spec's ranges. */
export interface ResolvedSynthesis {
  /** Speed times the voice's rate factor: 1 = normal pace, 2 = twice as fast. */
  pace: number;
  /** Linear gain 0..10. */
  gain: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * Applies the defaults (speed 1, volume 1) and clamps out-of-range values
 * rather than failing: the server validates requests before they get here, so
 * a stray value must not break synthesis.
 */
export function resolveSynthesis(options: SynthesisOptions): ResolvedSynthesis {
  const speed = Number.isFinite(options.speed) ? clamp(options.speed ?? 1, LIMITS.speedMin, LIMITS.speedMax) : LIMITS.speedDefault;
  const rate = Number.isFinite(options.voice.rate) && options.voice.rate > 0 ? options.voice.rate : 1;
  const gain = Number.isFinite(options.volume) ? clamp(options.volume ?? 1, LIMITS.volumeMin, LIMITS.volumeMax) : 1;
  return { pace: speed * rate, gain };
}
