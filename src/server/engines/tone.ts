/**
 * The built-in `tone` engine: deterministic, dependency-free "speech" for
 * tests and benchmarks. Every letter or digit becomes a short tone whose pitch
 * derives from the character and the voice; spaces and punctuation become
 * silences, so the audio lasts about as long as speaking the text would
 * (~65 ms per character at speed 1). Same text and options give the same
 * bytes, whatever chunk size is used.
 */
import { AbortError } from '../../errors.js';
import { resolveSynthesis } from './options.js';
import { EngineError, EngineErrorCode } from './errors.js';
import { EngineName, type SpeechEngine, type SynthesisOptions, type VoiceParams } from './types.js';

/** Output rate of the tone engine. */
export const TONE_SAMPLE_RATE = 24_000;

/** Durations at speed 1, in ms. */
const DURATION_MS = {
  letter: 70,
  /** A CJK character is a syllable, not a letter. */
  syllable: 180,
  space: 40,
  clause: 120, // , ; :
  sentence: 220, // . ! ? and their CJK forms
  otherPunctuation: 60,
  symbol: 80, // emoji and other symbols: a pause, since they are not read
} as const;

const ENVELOPE_MS = 5; // attack and release: avoids clicks between tones
const PEAK = 0.3 * 32_767; // headroom for volume up to ~3 before clipping
const SECOND_HARMONIC = 0.35; // a little timbre so it is not a pure sine
const DEFAULT_PITCH_HZ = 120;

const LETTER = /[\p{L}\p{N}]/u;
const SYLLABLE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const SILENT = /[\p{M}\p{Cf}]/u; // combining marks, ZWJ, variation selectors: no time of their own
const SENTENCE_END = /[.!?\u3002\uff01\uff1f\u2026]/u;
const CLAUSE_END = /[,;:\u3001\uff0c\uff1b\uff1a]/u;

/** One character's sound: a tone of `freqHz`, or silence when `freqHz` is 0. */
interface Unit {
  samples: number;
  freqHz: number;
}

function unitFor(char: string, voice: VoiceParams, pace: number): Unit {
  const ms = (base: number): number => Math.round((base / pace) * (TONE_SAMPLE_RATE / 1000));
  if (SILENT.test(char)) return { samples: 0, freqHz: 0 };
  if (/\s/u.test(char)) return { samples: ms(DURATION_MS.space), freqHz: 0 };
  if (LETTER.test(char)) {
    const code = char.toLowerCase().codePointAt(0) ?? 0;
    const basePitchHz = Number.isFinite(voice.basePitchHz) && voice.basePitchHz > 0 ? voice.basePitchHz : DEFAULT_PITCH_HZ;
    // Within half an octave of the voice pitch, as intonation would be.
    const semitones = (code % 13) - 6;
    const freqHz = Math.min(basePitchHz * 2 ** (semitones / 12), TONE_SAMPLE_RATE / 4);
    return { samples: ms(SYLLABLE.test(char) ? DURATION_MS.syllable : DURATION_MS.letter), freqHz };
  }
  if (SENTENCE_END.test(char)) return { samples: ms(DURATION_MS.sentence), freqHz: 0 };
  if (CLAUSE_END.test(char)) return { samples: ms(DURATION_MS.clause), freqHz: 0 };
  if (/\p{P}/u.test(char)) return { samples: ms(DURATION_MS.otherPunctuation), freqHz: 0 };
  return { samples: ms(DURATION_MS.symbol), freqHz: 0 };
}

/** Options of `ToneEngine`. */
export interface ToneEngineOptions {
  /** Audio per streamed chunk, in ms; default 20. */
  chunkMs?: number;
  /** Chunks produced between two yields to the event loop; default 50 (1 s of audio at 20 ms). */
  chunksPerTurn?: number;
}

/** The deterministic built-in engine (24 kHz mono s16le). */
export class ToneEngine implements SpeechEngine {
  readonly name = EngineName.tone;
  readonly sampleRate = TONE_SAMPLE_RATE;
  readonly #chunkSamples: number;
  readonly #chunksPerTurn: number;
  #closed = false;

  constructor(options: ToneEngineOptions = {}) {
    const chunkMs = options.chunkMs ?? 20; // ms
    this.#chunkSamples = Math.max(1, Math.round((chunkMs * TONE_SAMPLE_RATE) / 1000));
    this.#chunksPerTurn = Math.max(1, options.chunksPerTurn ?? 50);
  }

  async *synthesize(text: string, options: SynthesisOptions): AsyncGenerator<Buffer> {
    if (this.#closed) throw new EngineError(EngineErrorCode.closed, 'tone engine is closed');
    const { signal } = options;
    if (signal?.aborted) throw new AbortError();
    const { pace, gain } = resolveSynthesis(options);
    const amplitude = PEAK * gain;
    const rate = TONE_SAMPLE_RATE;
    const envelope = Math.round((ENVELOPE_MS * rate) / 1000);

    let chunk = new Int16Array(this.#chunkSamples);
    let filled = 0;
    let chunksThisTurn = 0;
    for (const char of text) {
      const unit = unitFor(char, options.voice, pace);
      const ramp = Math.min(envelope, Math.floor(unit.samples / 2));
      const step = (2 * Math.PI * unit.freqHz) / rate;
      for (let n = 0; n < unit.samples; n++) {
        if (unit.freqHz > 0) {
          const edge = Math.min(n, unit.samples - 1 - n);
          const env = edge >= ramp ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * edge) / ramp);
          const phase = step * n;
          const value = Math.round(amplitude * env * (Math.sin(phase) + SECOND_HARMONIC * Math.sin(2 * phase)) / (1 + SECOND_HARMONIC));
          chunk[filled] = value > 32_767 ? 32_767 : value < -32_768 ? -32_768 : value;
        } // else: silence, already 0 in a fresh chunk
        filled++;
        if (filled === chunk.length) {
          yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          if (signal?.aborted) throw new AbortError();
          chunk = new Int16Array(this.#chunkSamples);
          filled = 0;
          if (++chunksThisTurn >= this.#chunksPerTurn) {
            chunksThisTurn = 0;
            // A long text must not starve sockets and timers of the server.
            await new Promise<void>((resolve) => setImmediate(resolve));
            if (signal?.aborted) throw new AbortError();
          }
        }
      }
    }
    if (filled > 0) yield Buffer.from(chunk.buffer, chunk.byteOffset, filled * 2);
  }

  async warmUp(): Promise<void> {
    // Nothing to load.
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
