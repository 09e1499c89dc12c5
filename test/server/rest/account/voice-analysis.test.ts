import { afterAll, describe, expect, it } from 'vitest';
import { analyzeVoice, UnusableReferenceError } from '../../../../src/server/voices/analyze.js';
import { decodeAudio, UnprocessableMediaError } from '../../../../src/server/audio/decode.js';
import { findLanguage } from '../../../../src/server/voices/languages.js';
import { estimatePitch } from '../../../../src/server/voices/pitch.js';
import { estimateRate } from '../../../../src/server/voices/rate.js';
import { resample } from '../../../../src/server/audio/resample.js';
import { ANALYSIS_RATE } from '../../../../src/server/voices/signal.js';
import { buildWavHeader } from '../../../../src/protocol/wav.js';
import { encodeWhole } from '../../../../src/server/audio/encoder.js';
import { EspeakEngine, ToneEngine, type SpeechEngine } from '../../../../src/server/engines/index.js';
import { has } from '../../../helpers/needs.js';

const tone = new ToneEngine();
const HAS_ESPEAK = has('espeak');
let espeak: SpeechEngine | undefined;
afterAll(async () => {
  await tone.close();
  await espeak?.close();
});

async function pcmOf(engine: SpeechEngine, text: string, basePitchHz: number, espeakVoice = 'en-us', speed = 1): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of engine.synthesize(text, { voice: { basePitchHz, rate: 1, espeakVoice }, speed })) chunks.push(c);
  return Buffer.concat(chunks);
}

