/**
 * Languages a personal voice can speak, with the eSpeak NG voice behind
 * each, and the choice of a male or female eSpeak variant from a pitch.
 */

export interface VoiceLanguage {
  /** BCP 47 tag shown in voice lists. */
  tag: string;
  /** eSpeak NG base voice. */
  espeak: string;
  /** Words in a design prompt that ask for it (lower case). */
  words: readonly string[];
}

export const VOICE_LANGUAGES: readonly VoiceLanguage[] = [
  { tag: 'en-US', espeak: 'en-us', words: ['american', 'english'] },
  { tag: 'en-GB', espeak: 'en-gb', words: ['british', 'uk', 'london', 'posh'] },
  { tag: 'es-ES', espeak: 'es', words: ['spanish', 'español', 'espanol'] },
  { tag: 'de-DE', espeak: 'de', words: ['german', 'deutsch'] },
  { tag: 'fr-FR', espeak: 'fr', words: ['french', 'français', 'francais'] },
  { tag: 'it-IT', espeak: 'it', words: ['italian', 'italiano'] },
  { tag: 'pt-BR', espeak: 'pt-br', words: ['portuguese', 'brazilian'] },
];

/** The default language of personal voices. */
export const DEFAULT_LANGUAGE: VoiceLanguage = VOICE_LANGUAGES[0]!;

/** At or above this F0 a voice gets eSpeak's female variant. */
export const FEMALE_PITCH_HZ = 165;
/** eSpeak variant of female personal voices (as the catalogue's Ava). */
export const FEMALE_VARIANT = '+f3';

/** A language by tag (`es`, `es-ES`, `en-gb`; case-insensitive): exact tag first, then the primary subtag. */
export function findLanguage(tag: string): VoiceLanguage | undefined {
  const lower = tag.toLowerCase();
  const exact = VOICE_LANGUAGES.find((l) => l.tag.toLowerCase() === lower);
  if (exact) return exact;
  const primary = lower.split('-')[0];
  return VOICE_LANGUAGES.find((l) => l.tag.toLowerCase().split('-')[0] === primary);
}

export type Gender = 'female' | 'male';

/** `female` at or above FEMALE_PITCH_HZ, else `male`. */
export function genderForPitch(basePitchHz: number): Gender {
  return basePitchHz >= FEMALE_PITCH_HZ ? 'female' : 'male';
}

/**
 * The eSpeak voice name for a language and gender, e.g. `en-us+f3` or `de`.
 * `variant` (e.g. `+f2`, `+m3`) defaults to FEMALE_VARIANT for female voices
 * and none for male ones (eSpeak's base voices are male).
 */
export function espeakVoiceFor(language: VoiceLanguage, gender: Gender, variant?: string): string {
  return `${language.espeak}${variant ?? (gender === 'female' ? FEMALE_VARIANT : '')}`;
}
