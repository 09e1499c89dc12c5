/**
 * `auto` failover over real sockets: realtime fails mid-stream with no
 * retryable path; the segments not yet completed continue over sync HTTP, in
 * order, with no missing and no repeated audio.
 */
import { serviceConfigOf } from '../../src/service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpeechStream } from '../../src/speech.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import type { ServiceConfig } from '../../src/config.js';
import { TONE_RATE } from '../helpers/dialect.js';
import { drawRandomDialect } from '../../src/server/dialect-random.js';

const TEXT = 'The first sentence is short. The second one is a little longer than that. A third follows. And a fourth sentence ends it.';
let server: ReferenceServer;
let config: ServiceConfig;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  config = serviceConfigOf(server);
});
afterAll(() => server.close());

async function speak(transport: 'auto' | 'realtime' | 'sync', format: 'pcm' | 'mp3' = 'pcm') {
  // Small segments so the text spans several.
  const speech = await createSpeechStream(config, { format, transport, segmenter: { targetChars: 20, firstMinChars: 12 } });
  const discontinuities: { segmentId: string; droppedBytes: number }[] = [];
  speech.on('discontinuity', (d) => discontinuities.push(d));
  const failovers: string[] = [];
  const recharged: string[][] = [];
  let resumed = 0;
  speech.on('failover', (f) => {
    failovers.push(`${f.from}->${f.to}:${f.error.code}`);
    recharged.push(f.recharged);
  });
  speech.on('resumed', () => resumed++);
  speech.end(TEXT);
  const chunks: Buffer[] = [];
  for await (const c of speech) chunks.push(c as Buffer);
  return { audio: Buffer.concat(chunks), summary: speech.summary(), failovers, recharged, resumed, discontinuities };
}

