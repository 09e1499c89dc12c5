import { afterAll, describe, expect, it } from 'vitest';
import { WORD_TIMING_TEXTS } from '../../src/bench/texts.js';
import { EspeakEngine } from '../../src/server/engines/espeak.js';
import { ToneEngine } from '../../src/server/engines/tone.js';
import {
  CONFIDENCE_PAUSE,
  estimateWordTimings,
  FrameEnergies,
  heardAtWord,
  pcmSamples,
  proportionalWordTimings,
  syllables,
  tokenize,
  wordBoundaryErrors,
} from '../../src/stream/word-timing.js';
import { has } from '../helpers/needs.js';

const RATE = 16_000;

/** Tone bursts for the given [startMs, endMs) spans, silence elsewhere. */
function bursts(totalMs: number, spans: Array<[number, number]>): Int16Array {
  const samples = new Int16Array(Math.round((totalMs * RATE) / 1000));
  for (const [from, to] of spans) {
    for (let i = Math.round((from * RATE) / 1000); i < Math.round((to * RATE) / 1000); i++) {
      samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / RATE));
    }
  }
  return samples;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('word timing estimate', () => {
  it('finds the words of the text with their character spans', () => {
    const text = '  Hello, big world! ';
    expect(tokenize(text).map((t) => [t.word, t.charStart, t.charEnd])).toEqual([
      ['Hello,', 2, 8],
      ['big', 9, 12],
      ['world!', 13, 19],
    ]);
    expect(estimateWordTimings('   ', { samples: new Int16Array(1600), sampleRate: RATE })).toEqual([]);
  });

  it('counts syllables by vowel groups, silent final e and -ed', () => {
    expect(syllables('cat')).toBe(1);
    expect(syllables('there')).toBe(1);
    expect(syllables('checked')).toBe(1);
    expect(syllables('wanted')).toBe(2);
    expect(syllables('table')).toBe(2);
    expect(syllables('extraordinary')).toBe(5);
  });

  it('places a clause break at the pause in the audio, with high confidence', () => {
    // Speech 100-900 ms, a pause, speech 1400-1800 ms: the weights alone would
    // put "three" near the middle, the pause puts it at 1400.
    const text = 'one two, three four';
    const samples = bursts(2000, [[100, 900], [1400, 1800]]);
    const words = estimateWordTimings(text, { samples, sampleRate: RATE });
    expect(words.map((w) => w.word)).toEqual(['one', 'two,', 'three', 'four']);
    expect(words[0]!.startMs).toBeCloseTo(100, -1);
    expect(words[1]!.endMs).toBeCloseTo(900, -1);
    expect(words[1]!.confidence).toBe(CONFIDENCE_PAUSE);
    expect(words[2]!.startMs).toBeCloseTo(1400, -1);
    expect(words[3]!.endMs).toBeCloseTo(1800, -1);
    expect(words[2]!.charStart).toBe(text.indexOf('three'));
  });

  it('finds every word of an engine that pauses between words (the tone engine: 70 ms a letter, 40 ms a space)', async () => {
    const text = 'Let me read your account details. Your plan renews on the first of every month.';
    const parts: Buffer[] = [];
    for await (const part of new ToneEngine().synthesize(text, { voice: { basePitchHz: 120, rate: 1, espeakVoice: 'en-us' } })) parts.push(part);
    const samples = pcmSamples(Buffer.concat(parts));
    // The truth, from the engine's durations: letters 70 ms, a space 40, a sentence end 220.
    const truth: { charStart: number; startMs: number }[] = [];
    let ms = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (/\w/.test(c) && (i === 0 || text[i - 1] === ' ')) truth.push({ charStart: i, startMs: ms });
      ms += /\w/.test(c) ? 70 : c === ' ' ? 40 : 220;
    }
    const words = estimateWordTimings(text, { samples, sampleRate: 24_000 });
    expect(words).toHaveLength(15);
    const errors = wordBoundaryErrors(words, truth);
    expect(errors).toHaveLength(14);
    expect(Math.max(...errors)).toBeLessThanOrEqual(10);
  });

  it('the frame energies taken as the audio streams in, in chunks of any length (odd ones split a sample), give the same words as the whole PCM', async () => {
    const text = 'Let me read your account details. Your plan renews on the first of every month.';
    const parts: Buffer[] = [];
    for await (const part of new ToneEngine().synthesize(text, { voice: { basePitchHz: 120, rate: 1, espeakVoice: 'en-us' } })) parts.push(part);
    const bytes = Buffer.concat(parts);
    const whole = estimateWordTimings(text, { samples: pcmSamples(bytes), sampleRate: 24_000 });
    for (const seed of [1, 2, 3]) {
      const meter = new FrameEnergies(24_000, 1);
      let random = seed;
      for (let at = 0; at < bytes.length; ) {
        random = (random * 16807) % 2147483647;
        const size = 1 + (random % 4001); // 1 to 4,001 bytes: odd sizes split samples
        // Each chunk a Buffer view at an odd or even place of a larger buffer, as a frame's audio field is.
        const skew = random % 2;
        const frame = Buffer.alloc(size + 3);
        bytes.copy(frame, skew, at, at + size);
        meter.push(frame.subarray(skew, skew + Math.min(size, bytes.length - at)));
        at += size;
      }
      expect(meter.db).toHaveLength(Math.floor(bytes.length / 2 / 240));
      expect(estimateWordTimings(text, meter)).toEqual(whole);
    }
    // What it keeps: 8 bytes per 10 ms frame, not the audio.
    const meter = new FrameEnergies(24_000, 1);
    meter.push(bytes);
    expect(meter.db.byteLength).toBeLessThan(bytes.length / 50);
  });

  it('takes the same frame energies, bit for bit, however the bytes are chunked and wherever a chunk starts', () => {
    let random = 7;
    const next = (n: number): number => {
      random = (random * 16807) % 2147483647;
      return random % n;
    };
    // Loud and quiet stretches, the extreme values included.
    const samples = new Int16Array(48_000);
    for (let i = 0; i < samples.length; i++) samples[i] = (i % 4000 < 2500 ? next(65_536) : next(65)) - (i % 4000 < 2500 ? 32_768 : 32);
    samples[0] = -32_768;
    samples[1] = 32_767;
    const bytes = new Uint8Array(samples.buffer);
    for (const [rate, channels] of [[24_000, 1], [22_050, 1], [16_000, 2], [8_000, 1]] as const) {
      const one = new FrameEnergies(rate, channels);
      one.push(bytes);
      const whole = new FrameEnergies(rate, channels);
      whole.pushSamples(samples);
      expect(one.db.length).toBe(Math.floor(samples.length / channels / Math.round(rate / 100)));
      expect(Array.from(one.db)).toEqual(Array.from(whole.db));
      for (let round = 0; round < 20; round++) {
        const meter = new FrameEnergies(rate, channels);
        for (let at = 0; at < bytes.length; ) {
          // 0 to 64 bytes, odd sizes splitting a sample, or now and then a long run; at an odd or even place of a larger buffer.
          const size = Math.min(bytes.length - at, next(8) === 0 ? next(3001) : next(65));
          const skew = next(2);
          const frame = new Uint8Array(size + 2);
          frame.set(bytes.subarray(at, at + size), skew);
          meter.push(frame.subarray(skew, skew + size));
          at += size;
        }
        expect(Array.from(meter.db)).toEqual(Array.from(one.db));
      }
    }
  });

  it('cuts heard text at the end of the last word wholly played, with its confidence', () => {
    const text = 'one two, three four';
    const words = estimateWordTimings(text, { samples: bursts(2000, [[100, 900], [1400, 1800]]), sampleRate: RATE });
    // Played into "three": heard ends after "two,".
    const cut = heardAtWord(words, 1500, text.length);
    expect(text.slice(0, cut.chars)).toBe('one two,');
    expect(cut.confidence).toBe(CONFIDENCE_PAUSE);
    expect(heardAtWord(words, 50, text.length)).toEqual({ chars: 0, confidence: 1 });
    expect(heardAtWord(words, 1900, text.length)).toEqual({ chars: text.length, confidence: 1 });
  });

  it('measures boundary errors against true word starts by first character', () => {
    const text = 'a bb ccc';
    const estimate = proportionalWordTimings(text, 800);
    expect(estimate.map((w) => w.startMs)).toEqual([0, 200, 500]);
    expect(wordBoundaryErrors(estimate, [{ charStart: 0, startMs: 0 }, { charStart: 2, startMs: 250 }, { charStart: 5, startMs: 450 }])).toEqual([50, 50]);
  });
});

const available = has('espeak');

describe.skipIf(!available)('word timing estimate vs eSpeak word events (needs @echogarden/espeak-ng-emscripten)', () => {
  const engine = new EspeakEngine({ warmUpRounds: 0 });
  afterAll(() => engine.close());

  it('beats the character-proportional baseline on the fixed corpus', async () => {
    const estimate: number[] = [];
    const baseline: number[] = [];
    for (const text of WORD_TIMING_TEXTS) {
      const { pcm, words } = await engine.synthesizeWithWords(text, { voice: { basePitchHz: 120, rate: 1, espeakVoice: 'en-us' } });
      const samples = pcmSamples(pcm);
      estimate.push(...wordBoundaryErrors(estimateWordTimings(text, { samples, sampleRate: engine.sampleRate }), words));
      baseline.push(...wordBoundaryErrors(proportionalWordTimings(text, (samples.length / engine.sampleRate) * 1000), words));
    }
    expect(estimate.length).toBeGreaterThan(200);
    expect(median(estimate)).toBeLessThan(median(baseline));
  }, 120_000);
});
