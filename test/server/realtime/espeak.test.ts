/**
 * With the espeak engine a reliable session returns real speech: non-silent
 * PCM whose duration fits the text. Skipped when the optional package
 * `@echogarden/espeak-ng-emscripten` is not installed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../src/server/index.js';
import { openClient, speakSegment, startReliable, startTestServer, stop } from './fixtures.js';
import { has } from '../../helpers/needs.js';

const hasEspeak = has('espeak');
let server: ReferenceServer | undefined;

beforeAll(async () => {
  if (hasEspeak) server = await startTestServer({ engine: 'espeak' });
});
afterAll(() => server?.close());

/** Root mean square of s16le samples, 0..1. */
function rms(pcm: Buffer): number {
  let sum = 0;
  const n = Math.floor(pcm.length / 2);
  for (let i = 0; i < n; i++) sum += (pcm.readInt16LE(i * 2) / 32_768) ** 2;
  return Math.sqrt(sum / Math.max(1, n));
}

describe.skipIf(!hasEspeak)('espeak engine over reliable mode (skipped: optional package @echogarden/espeak-ng-emscripten missing)', () => {
  it('returns non-silent speech whose length fits the text', async () => {
    const c = await openClient(server!);
    try {
      const ready = await startReliable(c, 'espeak-1');
      expect(ready.sample_rate).toBe(server!.ctx.engine.sampleRate);
      const text = 'Hello world. This is a test of real speech from the reference server.';
      const done = await speakSegment(c, 's1', text);
      await stop(c);
      const pcm = c.audio('s1');
      expect(done.audio_bytes).toBe(pcm.length);
      const seconds = pcm.length / 2 / ready.sample_rate!;
      // About 60-90 ms per character at normal speed; allow a wide band.
      expect(seconds).toBeGreaterThan(text.length * 0.03);
      expect(seconds).toBeLessThan(text.length * 0.2);
      expect(rms(pcm)).toBeGreaterThan(0.01);
      // Speech has pauses and loud parts, unlike a constant tone or noise.
      const window = ready.sample_rate! * 2 * 0.05; // 50 ms
      const levels: number[] = [];
      for (let at = 0; at + window <= pcm.length; at += window) levels.push(rms(pcm.subarray(at, at + window)));
      expect(Math.min(...levels)).toBeLessThan(0.005);
      expect(Math.max(...levels)).toBeGreaterThan(0.05);
    } finally {
      c.ws.terminate();
    }
  });
});