describe('auto failover', () => {
  it('realtime and sync produce the same audio for the same segments (tone, pcm)', async () => {
    const a = await speak('realtime');
    const b = await speak('sync');
    expect(a.audio.length).toBeGreaterThan(0);
    expect(b.audio.equals(a.audio)).toBe(true);
  });

  it('continues over sync when realtime fails mid-segment with no retryable path', async () => {
    const reference = await speak('realtime');
    server.faults.set({ realtimeError: { afterAudioFrames: 3, code: 'provider_unavailable', retryable: false } });
    const run = await speak('auto');
    server.faults.clear();
    expect(run.failovers).toEqual(['realtime->sync:provider_unavailable']);
    // The segment cut mid-audio was charged on realtime at its first audio:
    // sync charges it again, and the summary says so.
    expect(run.recharged).toHaveLength(1);
    expect(run.recharged[0]).toHaveLength(1);
    const again = run.summary.segments.filter((s) => s.recharged !== undefined);
    expect(again.map((s) => s.segmentId)).toEqual(run.recharged[0]);
    expect(run.summary.rechargedUnits).toBe(again[0]!.units);
    expect(run.summary.rechargedUnits).toBeGreaterThan(0);
    // Nothing missing, nothing repeated: byte for byte the fault-free audio.
    expect(run.audio.length).toBe(reference.audio.length);
    expect(run.audio.equals(reference.audio)).toBe(true);
    const served = run.summary.segments.map((s) => s.transport);
    expect(served).toContain('sync');
    expect(served[served.length - 1]).toBe('sync');
    // Segments in order, each once.
    const ids = run.summary.segments.map((s) => s.segmentId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((x, y) => Number(x.split('-').pop()) - Number(y.split('-').pop())));
  });

  it('mp3: the segment cut mid-audio starts again on sync after a discontinuity naming the bytes the listener had of it (the reliable machine\'s rule)', async () => {
    const reference = await speak('realtime', 'mp3');
    server.faults.set({ realtimeError: { afterAudioFrames: 3, code: 'provider_unavailable', retryable: false } });
    const run = await speak('auto', 'mp3');
    server.faults.clear();
    expect(run.failovers).toEqual(['realtime->sync:provider_unavailable']);
    expect(run.discontinuities).toHaveLength(1);
    const [cut] = run.discontinuities;
    expect(cut!.segmentId).toBe(run.recharged[0]![0]);
    expect(cut!.droppedBytes).toBeGreaterThan(0);
    // Everything once, plus the part of the cut segment heard twice.
    expect(run.audio.length).toBe(reference.audio.length + cut!.droppedBytes);
    // Segment ids are per stream: compare the cut segment with the reference's at the same place.
    const at = run.summary.segments.findIndex((s) => s.segmentId === cut!.segmentId);
    expect(run.summary.segments[at]!.audioBytes).toBe(reference.summary.segments[at]!.audioBytes + cut!.droppedBytes);
  });

  it('close 1011 mid-segment: the status route says resumable, so it resumes instead of failing over (no second charge)', async () => {
    const reference = await speak('realtime');
    server.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1011 } });
    const run = await speak('auto');
    server.faults.clear();
    expect(run.failovers).toEqual([]);
    expect(run.resumed).toBe(1);
    expect(run.summary.rechargedUnits).toBe(0);
    expect(run.audio.equals(reference.audio)).toBe(true);
  });

  it('wav: a failover right after the stream header keeps the whole first segment (the header is not audio to skip; found by the chaos suite)', async () => {
    const speakWav = async (transport: 'auto' | 'realtime') => {
      const speech = await createSpeechStream(config, { format: 'wav', transport, segmenter: { targetChars: 20, firstMinChars: 12 } });
      speech.end(TEXT);
      const chunks: Buffer[] = [];
      for await (const c of speech) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    const reference = await speakWav('realtime');
    for (const afterChunks of [0, 1, 2]) {
      server.faults.set({ engineFailure: { afterChunks } });
      const run = await speakWav('auto');
      server.faults.clear();
      expect(run.length, `engine failure after ${afterChunks} chunks`).toBe(reference.length);
      expect(run.equals(reference)).toBe(true);
    }
  });

  it('a numbering that starts past 1 (frames held for a start that never comes): the segment cut mid-audio still counts as charged again, audio byte-exact', async () => {
    // Drawn deployments whose audio sequence starts past 1 with a constant
    // step (so the first frames wait in the window); the same fault on each.
    const seeds = Array.from({ length: 60 }, (_, i) => `late-start-${i}`).filter((seed) => {
      const { start, step } = drawRandomDialect(`random:${seed}:only=sequence`).realtime.sequence;
      return start > 1 && step === 1;
    });
    expect(seeds.length).toBeGreaterThanOrEqual(2);
    // The audio to match: our own dialect's (this file's server may run a drawn one, another rate).
    const ours = await startServer({ engine: 'tone', dialect: 'reference' });
    let reference: Buffer;
    try {
      const speech = await createSpeechStream(serviceConfigOf(ours), { format: 'pcm', transport: 'realtime', segmenter: { targetChars: 20, firstMinChars: 12 } });
      speech.end(TEXT);
      const chunks: Buffer[] = [];
      for await (const c of speech) chunks.push(c as Buffer);
      reference = Buffer.concat(chunks);
    } finally {
      await ours.close();
    }
    for (const seed of seeds.slice(0, 2)) {
      const drawn = await startServer({ engine: 'tone', dialect: `random:${seed}:only=sequence` });
      try {
        drawn.faults.set({ realtimeError: { afterAudioFrames: 3, code: 'provider_unavailable', retryable: false } });
        const speech = await createSpeechStream(serviceConfigOf(drawn), { format: 'pcm', transport: 'auto', segmenter: { targetChars: 20, firstMinChars: 12 } });
        const recharged: string[][] = [];
        speech.on('failover', (f) => recharged.push(f.recharged));
        speech.end(TEXT);
        const chunks: Buffer[] = [];
        for await (const c of speech) chunks.push(c as Buffer);
        expect(recharged, seed).toHaveLength(1);
        expect(recharged[0], `${seed}: the server charged the cut segment at its first audio`).toHaveLength(1);
        expect(speech.summary().rechargedUnits, seed).toBeGreaterThan(0);
        expect(Buffer.concat(chunks).equals(reference), seed).toBe(true);
      } finally {
        await drawn.close();
      }
    }
  });

  it('starts over sync when the realtime service cannot be reached at all', async () => {
    const broken = { ...config, wsUrl: 'ws://127.0.0.1:9' };
    const speech = await createSpeechStream(broken, { format: 'pcm', transport: 'auto', voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01' });
    const failovers: string[] = [];
    speech.on('failover', (f) => failovers.push(`${f.from}->${f.to}`));
    speech.end('Realtime is down today.');
    let bytes = 0;
    for await (const c of speech) bytes += (c as Buffer).length;
    expect(failovers).toEqual(['realtime->sync']);
    expect(bytes).toBeGreaterThan(0);
    expect(speech.summary().segments.every((s) => s.transport === 'sync')).toBe(true);
  });

  it('speaks a personal (non-public) voice over sync from the start, since realtime takes public voices only', async () => {
    server.ctx.store.collection('voices').set('voice_personal_1', { voiceId: 'voice_personal_1', userId: 'local-dev', name: 'Mine', basePitchHz: 150, espeakVoice: 'en-us' });
    const speech = await createSpeechStream(config, { format: 'pcm', transport: 'auto', voiceId: 'voice_personal_1' });
    speech.end('My own voice.');
    let bytes = 0;
    for await (const c of speech) bytes += (c as Buffer).length;
    expect(bytes).toBeGreaterThan(0);
    expect(speech.summary().transport).toBe('sync');
    expect(speech.summary().ready?.sampleRate).toBe(TONE_RATE);
  });
});
