import { describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/errors.js';
import { EngineError } from '../../../src/server/engines/errors.js';
import { TONE_SAMPLE_RATE, ToneEngine } from '../../../src/server/engines/tone.js';
import { collect, durationMs, rms, samplesOf, VOICE } from './helpers.js';

const TEXT = 'Hello from voxpipe';

/** Upward zero crossings per second of sound (silence is exact zeros): the tone's frequency. */
function dominantHz(pcm: Buffer): number {
  const s = samplesOf(pcm);
  let crossings = 0;
  let sounding = 0;
  for (let i = 1; i < s.length; i++) {
    if ((s[i] ?? 0) !== 0) sounding++;
    if ((s[i - 1] ?? 0) < 0 && (s[i] ?? 0) >= 0) crossings++;
  }
  return (crossings / sounding) * TONE_SAMPLE_RATE;
}

describe('ToneEngine', () => {
  it('gives the same bytes for the same text and options, however chunks are cut', async () => {
    const a = Buffer.concat(await collect(new ToneEngine(), TEXT));
    const b = Buffer.concat(await collect(new ToneEngine(), TEXT));
    const c = Buffer.concat(await collect(new ToneEngine({ chunkMs: 7 }), TEXT));
    expect(a.length).toBeGreaterThan(0);
    expect(b.equals(a)).toBe(true);
    expect(c.equals(a)).toBe(true);
  });

  it('streams 20 ms chunks of whole samples', async () => {
    const chunks = await collect(new ToneEngine(), TEXT);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).toBe((TONE_SAMPLE_RATE / 50) * 2);
    expect((chunks.at(-1)?.length ?? 1) % 2).toBe(0);
  });

  it('lasts about as long as speaking the text, scaled by speed and voice rate', async () => {
    const engine = new ToneEngine();
    const normal = durationMs(Buffer.concat(await collect(engine, TEXT)), TONE_SAMPLE_RATE);
    // 18 characters at 60-80 ms each.
    expect(normal).toBeGreaterThan(18 * 60);
    expect(normal).toBeLessThan(18 * 80);
    const fast = durationMs(Buffer.concat(await collect(engine, TEXT, { speed: 2 })), TONE_SAMPLE_RATE);
    expect(fast / normal).toBeCloseTo(0.5, 2);
    const slowVoice = durationMs(Buffer.concat(await collect(engine, TEXT, { voice: { ...VOICE, rate: 0.8 } })), TONE_SAMPLE_RATE);
    expect(slowVoice / normal).toBeCloseTo(1.25, 2);
  });

  it('makes sentence punctuation a longer pause than a space', async () => {
    const engine = new ToneEngine();
    const spaced = Buffer.concat(await collect(engine, 'a b')).length;
    const sentence = Buffer.concat(await collect(engine, 'a. b')).length;
    expect(sentence).toBeGreaterThan(spaced);
  });

  it('derives the pitch from the voice', async () => {
    const engine = new ToneEngine();
    const low = dominantHz(Buffer.concat(await collect(engine, 'aaaa', { voice: { ...VOICE, basePitchHz: 100 } })));
    const high = dominantHz(Buffer.concat(await collect(engine, 'aaaa', { voice: { ...VOICE, basePitchHz: 200 } })));
    expect(high / low).toBeGreaterThan(1.8);
    expect(high / low).toBeLessThan(2.2);
  });

  it('applies volume as a linear gain', async () => {
    const engine = new ToneEngine();
    const unit = rms(Buffer.concat(await collect(engine, TEXT)));
    const double = rms(Buffer.concat(await collect(engine, TEXT, { volume: 2 })));
    const mute = rms(Buffer.concat(await collect(engine, TEXT, { volume: 0 })));
    expect(unit).toBeGreaterThan(1000);
    expect(double / unit).toBeCloseTo(2, 1);
    expect(mute).toBe(0);
  });

  it('clips a huge volume instead of wrapping around', async () => {
    const samples = samplesOf(Buffer.concat(await collect(new ToneEngine(), 'aaaa', { volume: 10 })));
    const peak = samples.reduce((max, s) => Math.max(max, Math.abs(s)), 0);
    expect(peak).toBe(32_768);
    // Wrapping would flip signs inside a clipped crest; clipping keeps runs at the rail.
    let rails = 0;
    for (const s of samples) if (s === 32_767 || s === -32_768) rails++;
    expect(rails).toBeGreaterThan(samples.length / 10);
  });

  it('handles CJK, emoji and combining marks', async () => {
    const engine = new ToneEngine();
    const cjk = Buffer.concat(await collect(engine, '你好，世界。'));
    expect(durationMs(cjk, TONE_SAMPLE_RATE)).toBeGreaterThan(500);
    expect(rms(cjk)).toBeGreaterThan(1000);
    const emoji = Buffer.concat(await collect(engine, '👍🏽👨‍👩‍👧'));
    expect(emoji.length).toBeGreaterThan(0);
    expect(Buffer.concat(await collect(engine, 'e\u0301')).length).toBe(Buffer.concat(await collect(engine, 'e')).length);
  });

  it('gives no audio for empty text', async () => {
    expect(await collect(new ToneEngine(), '')).toEqual([]);
  });

  it('stops with AbortError when the signal aborts', async () => {
    const engine = new ToneEngine();
    const controller = new AbortController();
    let chunks = 0;
    const run = (async () => {
      for await (const _ of engine.synthesize('a long text '.repeat(50), { voice: VOICE, signal: controller.signal })) {
        if (++chunks === 3) controller.abort();
      }
    })();
    await expect(run).rejects.toBeInstanceOf(AbortError);
    expect(chunks).toBe(3);
    await expect(collect(engine, TEXT, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
  });

  it('refuses to synthesize after close', async () => {
    const engine = new ToneEngine();
    await engine.close();
    await expect(collect(engine, TEXT)).rejects.toBeInstanceOf(EngineError);
  });
});
