/**
 * SpeechStream's per-segment ledger. Every byte accounted for (a
 * segment short of the count its transport states is recovered by failover
 * or ends in `audio_incomplete`, never a silent success), and the layout is
 * what the audio says, not what `ready` assumed.
 */
import { describe, expect, it } from 'vitest';
import { AudioIncompleteError } from '../../src/errors.js';
import { SpeechStream, type StreamSegmentResult } from '../../src/stream/speech-stream.js';
import { FakeTransport } from '../helpers/fake-transport.js';
import { drain } from '../helpers/speak.js';

const TEXT = 'First sentence here. Second one there.';

async function run(speech: SpeechStream): Promise<{ audio: Buffer; error: unknown; segments: StreamSegmentResult[] }> {
  const segments: StreamSegmentResult[] = [];
  speech.on('segment', (s) => segments.push(s));
  speech.end(TEXT);
  return { ...(await drain(speech)), segments };
}

const segmenter = { targetChars: 10, firstMinChars: 5 };

describe('every byte accounted for', () => {
  it('a segment short of the bytes its transport states, no fallback: audio_incomplete naming the segment and the missing range', async () => {
    const speech = new SpeechStream({ transport: new FakeTransport({ statesBytes: true, withholdAtSegment: 0, chunkBytes: 4 }), segmenter, segmentIdPrefix: 'p' });
    const out = await run(speech);
    expect(out.error).toBeInstanceOf(AudioIncompleteError);
    const error = out.error as AudioIncompleteError;
    expect(error.segmentId).toBe('p-0');
    expect(error.missing.to).toBe(error.expectedBytes);
    expect(error.missing.to - error.missing.from).toBeGreaterThan(0);
    expect(error.message).toContain('p-0');
    expect(out.segments).toEqual([]);
  });

  it('a segment short of its stated bytes with a fallback: the fallback continues past what was heard, byte-exact', async () => {
    const failovers: string[] = [];
    const speech = new SpeechStream({
      transport: new FakeTransport({ statesBytes: true, withholdAtSegment: 0, chunkBytes: 4 }),
      fallback: () => new FakeTransport({ name: 'sync', statesBytes: true, chunkBytes: 4 }),
      segmenter,
    });
    speech.on('failover', (f) => failovers.push(`${f.from}->${f.to}:${f.error.code}`));
    const out = await run(speech);
    expect(out.error).toBeUndefined();
    expect(failovers).toEqual(['realtime->sync:audio_incomplete']);
    expect(out.audio.toString('utf8')).toBe(TEXT);
    for (const s of out.segments) expect(s.receivedBytes).toBe(s.expectedBytes);
  });

  it('the segment event carries the expected and received bytes', async () => {
    const out = await run(new SpeechStream({ transport: new FakeTransport({ statesBytes: true }), segmenter }));
    expect(out.error).toBeUndefined();
    expect(out.segments.length).toBeGreaterThan(1);
    for (const s of out.segments) expect(s.expectedBytes).toBe(s.receivedBytes);
    expect(out.segments.reduce((n, s) => n + s.receivedBytes, 0)).toBe(Buffer.byteLength(TEXT));
  });
});

describe('one ledger per segment, every transport tagged', () => {
  for (const [failAfterBytes, chunkBytes, fallbackChunk] of [
    [5, 3, 5],
    [1, 1, 7],
    [8, 4, 3],
  ] as const) {
    it(`a failover mid-segment (cut after ${failAfterBytes} bytes, chunks of ${chunkBytes} then ${fallbackChunk}): the fallback's new attempt tags splice byte-exactly`, async () => {
      const failovers: string[][] = [];
      const primary = new FakeTransport({ failAtSegment: 1, failAfterBytes, chunkBytes });
      const speech = new SpeechStream({ transport: primary, fallback: () => new FakeTransport({ name: 'sync', chunkBytes: fallbackChunk, statesBytes: true }), segmenter, segmentIdPrefix: 'q' });
      speech.on('failover', (f) => failovers.push(f.recharged));
      const out = await run(speech);
      expect(out.error).toBeUndefined();
      // The cut segment had begun: the fallback generated it again, and the listener got each byte once.
      expect(failovers).toEqual([['q-1']]);
      expect(out.audio.toString('utf8')).toBe(TEXT);
      const cut = out.segments.find((s) => s.segmentId === 'q-1')!;
      expect(cut.transport).toBe('sync');
      expect(cut.receivedBytes).toBe(cut.expectedBytes);
    });
  }

  it('mp3: the fallback\'s new attempt restarts the cut segment after a discontinuity naming the bytes heard', async () => {
    const speech = new SpeechStream({ transport: new FakeTransport({ format: 'mp3', failAtSegment: 1, failAfterBytes: 5, chunkBytes: 3 }), fallback: () => new FakeTransport({ name: 'sync', format: 'mp3' }), segmenter, segmentIdPrefix: 'm' });
    const discontinuities: { segmentId: string; droppedBytes: number }[] = [];
    speech.on('discontinuity', (d) => discontinuities.push(d));
    const out = await run(speech);
    expect(out.error).toBeUndefined();
    expect(discontinuities).toEqual([{ segmentId: 'm-1', droppedBytes: 6 }]);
    const texts = out.segments.map((s) => s.segmentId);
    expect(texts[0]).toBe('m-0');
    const first = speech.summary().segments[0]!;
    const cutText = TEXT.slice(first.receivedBytes);
    expect(out.audio.toString('utf8')).toBe(TEXT.slice(0, first.receivedBytes) + cutText.slice(0, 6) + cutText);
  });

  it('chunks the listener gets carry the stream\'s own strictly increasing sequence across a failover, no tags', async () => {
    const speech = new SpeechStream({ transport: new FakeTransport({ failAtSegment: 1, failAfterBytes: 4 }), fallback: () => new FakeTransport({ name: 'sync' }), segmenter });
    speech.end(TEXT);
    const sequences: number[] = [];
    for await (const c of speech.chunks()) {
      sequences.push(c.sequence);
      expect(c).not.toHaveProperty('attempt');
    }
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
  });
});

describe('the layout is what the audio says', () => {
  it('ready assumed 24 kHz, the audio says 16 kHz: info, the summary and the chunks say 16 kHz', async () => {
    const speech = new SpeechStream({ transport: new FakeTransport({ chunkRate: 16_000 }), segmenter });
    const opened = await speech.open();
    expect(opened.sampleRate).toBe(24_000); // the announcement, before any audio
    speech.end(TEXT);
    const rates = new Set<number>();
    for await (const c of speech.chunks()) rates.add(c.sampleRate);
    expect([...rates]).toEqual([16_000]);
    expect(speech.info?.sampleRate).toBe(16_000);
    expect(speech.summary().ready?.sampleRate).toBe(16_000);
  });
});
