import { serviceConfigOf } from '../../src/service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCase } from '../../src/bench/probe.js';
import type { BenchCase } from '../../src/bench/cases.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import type { ServiceConfig } from '../../src/config.js';

const KEY = 'sk-test-bench-probe';
const VOICE = '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01';
let server: ReferenceServer;
let config: ServiceConfig;

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'bench' }] });
  config = serviceConfigOf(server, KEY);
});
afterAll(async () => {
  await server.close();
});

const benchCase = (over: Partial<BenchCase>): BenchCase => ({
  id: 'x',
  transport: 'realtime-reliable',
  format: 'pcm',
  model: 'svc-s21pro-flash',
  voiceId: VOICE,
  text: 'short',
  concurrency: 1,
  variant: 'warm',
  ...over,
});

const BYTES_PER_MS = 48; // tone: 24 kHz mono s16le

describe('runCase (one measured run)', () => {
  it('pcm with several segments: every seam is measured on the audio received', async () => {
    const [s] = await runCase(config, benchCase({ text: 'long' }), 30_000);
    expect(s!.error).toBeUndefined();
    // The long text is a paragraph: the segmenter cuts it into several segments.
    expect(s!.seams!.length).toBeGreaterThanOrEqual(2);
    for (const seam of s!.seams!) {
      expect(seam.gapMs).toBeCloseTo(seam.silenceBeforeMs + seam.silenceAfterMs, 6);
      expect(seam.jump).toBeGreaterThanOrEqual(0);
      expect(seam.click).toBe(seam.jump > 656);
    }
    const [short] = await runCase(config, benchCase({ format: 'wav' }), 30_000);
    expect(short!.seams).toBeUndefined(); // only pcm streams are measured
  });

  it('pcm: the audio measured is every byte received, and the first audio comes before the last', async () => {
    const [s] = await runCase(config, benchCase({}), 30_000);
    expect(s!.error).toBeUndefined();
    expect(s!.audioMs).toBeCloseTo(s!.bytes / BYTES_PER_MS, 6);
    expect(s!.ttfaMs!).toBeGreaterThan(0);
    expect(s!.generationMs!).toBeGreaterThanOrEqual(s!.ttfaMs!);
    expect(s!.connectMs!).toBeGreaterThan(0);
    expect(s!.underruns).toBe(0);
  });

  it('wav: the 44-byte header is not audio (the timer waits for samples)', async () => {
    const [s] = await runCase(config, benchCase({ format: 'wav', variant: 'cold' }), 30_000);
    expect(s!.error).toBeUndefined();
    expect(s!.audioMs).toBeCloseTo((s!.bytes - 44) / BYTES_PER_MS, 6);
  });

  it('mp3 over sync HTTP: decoded before it counts, and lasts as long as the pcm', async () => {
    const [pcm] = await runCase(config, benchCase({ transport: 'sync' }), 30_000);
    const [mp3] = await runCase(config, benchCase({ transport: 'sync', format: 'mp3', variant: 'cold' }), 30_000);
    expect(mp3!.error).toBeUndefined();
    expect(pcm!.connectMs).toBeUndefined();
    expect(mp3!.bytes).toBeLessThan(pcm!.bytes / 4);
    // mp3 pads the last frame: a little longer, never shorter.
    expect(mp3!.audioMs).toBeGreaterThanOrEqual(pcm!.audioMs);
    expect(mp3!.audioMs).toBeLessThan(pcm!.audioMs + 200);
  });

  it('runs `concurrency` streams at once and reports each', async () => {
    const samples = await runCase(config, benchCase({ transport: 'realtime-simple', concurrency: 3 }), 30_000);
    expect(samples).toHaveLength(3);
    expect(samples.every((s) => s.error === undefined && s.ttfaMs !== undefined)).toBe(true);
  });

  it('a failing stream is a sample with the error code, not a throw', async () => {
    const [s] = await runCase({ ...config, apiKey: 'sk-wrong' }, benchCase({}), 30_000);
    expect(s!.error).toBe('unauthorized');
    expect(s!.ttfaMs).toBeUndefined();
    const [h] = await runCase(config, benchCase({ transport: 'compat', voiceId: '00000000-0000-0000-0000-000000000000' }), 30_000);
    expect(h!.error).toBeDefined();
  });
});
