/**
 * Contract between the reference server and its speech engines. An engine
 * turns one piece of text into mono 16-bit PCM and streams it as it goes, so
 * the server can send the first audio frame before synthesis has finished.
 */

/** How a voice of the server's catalogue sounds on the built-in engines. */
export interface VoiceParams {
  /** Typical fundamental frequency of the voice, in Hz (e.g. 110 male, 210 female). */
  basePitchHz: number;
  /** Speaking-rate factor of the voice; 1 = normal. Multiplies `SynthesisOptions.speed`. */
  rate: number;
  /** eSpeak NG voice name, optionally with a variant: `'en-us'`, `'en-us+f3'`. */
  espeakVoice: string;
}

/** Options of one synthesis call. */
export interface SynthesisOptions {
  voice: VoiceParams;
  /** Speaking speed 0.5..2; default 1. */
  speed?: number;
  /** Linear gain 0..10 applied to the samples (clipped to 16 bits); default 1. */
  volume?: number;
  /** BCP 47-ish language tag (`'fr'`, `'en-GB'`); default: the language of `voice.espeakVoice`. */
  language?: string;
  /** Aborting stops synthesis and makes the iteration throw `AbortError`. */
  signal?: AbortSignal;
}

/** Names of the engines. */
export const EngineName = {
  espeak: 'espeak',
  tone: 'tone',
} as const;
export type EngineName = (typeof EngineName)[keyof typeof EngineName];

/** A speech synthesizer producing mono s16le PCM. */
export interface SpeechEngine {
  readonly name: EngineName;
  /** Output PCM rate in Hz (mono, 16-bit). */
  readonly sampleRate: number;
  /**
   * Streams s16le mono PCM chunks as soon as they are produced (every chunk
   * holds whole samples). Throws `EngineError` on failure and `AbortError`
   * when `options.signal` aborts; breaking out of the loop cancels synthesis.
   */
  synthesize(text: string, options: SynthesisOptions): AsyncIterable<Buffer>;
  /** Loads whatever the engine needs so the first request is fast. Idempotent. */
  warmUp(): Promise<void>;
  /** Releases workers; later `synthesize` calls throw `EngineError`. Idempotent. */
  close(): Promise<void>;
}
