/**
 * Voice design from a text prompt: words of the prompt move the voice's
 * parameters (pitch, speaking rate, language, eSpeak variant), and the
 * candidates vary around the result so the user can pick by ear. Pure: no
 * engine, no store.
 *
 * Words recognised (lower case, any order; "very", "extremely", "really"
 * or "super" before a word strengthens it):
 * - lower pitch: deep, low, bass, baritone, gravelly, husky, booming,
 *   resonant, dark, rich; male words (male, man, masculine, guy, gentleman,
 *   father, he) make a male voice;
 * - higher pitch: high, bright, light, airy, thin, squeaky, shrill, soprano,
 *   sweet; female words (female, woman, feminine, lady, girl, mother, she)
 *   make a female voice; child, kid, boy, girl, young child: a child's pitch;
 * - old, elderly, senior, grandfather, grandmother: lower and slower;
 * - faster: fast, quick, rapid, energetic, excited, brisk, lively, upbeat,
 *   hurried, enthusiastic; slower: slow, calm, relaxed, soothing, gentle,
 *   measured, deliberate, sleepy, meditative, soft-spoken;
 * - a language or accent: British, American, Spanish, German, French,
 *   Italian, Portuguese (see `languages.ts`).
 */
import { DEFAULT_LANGUAGE, espeakVoiceFor, FEMALE_VARIANT, genderForPitch, VOICE_LANGUAGES, type Gender, type VoiceLanguage } from './languages.js';

/** What a prompt asked for, and the parameters that follow. */
export interface DesignParameters {
  basePitchHz: number;
  /** Speaking-rate factor, 1 = normal. */
  rate: number;
  gender: Gender;
  /** BCP 47 tag. */
  language: string;
  espeakVoice: string;
  /** The prompt words that had an effect, in prompt order. */
  traits: string[];
}

/** One candidate: parameters varied around the prompt's. */
export interface CandidateParameters extends DesignParameters {
  /** 0 for the prompt's own parameters, then the variations. */
  variation: number;
}

const PITCH_HZ = { male: 115, female: 205, neutral: 160, child: 285 } as const;
const LOWER = new Set(['deep', 'deeper', 'low', 'lower', 'bass', 'baritone', 'gravelly', 'husky', 'booming', 'resonant', 'dark', 'rich', 'gruff']);
const HIGHER = new Set(['high', 'higher', 'bright', 'light', 'airy', 'thin', 'squeaky', 'shrill', 'soprano', 'sweet', 'chirpy']);
const MALE = new Set(['male', 'man', 'men', 'masculine', 'guy', 'gentleman', 'father', 'dad', 'grandfather', 'grandpa', 'he', 'his', 'him', 'boy']);
const FEMALE = new Set(['female', 'woman', 'women', 'feminine', 'lady', 'girl', 'mother', 'mom', 'grandmother', 'grandma', 'she', 'her']);
const CHILD = new Set(['child', 'kid', 'children', 'boy', 'girl', 'toddler', 'childlike']);
const OLD = new Set(['old', 'elderly', 'senior', 'aged', 'grandfather', 'grandmother', 'grandpa', 'grandma']);
const FASTER = new Set(['fast', 'faster', 'quick', 'rapid', 'energetic', 'excited', 'brisk', 'lively', 'upbeat', 'hurried', 'enthusiastic', 'peppy']);
const SLOWER = new Set(['slow', 'slower', 'calm', 'relaxed', 'soothing', 'gentle', 'measured', 'deliberate', 'sleepy', 'meditative', 'soft-spoken', 'unhurried']);
const INTENSIFIERS = new Set(['very', 'extremely', 'really', 'super', 'incredibly']);

/** Pitch factor of one pitch word, and of one strengthened by an intensifier. */
const PITCH_STEP = { plain: 0.15, strong: 0.25 } as const;
const RATE_STEP = { plain: 0.2, strong: 0.35 } as const;
const OLD_PITCH = 0.92;
const OLD_RATE = 0.9;
const RANGE = { pitchMin: 70, pitchMax: 400, rateMin: 0.6, rateMax: 1.6 } as const;

