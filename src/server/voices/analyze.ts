/**
 * Voice analysis for cloning: decoded reference audio in, the engine
 * parameters of a personal voice out (pitch, speaking rate, eSpeak voice).
 * The analysis runs on at most MAX_ANALYSIS_MS of audio at 16 kHz.
 */
import { estimatePitch } from './pitch.js';
import { estimateRate } from './rate.js';
import { resample } from '../audio/resample.js';
import { ANALYSIS_RATE } from './signal.js';
import type { DecodedAudio } from '../audio/decode.js';
import { DEFAULT_LANGUAGE, espeakVoiceFor, genderForPitch, type Gender, type VoiceLanguage } from './languages.js';

/** Reference audio must last at least this long: 1 s. */
export const MIN_REFERENCE_MS = 1_000;
/**
 * Only the first 20 s are analysed: enough for a stable median, and it
 * bounds the synchronous work (about 40 ms per second of audio here).
 */
export const MAX_ANALYSIS_MS = 20_000;
/**
 * Articulation rate taken as speaking rate 1: what this analysis measures on
 * eSpeak NG at its default 175 words per minute (about 6 per second), which
 * is also typical of read English.
 */
export const NOMINAL_SYLLABLES_PER_SECOND = 6;
/** Range of the derived rate factor (it multiplies the request's speed). */
export const RATE_RANGE = { min: 0.7, max: 1.5 } as const;
/** Range a measured pitch is clamped to. */
export const PITCH_RANGE_HZ = { min: 70, max: 400 } as const;

/** Why analysis refused the audio. */
export class UnusableReferenceError extends Error {
  override name = 'UnusableReferenceError';
}

export interface VoiceAnalysis {
  /** Median F0 of voiced frames, clamped to PITCH_RANGE_HZ. */
  basePitchHz: number;
  /** Speaking-rate factor (1 = NOMINAL_SYLLABLES_PER_SECOND), clamped to RATE_RANGE; 1 when unknown. */
  rate: number;
  gender: Gender;
  espeakVoice: string;
  language: string;
  /** What was measured, for the response. */
  measured: {
    durationMs: number;
    analysedMs: number;
    medianF0Hz: number;
    voicedRatio: number;
    syllablesPerSecond: number | null;
    decoder: string;
  };
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const round = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;

/** Analyse decoded reference audio. Throws UnusableReferenceError when too short or without voiced speech. */
export function analyzeVoice(audio: DecodedAudio, language: VoiceLanguage = DEFAULT_LANGUAGE): VoiceAnalysis {
  const durationMs = (audio.samples.length / audio.sampleRate) * 1000;
  if (durationMs < MIN_REFERENCE_MS) throw new UnusableReferenceError(`reference audio lasts ${Math.round(durationMs)} ms; at least ${MIN_REFERENCE_MS} ms are needed`);
  const head = audio.samples.subarray(0, Math.round((MAX_ANALYSIS_MS / 1000) * audio.sampleRate));
  const x = resample(head, audio.sampleRate, ANALYSIS_RATE);
  const pitch = estimatePitch(x);
  if (pitch.medianHz === undefined) throw new UnusableReferenceError('no voiced speech found in the reference audio');
  const speech = estimateRate(x);
  const basePitchHz = Math.round(clamp(pitch.medianHz, PITCH_RANGE_HZ.min, PITCH_RANGE_HZ.max));
  const rate = speech.syllablesPerSecond === undefined ? 1 : round(clamp(speech.syllablesPerSecond / NOMINAL_SYLLABLES_PER_SECOND, RATE_RANGE.min, RATE_RANGE.max), 2);
  const gender = genderForPitch(basePitchHz);
  return {
    basePitchHz,
    rate,
    gender,
    espeakVoice: espeakVoiceFor(language, gender),
    language: language.tag,
    measured: {
      durationMs: Math.round(durationMs),
      analysedMs: Math.round((head.length / audio.sampleRate) * 1000),
      medianF0Hz: round(pitch.medianHz, 1),
      voicedRatio: round(pitch.voicedRatio, 3),
      syllablesPerSecond: speech.syllablesPerSecond === undefined ? null : round(speech.syllablesPerSecond, 2),
      decoder: audio.decoder,
    },
  };
}
