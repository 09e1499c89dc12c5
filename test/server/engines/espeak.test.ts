import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/errors.js';
import { EngineError } from '../../../src/server/engines/errors.js';
import { ESPEAK_SAMPLE_RATE, EspeakEngine } from '../../../src/server/engines/espeak.js';
import { createEngine } from '../../../src/server/engines/index.js';
import { collect, durationMs, rms, VOICE } from './helpers.js';
import { has } from '../../helpers/needs.js';

// eSpeak comes from an optional (GPL-3.0) package: these tests need it
// installed and are skipped, not failed, where it is not.
const available = has('espeak');
const LONG_TEXT = 'This sentence is long enough to keep the synthesizer busy for a while. '.repeat(20);
const FOX = 'The quick brown fox jumps over the lazy dog.';

describe.skipIf(!available)('EspeakEngine (needs @echogarden/espeak-ng-emscripten)', () => {
  // One warm engine for the tests that do not close it: starting eSpeak costs ~0.5 s.
  let engine: EspeakEngine;
  beforeAll(async () => {
    engine = new EspeakEngine();
    await engine.warmUp();
  });
  afterAll(async () => {
    await engine.close();
  });

  it('speaks: non-silent PCM whose duration fits the text', async () => {
    const chunks = await collect(engine, 'Hello from voxpipe');
    const pcm = Buffer.concat(chunks);
    expect(chunks.length).toBeGreaterThan(1); // streamed, not one buffer at the end
    expect(durationMs(pcm, ESPEAK_SAMPLE_RATE)).toBeGreaterThan(300);
    expect(durationMs(pcm, ESPEAK_SAMPLE_RATE)).toBeLessThan(3000);
    expect(rms(pcm)).toBeGreaterThan(500);
  });

  it('works without warmUp(): the first request starts the worker', async () => {
    const cold = new EspeakEngine({ warmUpRounds: 0 });
    try {
      expect(rms(Buffer.concat(await collect(cold, 'Hello')))).toBeGreaterThan(500);
    } finally {
      await cold.close();
    }
  });

  it('maps speed to the speaking rate and volume to gain', async () => {
    const normal = Buffer.concat(await collect(engine, FOX));
    const fast = Buffer.concat(await collect(engine, FOX, { speed: 2 }));
    expect(fast.length / normal.length).toBeLessThan(0.75);
    const quiet = Buffer.concat(await collect(engine, FOX, { volume: 0.5 }));
    expect(rms(quiet) / rms(normal)).toBeCloseTo(0.5, 1);
    expect(rms(Buffer.concat(await collect(engine, 'Hello', { volume: 0 })))).toBe(0);
  });

  it('does not block the event loop during a long synthesis', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      let ticksAtFirstChunk = -1;
      let chunks = 0;
      for await (const _ of engine.synthesize(LONG_TEXT, { voice: VOICE })) {
        if (chunks++ === 0) ticksAtFirstChunk = ticks;
      }
      expect(chunks).toBeGreaterThan(50);
      // Timers kept firing while chunks were arriving.
      expect(ticks).toBeGreaterThan(ticksAtFirstChunk);
    } finally {
      clearInterval(timer);
    }
  });

  it('stops on abort with AbortError and stays usable', async () => {
    const reference = Buffer.concat(await collect(engine, 'Hello')).length;
    const controller = new AbortController();
    let chunks = 0;
    const run = (async () => {
      for await (const _ of engine.synthesize(LONG_TEXT, { voice: VOICE, signal: controller.signal })) {
        if (++chunks === 2) controller.abort();
      }
    })();
    await expect(run).rejects.toBeInstanceOf(AbortError);
    expect(chunks).toBe(2);
    // The worker was told to stop: the next request is served, not stuck behind
    // the long one, and holds none of the aborted text's audio.
    const after = Buffer.concat(await collect(engine, 'Hello')).length;
    expect(Math.abs(after - reference) / reference).toBeLessThan(0.05);
    await expect(collect(engine, 'Hello', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
  });

  it('cancels when the consumer breaks out of the loop', async () => {
    for await (const _ of engine.synthesize(LONG_TEXT, { voice: VOICE })) break;
    expect(Buffer.concat(await collect(engine, 'Hello')).length).toBeGreaterThan(0);
  });

  // eSpeak varies its output slightly from run to run (a few samples), so
  // audio is compared by length: a leak would add whole chunks (~100 ms).
  it('queues concurrent requests and keeps their audio apart', async () => {
    const alone = Buffer.concat(await collect(engine, 'One')).length;
    const twoAlone = Buffer.concat(await collect(engine, 'Two, three, four, five, six.')).length;
    const [one, two] = await Promise.all([collect(engine, 'One'), collect(engine, 'Two, three, four, five, six.')]);
    expect(Math.abs(Buffer.concat(one).length - alone) / alone).toBeLessThan(0.05);
    expect(Math.abs(Buffer.concat(two).length - twoAlone) / twoAlone).toBeLessThan(0.05);
  });

  it('reads markup characters as text and accepts other languages and variants', async () => {
    expect(rms(Buffer.concat(await collect(engine, 'a < b & c > d')))).toBeGreaterThan(500);
    expect(rms(Buffer.concat(await collect(engine, 'Bonjour tout le monde', { language: 'fr' })))).toBeGreaterThan(500);
    expect(rms(Buffer.concat(await collect(engine, 'Hello', { language: 'en-GB', voice: { ...VOICE, espeakVoice: 'en-us+f3', basePitchHz: 210 } })))).toBeGreaterThan(500);
    // An unknown language falls back to the voice rather than failing.
    expect(rms(Buffer.concat(await collect(engine, 'Hello', { language: 'qq' })))).toBeGreaterThan(500);
  });

  it('refuses to synthesize after close', async () => {
    const closing = new EspeakEngine({ warmUpRounds: 0 });
    await closing.warmUp();
    await closing.close();
    await expect(collect(closing, 'Hello')).rejects.toBeInstanceOf(EngineError);
  });

  it('fails a synthesis in progress with EngineError when closed', async () => {
    const closing = new EspeakEngine({ warmUpRounds: 0 });
    let chunks = 0;
    const run = (async () => {
      for await (const _ of closing.synthesize(LONG_TEXT, { voice: VOICE })) {
        if (++chunks === 1) void closing.close();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'EngineError', code: 'engine_closed' });
  });

  it('is what createEngine("auto") picks', async () => {
    const auto = await createEngine('auto');
    try {
      expect(auto.name).toBe('espeak');
      expect(auto.sampleRate).toBe(ESPEAK_SAMPLE_RATE);
    } finally {
      await auto.close();
    }
  });
});

describe('createEngine', () => {
  it('creates the tone engine on request', async () => {
    const engine = await createEngine('tone');
    expect(engine.name).toBe('tone');
    await engine.close();
  });
});
