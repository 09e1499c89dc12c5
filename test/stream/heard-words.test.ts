/**
 * Barge-in on Node heard to the word: a SpeechStream over
 * the reference server's tone engine (70 ms a letter or digit, 40 ms a space:
 * its word boundaries are known exactly). The `segment` event carries word
 * timings estimated from the segment's audio, and `interrupt()` cuts the
 * heard text at the end of the last word the reader had whole, with a
 * confidence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { readFirstSegment } from '../helpers/first-segment.js';
import { toneWords } from '../helpers/tone-words.js';
import { createSpeechStream } from '../../src/speech.js';
import type { StreamSegmentResult } from '../../src/stream/speech-stream.js';

const TEXT = 'Sentence number one keeps the listener busy for a while. Then another follows it, and a third one ends the turn.';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
});
afterAll(() => server.close());

describe('heard text to the word (Node)', () => {
  it('the segment event carries word timings; interrupt() ends the heard text at a word with its confidence', async () => {
    const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
    const segments: StreamSegmentResult[] = [];
    speech.on('segment', (s) => segments.push(s));
    speech.end(TEXT);
    // The reader (a player) stops after ~1.3 s of the first sentence.
    const { segmentId: first, bytes, bytesPerMs } = await readFirstSegment(speech, 1300);
    // Its audio is all in: the tone engine is far faster than real time.
    await new Promise<void>((resolve) => {
      const check = () => (segments.some((s) => s.segmentId === first) ? resolve() : setTimeout(check, 5));
      check();
    });
    const report = await speech.interrupt();

    const segment = segments.find((s) => s.segmentId === first)!;
    const truth = toneWords('Sentence number one keeps the listener busy for a while.');
    expect(segment.words!.map((w) => w.word)).toEqual(truth.map(([w]) => w));
    segment.words!.forEach((w, i) => {
      expect(Math.abs(w.startMs - truth[i]![1])).toBeLessThanOrEqual(10);
      if (i < truth.length - 1) expect(Math.abs(w.endMs - truth[i]![2])).toBeLessThanOrEqual(10);
    });

    const heardMs = bytes / bytesPerMs;
    const heardBy = (ms: number) => truth.filter(([, , end]) => end <= ms).map(([w]) => w).join(' ');
    const partial = report.spoken.find((s) => s.segmentId === first)!;
    expect(partial.complete).toBe(false);
    expect([heardBy(heardMs - 10), heardBy(heardMs + 10)]).toContain(partial.text.slice(0, partial.heardChars).trim());
    expect(partial.heardChars).toBeGreaterThan(0);
    expect(partial.confidence).toBeGreaterThanOrEqual(0.8);
    expect(report.heardText).toBe(partial.text.slice(0, partial.heardChars));
    expect(report.heardConfidence).toBe(partial.confidence);
  });

  it('interrupt({ playedBytes }) cuts where the listener was (a sink\'s play head), not where the reader was', async () => {
    const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
    speech.end(TEXT);
    // The reader takes the whole first sentence at once; the sink has played 2.1 s of it.
    const { bytes: read, bytesPerMs } = await readFirstSegment(speech);
    const report = await speech.interrupt({ playedBytes: 2100 * bytesPerMs });
    const truth = toneWords('Sentence number one keeps the listener busy for a while.');
    const heard = truth.filter(([, , end]) => end <= 2100).map(([w]) => w).join(' ');
    expect(read).toBeGreaterThan(2100 * bytesPerMs);
    expect(report.spoken[0]!.complete).toBe(false);
    expect(report.heardText.trim()).toBe(heard);
    expect(report.heardConfidence).toBeGreaterThanOrEqual(0.8);
    expect(report.spokenChars).toBe(0);
  });
});
