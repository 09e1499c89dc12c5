/**
 * Regression: opus encoding failed with "offset is out of bounds" under
 * concurrent requests. All opusscript instances share one WebAssembly memory;
 * a new instance's allocation grew it and detached the views older instances
 * held. Older encoders must keep working after many newer ones were made.
 */
import { describe, expect, it } from 'vitest';
import { loadOpusScript, OggOpusEncoder } from '../../../src/server/audio/opus.js';

const info = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

function tone(ms: number): Buffer {
  const samples = (info.sampleRate * ms) / 1000;
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / info.sampleRate)), i * 2);
  return pcm;
}

// opusscript is an optional dependency: without it there is no opus encoder to test.
describe.skipIf(!loadOpusScript())('opus encoders sharing WebAssembly memory', () => {
  it('an encoder made first still encodes after 200 newer ones grew the memory', () => {
    const first = new OggOpusEncoder(info);
    expect(first.write(tone(100)).length).toBeGreaterThan(0);
    const others = Array.from({ length: 200 }, () => new OggOpusEncoder(info));
    for (const o of others) o.write(tone(40));
    const more = first.write(tone(200));
    expect(more.length).toBeGreaterThan(0);
    expect(first.end().length).toBeGreaterThan(0);
    for (const o of others) o.end();
  });
});
