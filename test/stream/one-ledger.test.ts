/**
 * Over real sockets: SpeechStream keeps the one ledger of
 * each segment. The reliable session it reads is bound to that ledger: it
 * passes the machine's raw bytes through, tagged (attempt, offset), and the
 * machine asks the stream's ledger what the listener has. A resume is a new
 * attempt the stream's ledger splices; nothing is counted or spliced twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../src/server/index.js';
import { SpeechStream } from '../../src/stream/speech-stream.js';
import type { AudioFormat } from '../../src/protocol/audio.js';
import type { TransportAudio } from '../../src/transport.js';
import { REQUEST, session, startTestServer } from '../realtime/fixtures.js';

const TEXT = 'The quick brown fox jumps over the lazy dog near the river bank. Pack my box with five dozen liquor jugs, said the sailor, twice.';
let server: ReferenceServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function speak(format: AudioFormat) {
  const transport = session(server, { request: { ...REQUEST, format } });
  const raw: TransportAudio[] = [];
  let sessionDiscontinuities = 0;
  transport.on('audio', (c) => raw.push(c));
  transport.on('discontinuity', () => sessionDiscontinuities++);
  const speech = new SpeechStream({ transport, segmenter: { targetChars: 40, firstMinChars: 20 }, segmentIdPrefix: 'one' });
  const discontinuities: number[] = [];
  let resumed = 0;
  speech.on('discontinuity', (d) => discontinuities.push(d.droppedBytes));
  speech.on('resumed', () => resumed++);
  speech.end(TEXT);
  const chunks: Buffer[] = [];
  for await (const c of speech) chunks.push(c as Buffer);
  return { audio: Buffer.concat(chunks), raw, resumed, discontinuities, sessionDiscontinuities, summary: speech.summary(), machine: transport.summary() };
}

describe('one ledger per segment (SpeechStream over a reliable session)', () => {
  for (const format of ['pcm', 'wav'] as const) {
    it(`${format}: a resume mid-segment reaches the listener byte-identical; the session handed the new attempt over raw, under a new tag`, async () => {
      const reference = await speak(format);
      server.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1012 } });
      const run = await speak(format);
      server.faults.clear();
      expect(run.resumed).toBe(1);
      expect(run.audio.equals(reference.audio)).toBe(true);
      // Raw: every chunk tagged, the new attempt's offsets start again at 0.
      expect(run.raw.every((c) => c.attempt !== undefined && c.offset !== undefined)).toBe(true);
      const tagsOfFirst = new Set(run.raw.filter((c) => c.segmentId === 'one-0').map((c) => c.attempt));
      expect(tagsOfFirst.size).toBe(2);
      expect(run.raw.filter((c) => c.segmentId === 'one-0' && c.offset === 0)).toHaveLength(2);
      // The machine's counts are the stream's: one ledger.
      for (const [i, s] of run.summary.segments.entries()) expect(run.machine.segments[i]!.audioBytes).toBe(s.audioBytes);
    });
  }

  it('mp3: the stream announces the restart, the session never splices on its own', async () => {
    server.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1012 } });
    const run = await speak('mp3');
    server.faults.clear();
    expect(run.resumed).toBe(1);
    expect(run.sessionDiscontinuities).toBe(0);
    expect(run.discontinuities).toHaveLength(1);
    expect(run.discontinuities[0]).toBeGreaterThan(0);
  });
});
