/**
 * Heard text to the word in the two cases a barge-in meets besides a
 * segment all in: a segment whose audio is still arriving (its words placed
 * from the audio that arrived, provisional) and compressed audio (mp3, opus:
 * decoded on the way for its word timings). The reference server's tone
 * engine on port 0 (70 ms a letter or digit, 40 ms a space: its word
 * boundaries are known exactly), over real sockets. And the heard text is a
 * prefix of what the caller wrote, so its length truncates a context.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { loadOpusScript } from '../../src/server/audio/opus.js';
import { serviceConfigOf } from '../../src/service.js';
import { readFirstSegment } from '../helpers/first-segment.js';
import { toneHeardBy, toneWords } from '../helpers/tone-words.js';
import { createSpeechStream } from '../../src/speech.js';
import type { StreamSegmentResult } from '../../src/stream/speech-stream.js';

const FIRST = 'Sentence number one keeps the listener busy for quite a while longer than most.';
const TEXT = `${FIRST} Then another follows it and a third one ends the turn.`;

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
});
afterAll(() => server.close());

describe('heard text while a segment still arrives', () => {
  it('a barge-in during a segment whose audio is still arriving cuts at the word the audio has, not in proportion', async () => {
    // The audio arrives slowly (a delay before every engine chunk): the first segment is still arriving at the barge-in.
    server.faults.set({ latencyMs: 15 });
    try {
      const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
      const completed: string[] = [];
      speech.on('segment', (s) => completed.push(s.segmentId));
      speech.end(TEXT);
      const { segmentId: first, bytes, bytesPerMs } = await readFirstSegment(speech, 3_000);
      expect(completed).not.toContain(first);
      const provisional = speech.wordTimings(first!)!;
      // The listener is 400 ms behind what arrived.
      const playedMs = bytes / bytesPerMs - 400;
      const report = await speech.interrupt({ playedMs });
      const partial = report.spoken.find((s) => s.segmentId === first)!;
      expect(partial.complete).toBe(false);

      // The words placed so far are where the audio has them, and no word beyond what arrived is placed.
      const truth = toneWords(FIRST);
      expect(provisional.length).toBeGreaterThanOrEqual(4);
      expect(provisional.length).toBeLessThan(truth.length);
      provisional.forEach((w, i) => {
        expect(w.word).toBe(truth[i]![0]);
        expect(Math.abs(w.startMs - truth[i]![1])).toBeLessThanOrEqual(20);
        expect(w.endMs).toBeLessThanOrEqual(bytes / bytesPerMs);
      });
      // Provisional boundaries say so, and their confidence is below that of a segment all in.
      expect(provisional.some((w) => w.provisional)).toBe(true);
      for (const w of provisional.filter((x) => x.provisional)) expect(w.confidence).toBeLessThan(0.5);

      // The heard text ends at the word the audio had at the played position (the proportional cut would read the arrived audio as the whole segment).
      const heard = partial.text.slice(0, partial.heardChars).trim();
      expect([toneHeardBy(FIRST, playedMs - 20), toneHeardBy(FIRST, playedMs + 20)]).toContain(heard);
      expect(report.heardText).toBe(FIRST.slice(0, partial.heardChars));
      expect(report.heardConfidence).toBeLessThan(0.5);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
  }, 30_000);
});

/** A compressed stream read whole, then asked what was heard at `fraction` of the first segment's bytes. */
async function compressed(format: 'mp3' | 'opus', fraction: number) {
  const speech = await createSpeechStream(serviceConfigOf(server), { format });
  const segments: StreamSegmentResult[] = [];
  speech.on('segment', (s) => segments.push(s));
  speech.end(TEXT);
  const bytesOf = new Map<string, number>();
  for await (const chunk of speech.chunks()) bytesOf.set(chunk.segmentId, (bytesOf.get(chunk.segmentId) ?? 0) + chunk.data.length);
  const first = segments[0]!;
  // The words come once the rest of the segment is decoded.
  for (let i = 0; i < 200 && !speech.wordTimings(first.segmentId)?.length; i++) await new Promise((r) => setTimeout(r, 5));
  const words = speech.wordTimings(first.segmentId)!;
  const firstBytes = bytesOf.get(first.segmentId)!;
  const report = await speech.interrupt({ playedBytes: Math.round(firstBytes * fraction) });
  return { words, report, firstBytes };
}

/** The shift of `words` against the tone engine's truth (a codec's delay): the median of the start differences. */
function codecDelay(words: { startMs: number }[], truth: [string, number, number][]): number {
  const shifts = words.map((w, i) => w.startMs - truth[i]![1]).sort((a, b) => a - b);
  return shifts[Math.floor(shifts.length / 2)]!;
}

describe('heard text of compressed audio', () => {
  it('an mp3 stream gets word timings from its decoded audio, and heard text at the word the audio has', async () => {
    const { words, report } = await compressed('mp3', 0.5);
    const truth = toneWords(FIRST);
    expect(words.map((w) => w.word)).toEqual(truth.map(([w]) => w));
    // The codec delays the audio by a constant (encoder delay): the boundaries are where the decoded audio has them.
    const delay = codecDelay(words, truth);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThanOrEqual(80);
    words.forEach((w, i) => expect(Math.abs(w.startMs - delay - truth[i]![1])).toBeLessThanOrEqual(20));

    const partial = report.spoken[0]!;
    expect(partial.complete).toBe(false);
    expect(partial.confidence).toBeGreaterThanOrEqual(0.6);
    // Half of a CBR segment's bytes: half its decoded audio.
    const playedMs = words[words.length - 1]!.endMs / 2;
    const heard = partial.text.slice(0, partial.heardChars).trim();
    expect([toneHeardBy(FIRST, playedMs - delay - 40), toneHeardBy(FIRST, playedMs - delay + 40)]).toContain(heard);
    expect(report.heardText).toBe(FIRST.slice(0, partial.heardChars));
  }, 30_000);

  it.runIf(loadOpusScript() !== undefined)('an opus stream gets word timings from its decoded audio, and heard text at a word', async () => {
    const { words, report } = await compressed('opus', 0.5);
    const truth = toneWords(FIRST);
    expect(words.map((w) => w.word)).toEqual(truth.map(([w]) => w));
    const delay = codecDelay(words, truth);
    words.forEach((w, i) => expect(Math.abs(w.startMs - delay - truth[i]![1])).toBeLessThanOrEqual(20));
    const partial = report.spoken[0]!;
    expect(partial.complete).toBe(false);
    expect(partial.confidence).toBeGreaterThanOrEqual(0.6);
    expect(partial.heardChars).toBeGreaterThan(0);
    expect(/\s/.test(FIRST[partial.heardChars] ?? ' ')).toBe(true);
    expect(report.heardText).toBe(FIRST.slice(0, partial.heardChars));
  }, 30_000);
});
