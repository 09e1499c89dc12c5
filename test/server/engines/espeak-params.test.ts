import { describe, expect, it } from 'vitest';
import { espeakPitch, espeakRate, espeakVoiceCandidates, splitVoice } from '../../../src/server/engines/espeak-params.js';

describe('espeakRate', () => {
  it('maps pace 1 to eSpeak default and scales linearly within its limits', () => {
    expect(espeakRate(1)).toBe(175);
    expect(espeakRate(2)).toBe(350);
    expect(espeakRate(0.5)).toBe(88);
    expect(espeakRate(0.1)).toBe(80);
    expect(espeakRate(5)).toBe(450);
  });
});

describe('espeakPitch', () => {
  it('gives the default 50 for the measured default F0 of male and female variants', () => {
    expect(espeakPitch({ basePitchHz: 100, espeakVoice: 'en-us' })).toBe(50);
    expect(espeakPitch({ basePitchHz: 200, espeakVoice: 'en-us+f3' })).toBe(50);
  });

  it('interpolates between measured points and clamps to 0..99', () => {
    expect(espeakPitch({ basePitchHz: 127, espeakVoice: 'en-us' })).toBe(75);
    expect(espeakPitch({ basePitchHz: 80, espeakVoice: 'en-us' })).toBe(25);
    const between = espeakPitch({ basePitchHz: 110, espeakVoice: 'en-us' });
    expect(between).toBeGreaterThan(50);
    expect(between).toBeLessThan(75);
    expect(espeakPitch({ basePitchHz: 30, espeakVoice: 'en-us' })).toBe(0);
    expect(espeakPitch({ basePitchHz: 900, espeakVoice: 'en-us' })).toBe(99);
    expect(espeakPitch({ basePitchHz: Number.NaN, espeakVoice: 'en-us' })).toBe(50);
  });
});

describe('espeakVoiceCandidates', () => {
  it('splits voice and variant', () => {
    expect(splitVoice('en-us+f3')).toEqual({ base: 'en-us', variant: '+f3' });
    expect(splitVoice('fr')).toEqual({ base: 'fr', variant: '' });
  });

  it('keeps the voice when the language matches it', () => {
    expect(espeakVoiceCandidates({ espeakVoice: 'en-us+f3' }, 'en')).toEqual(['en-us+f3']);
    expect(espeakVoiceCandidates({ espeakVoice: 'gmw/en-US' }, 'en-GB')).toEqual(['gmw/en-US', 'en-us']);
  });

  it('puts another language first with the same variant, then the voice, then en-us', () => {
    expect(espeakVoiceCandidates({ espeakVoice: 'en-us+f3' }, 'fr')).toEqual(['fr+f3', 'en-us+f3']);
    expect(espeakVoiceCandidates({ espeakVoice: 'de+m2' }, 'pt-BR')).toEqual(['pt-br+m2', 'de+m2', 'en-us+m2']);
  });

  it('ignores a language that is not a language tag', () => {
    expect(espeakVoiceCandidates({ espeakVoice: 'en-us' }, 'auto detect')).toEqual(['en-us']);
    expect(espeakVoiceCandidates({ espeakVoice: 'en-us' })).toEqual(['en-us']);
  });
});
