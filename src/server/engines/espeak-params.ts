/**
 * Maps voxpipe's voice parameters onto eSpeak NG's: words per minute, the
 * 0..99 pitch setting and the voice name. Pure, so it is tested alone.
 */
import type { VoiceParams } from './types.js';

/** eSpeak's own default rate, in words per minute, taken as pace 1. */
export const ESPEAK_DEFAULT_WPM = 175;
const MIN_WPM = 80; // eSpeak refuses slower
const MAX_WPM = 450; // eSpeak's upper limit

/** Words per minute for a pace (speed times the voice's rate factor). */
export function espeakRate(pace: number): number {
  return Math.round(Math.min(MAX_WPM, Math.max(MIN_WPM, ESPEAK_DEFAULT_WPM * pace)));
}

/**
 * Median F0 of eSpeak NG 1.52 voices (measured on this package with an
 * autocorrelation pitch tracker) at pitch settings 0, 25, 50, 75, 99, as a
 * ratio of the F0 at the default 50. Male voices sit near 100 Hz at 50, the
 * `+f` variants near 200 Hz.
 */
const PITCH_SETTINGS = [0, 25, 50, 75, 99] as const;
const PITCH_RATIOS = [0.67, 0.8, 1, 1.27, 1.66] as const;
const MALE_F0_AT_DEFAULT_HZ = 100;
const FEMALE_F0_AT_DEFAULT_HZ = 200;

/** The 0..99 eSpeak pitch setting that gives `voice.basePitchHz` on `voice.espeakVoice`. */
export function espeakPitch(voice: Pick<VoiceParams, 'basePitchHz' | 'espeakVoice'>): number {
  if (!Number.isFinite(voice.basePitchHz) || voice.basePitchHz <= 0) return 50;
  const variant = splitVoice(voice.espeakVoice).variant;
  const defaultHz = variant.startsWith('+f') ? FEMALE_F0_AT_DEFAULT_HZ : MALE_F0_AT_DEFAULT_HZ;
  const ratio = voice.basePitchHz / defaultHz;
  const first = PITCH_RATIOS[0];
  const last = PITCH_RATIOS[PITCH_RATIOS.length - 1] ?? first;
  if (ratio <= first) return 0;
  if (ratio >= last) return 99;
  for (let i = 1; i < PITCH_RATIOS.length; i++) {
    const hi = PITCH_RATIOS[i] ?? last;
    const lo = PITCH_RATIOS[i - 1] ?? first;
    if (ratio <= hi) {
      const from = PITCH_SETTINGS[i - 1] ?? 0;
      const to = PITCH_SETTINGS[i] ?? 99;
      return Math.round(from + ((ratio - lo) / (hi - lo)) * (to - from));
    }
  }
  return 99;
}

/** `'en-us+f3'` -> `{ base: 'en-us', variant: '+f3' }`. */
export function splitVoice(espeakVoice: string): { base: string; variant: string } {
  const plus = espeakVoice.indexOf('+');
  return plus < 0 ? { base: espeakVoice, variant: '' } : { base: espeakVoice.slice(0, plus), variant: espeakVoice.slice(plus) };
}

const LANGUAGE_TAG = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$/i;

/**
 * Voice names to try in order. A `language` whose primary subtag differs from
 * the voice's (e.g. `fr` on `en-us+f3`) picks that language's voice with the
 * same variant (`fr+f3`); the voice itself follows as a fallback, then
 * `en-us`, so synthesis never fails for an unknown language.
 */
export function espeakVoiceCandidates(voice: Pick<VoiceParams, 'espeakVoice'>, language?: string): string[] {
  const { base, variant } = splitVoice(voice.espeakVoice);
  const candidates: string[] = [];
  if (language !== undefined && LANGUAGE_TAG.test(language)) {
    const tag = language.toLowerCase();
    const primary = tag.split('-')[0] ?? tag;
    // Voice names may carry a family prefix: 'gmw/en-US'.
    const voicePrimary = (base.toLowerCase().split('/').at(-1) ?? '').split('-')[0];
    if (primary !== voicePrimary) candidates.push(`${tag}${variant}`);
  }
  candidates.push(voice.espeakVoice);
  if (base !== 'en-us') candidates.push(`en-us${variant}`);
  return [...new Set(candidates)];
}