/** Variations of the candidates after the first: pitch and rate factors. */
const VARIATIONS = [
  { pitch: 1, rate: 1 },
  { pitch: 0.92, rate: 0.95 },
  { pitch: 1.09, rate: 1.05 },
  { pitch: 0.85, rate: 1.1 },
  { pitch: 1.17, rate: 0.9 },
] as const;
/** eSpeak variants tried in turn for female and male candidates. */
const VARIANTS: Record<Gender, readonly string[]> = { female: [FEMALE_VARIANT, '+f2', '+f4', '+f1', '+f5'], male: ['', '+m3', '+m1', '+m2', '+m7'] };

/** Most candidates a design can have. */
export const MAX_CANDIDATES = VARIATIONS.length;

function words(prompt: string): string[] {
  return prompt.toLowerCase().match(/[\p{L}][\p{L}'-]*/gu) ?? [];
}

/** The language a prompt asks for, and the word that asked. */
function languageOf(tokens: readonly string[]): { language: VoiceLanguage; word?: string } {
  // A specific accent (British) beats the generic "English": the default language is looked at last.
  for (const language of [...VOICE_LANGUAGES.slice(1), DEFAULT_LANGUAGE]) {
    const word = tokens.find((t) => language.words.includes(t));
    if (word) return { language, word };
  }
  return { language: DEFAULT_LANGUAGE };
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const round2 = (v: number) => Math.round(v * 100) / 100;

/** The parameters a prompt asks for. */
export function parsePrompt(prompt: string): DesignParameters {
  const tokens = words(prompt);
  const traits: string[] = [];
  let gender: Gender | undefined;
  let child = false;
  let old = false;
  let pitch = 1;
  let rate = 1;
  tokens.forEach((t, i) => {
    const strong = i > 0 && INTENSIFIERS.has(tokens[i - 1]!);
    let effect = false;
    if (CHILD.has(t)) {
      child = true;
      effect = true;
    }
    if (gender === undefined && (MALE.has(t) || FEMALE.has(t))) {
      gender = MALE.has(t) ? 'male' : 'female';
      effect = true;
    }
    if (OLD.has(t)) {
      old = true;
      effect = true;
    }
    const pitchStep = strong ? PITCH_STEP.strong : PITCH_STEP.plain;
    const rateStep = strong ? RATE_STEP.strong : RATE_STEP.plain;
    if (LOWER.has(t)) pitch *= 1 - pitchStep;
    if (HIGHER.has(t)) pitch *= 1 + pitchStep;
    if (FASTER.has(t)) rate *= 1 + rateStep;
    if (SLOWER.has(t)) rate *= 1 - rateStep;
    effect ||= LOWER.has(t) || HIGHER.has(t) || FASTER.has(t) || SLOWER.has(t);
    if (effect) traits.push(strong ? `${tokens[i - 1]} ${t}` : t);
  });
  const { language, word } = languageOf(tokens);
  if (word) traits.push(word);
  if (old) {
    pitch *= OLD_PITCH;
    rate *= OLD_RATE;
  }
  const base = child ? PITCH_HZ.child : gender ? PITCH_HZ[gender] : PITCH_HZ.neutral;
  const basePitchHz = Math.round(clamp(base * pitch, RANGE.pitchMin, RANGE.pitchMax));
  // A child sounds female-like on eSpeak whatever its gender word; otherwise the word decides, or the pitch.
  const resolved: Gender = child ? 'female' : (gender ?? genderForPitch(basePitchHz));
  return {
    basePitchHz,
    rate: round2(clamp(rate, RANGE.rateMin, RANGE.rateMax)),
    gender: resolved,
    language: language.tag,
    espeakVoice: espeakVoiceFor(language, resolved),
    traits,
  };
}

/** `count` candidates (1 to MAX_CANDIDATES) around `params`: the first is `params` itself. */
export function designCandidates(params: DesignParameters, count: number): CandidateParameters[] {
  const language = VOICE_LANGUAGES.find((l) => l.tag === params.language) ?? DEFAULT_LANGUAGE;
  return VARIATIONS.slice(0, clamp(Math.floor(count), 1, MAX_CANDIDATES)).map((v, i) => {
    const variant = VARIANTS[params.gender][i % VARIANTS[params.gender].length]!;
    return {
      ...params,
      basePitchHz: Math.round(clamp(params.basePitchHz * v.pitch, RANGE.pitchMin, RANGE.pitchMax)),
      rate: round2(clamp(params.rate * v.rate, RANGE.rateMin, RANGE.rateMax)),
      espeakVoice: espeakVoiceFor(language, params.gender, variant),
      variation: i,
    };
  });
}