function floats(pcm: Buffer): Float32Array {
  const out = new Float32Array(pcm.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(i * 2) / 32_768;
  return out;
}

/** A harmonic tone at `hz` for `ms`, at `rate`. */
function sine(hz: number, ms: number, rate = ANALYSIS_RATE, amp = 0.5): Float32Array {
  const out = new Float32Array(Math.round((ms * rate) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = amp * (Math.sin((2 * Math.PI * hz * i) / rate) + 0.5 * Math.sin((4 * Math.PI * hz * i) / rate) + 0.3 * Math.sin((6 * Math.PI * hz * i) / rate));
  return out;
}

/** `count` bursts of a 150 Hz tone per second (each 60% on, cosine-shaped) for `seconds`. */
function bursts(perSecond: number, seconds: number): Float32Array {
  const x = sine(150, seconds * 1000);
  const period = ANALYSIS_RATE / perSecond;
  for (let i = 0; i < x.length; i++) {
    const phase = (i % period) / period;
    x[i]! *= phase < 0.6 ? Math.sin((Math.PI * phase) / 0.6) : 0;
  }
  return x;
}

describe('estimatePitch', () => {
  it.each([85, 120, 210, 330])('finds %i Hz in a harmonic tone within 2%', (hz) => {
    const est = estimatePitch(sine(hz, 1000));
    expect(est.medianHz).toBeDefined();
    expect(Math.abs(est.medianHz! - hz) / hz).toBeLessThan(0.02);
    expect(est.voicedRatio).toBeGreaterThan(0.9);
  });

  it('picks the fundamental, not its octave below, when the second harmonic dominates', () => {
    const x = new Float32Array(ANALYSIS_RATE);
    for (let i = 0; i < x.length; i++) x[i] = 0.2 * Math.sin((2 * Math.PI * 140 * i) / ANALYSIS_RATE) + 0.5 * Math.sin((2 * Math.PI * 280 * i) / ANALYSIS_RATE);
    expect(estimatePitch(x).medianHz).toBeCloseTo(140, -1);
  });

  it('reports no pitch for silence and for white noise', () => {
    expect(estimatePitch(new Float32Array(ANALYSIS_RATE)).medianHz).toBeUndefined();
    let seed = 7;
    const noise = new Float32Array(ANALYSIS_RATE).map(() => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 30 - 1;
    });
    const est = estimatePitch(noise);
    expect(est.voicedRatio).toBeLessThan(0.1);
  });
});

describe('estimateRate', () => {
  it.each([2.5, 4, 6])('counts %d bursts per second', (perSecond) => {
    const est = estimateRate(bursts(perSecond, 4));
    // Speech time excludes the gaps, so the articulation rate exceeds the burst rate; the ratio is fixed by the 60% duty cycle.
    expect(est.peaks).toBeGreaterThanOrEqual(Math.floor(perSecond * 4) - 1);
    expect(est.peaks).toBeLessThanOrEqual(Math.ceil(perSecond * 4) + 1);
  });

  it('a faster recording has a higher rate', () => {
    const slow = estimateRate(bursts(3, 4)).syllablesPerSecond!;
    const fast = estimateRate(bursts(6, 4)).syllablesPerSecond!;
    expect(fast / slow).toBeGreaterThan(1.6);
  });

  it('gives no estimate for silence', () => {
    expect(estimateRate(new Float32Array(ANALYSIS_RATE)).syllablesPerSecond).toBeUndefined();
  });
});

describe('resample', () => {
  it('keeps a tone\'s pitch across rates', () => {
    const x = resample(sine(200, 1000, 44_100), 44_100, ANALYSIS_RATE);
    expect(x.length).toBe(ANALYSIS_RATE);
    expect(estimatePitch(x).medianHz).toBeCloseTo(200, -1);
    const up = resample(sine(200, 1000, 8_000), 8_000, ANALYSIS_RATE);
    expect(estimatePitch(up).medianHz).toBeCloseTo(200, -1);
  });
});

describe('analyzeVoice on synthesized speech', () => {
  it('tone engine: a high reference measures higher than a low one, and picks the female variant', async () => {
    const text = 'The quick brown fox jumps over the lazy dog, twice.';
    const low = analyzeVoice({ samples: floats(await pcmOf(tone, text, 100)), sampleRate: tone.sampleRate, decoder: 'wav' });
    const high = analyzeVoice({ samples: floats(await pcmOf(tone, text, 240)), sampleRate: tone.sampleRate, decoder: 'wav' });
    expect(low.basePitchHz).toBeGreaterThan(80);
    expect(low.basePitchHz).toBeLessThan(125);
    expect(high.basePitchHz).toBeGreaterThan(195);
    expect(high.basePitchHz).toBeLessThan(290);
    expect(low.gender).toBe('male');
    expect(low.espeakVoice).toBe('en-us');
    expect(high.gender).toBe('female');
    expect(high.espeakVoice).toBe('en-us+f3');
  });

  it.skipIf(!HAS_ESPEAK)('espeak: male and female voices are told apart, and faster speech has a higher rate (needs the optional espeak package)', async () => {
    espeak ??= new EspeakEngine();
    const text = 'Reference recordings let the service copy the pitch and the pace of a speaker. This one is read aloud.';
    const male = analyzeVoice({ samples: floats(await pcmOf(espeak, text, 100, 'en-us')), sampleRate: espeak.sampleRate, decoder: 'wav' });
    const female = analyzeVoice({ samples: floats(await pcmOf(espeak, text, 210, 'en-us+f3')), sampleRate: espeak.sampleRate, decoder: 'wav' });
    expect(male.basePitchHz).toBeGreaterThan(70);
    expect(male.basePitchHz).toBeLessThan(150);
    expect(female.basePitchHz).toBeGreaterThan(170);
    expect(female.basePitchHz).toBeLessThan(280);
    const slow = analyzeVoice({ samples: floats(await pcmOf(espeak, text, 120, 'en-us', 0.7)), sampleRate: espeak.sampleRate, decoder: 'wav' });
    const fast = analyzeVoice({ samples: floats(await pcmOf(espeak, text, 120, 'en-us', 1.6)), sampleRate: espeak.sampleRate, decoder: 'wav' });
    expect(fast.measured.syllablesPerSecond!).toBeGreaterThan(slow.measured.syllablesPerSecond! * 1.4);
  });

  it('a language picks its eSpeak base voice', async () => {
    const pcm = await pcmOf(tone, 'Hola, buenos días a todos.', 230);
    const es = analyzeVoice({ samples: floats(pcm), sampleRate: tone.sampleRate, decoder: 'wav' }, findLanguage('es')!);
    expect(es.language).toBe('es-ES');
    expect(es.espeakVoice).toBe('es+f3');
  });

  it('refuses audio under one second and audio without voiced frames', () => {
    expect(() => analyzeVoice({ samples: sine(150, 500, 16_000), sampleRate: 16_000, decoder: 'wav' })).toThrow(UnusableReferenceError);
    expect(() => analyzeVoice({ samples: new Float32Array(32_000), sampleRate: 16_000, decoder: 'wav' })).toThrow(/no voiced speech/);
  });
});

describe('decodeAudio', () => {
  const pcm16 = (x: Float32Array) => {
    const b = Buffer.alloc(x.length * 2);
    x.forEach((v, i) => b.writeInt16LE(Math.round(v * 32_767), i * 2));
    return b;
  };

  it('reads 16-bit stereo WAV as mono at its rate', async () => {
    const mono = pcm16(sine(180, 1000, 22_050));
    const stereo = Buffer.alloc(mono.length * 2);
    for (let i = 0; i < mono.length / 2; i++) {
      mono.copy(stereo, i * 4, i * 2, i * 2 + 2);
      mono.copy(stereo, i * 4 + 2, i * 2, i * 2 + 2);
    }
    const wav = Buffer.concat([buildWavHeader({ sampleRate: 22_050, channels: 2, bitDepth: 16 }, stereo.length), stereo]);
    const out = await decodeAudio(wav);
    expect(out.decoder).toBe('wav');
    expect(out.sampleRate).toBe(22_050);
    expect(out.samples.length).toBe(22_050);
    expect(estimatePitch(resample(out.samples, 22_050, ANALYSIS_RATE)).medianHz).toBeCloseTo(180, -1);
  });

  it('reads mp3 with the WebAssembly decoder', async () => {
    const mp3 = encodeWhole('mp3', pcm16(sine(200, 1500, 24_000)), { sampleRate: 24_000, channels: 1, bitDepth: 16 });
    const out = await decodeAudio(mp3);
    expect(out.decoder).toBe('mp3');
    expect(estimatePitch(resample(out.samples, out.sampleRate, ANALYSIS_RATE)).medianHz).toBeCloseTo(200, -1);
  });

  it('refuses bytes no decoder reads', async () => {
    await expect(decodeAudio(Buffer.from('definitely not audio, just some text bytes'))).rejects.toBeInstanceOf(UnprocessableMediaError);
  });
});
