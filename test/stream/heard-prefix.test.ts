/**
 * The heard text is a prefix of what the caller wrote, character for
 * character (spaces, newlines, punctuation and non-ASCII letters kept, no
 * normalized copy), wherever the listener was: its length is the offset at
 * which to truncate an agent's context. The text is written in pieces that
 * split words and is cut into several segments by the segmenter; the
 * reference server's tone engine on port 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { heardAt } from '../../src/stream/heard.js';

const WRITTEN = 'Hello,  world!\n\nThe café’s  menu — crêpes, naïve “quoted”   text.\tNext line here?  Yes!\nÜber-große Wörter: 42 times… done.  ';
/** Written as an agent streams tokens: pieces that split words and spaces. */
const PIECES = WRITTEN.match(/[\s\S]{1,7}/g)!;

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
});
afterAll(() => server.close());

async function heardAtMs(playedMs: number): Promise<{ heardText: string; segments: number; totalMs: number }> {
  // Short segments: several of them in this text.
  const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm', segmenter: { targetChars: 30, maxChars: 50 } });
  for (const piece of PIECES) speech.write(piece);
  speech.end();
  let bytes = 0;
  let perMs = 48;
  for await (const chunk of speech.chunks()) {
    bytes += chunk.data.length;
    perMs = (chunk.sampleRate * chunk.channels * 2) / 1000;
  }
  const report = await speech.interrupt({ playedMs });
  return { heardText: report.heardText, segments: report.spoken.length, totalMs: bytes / perMs };
}

describe('the heard text is a prefix of what the caller wrote', () => {
  it('at every played position: the same characters as written, ending at a word, its length the offset to truncate at', async () => {
    const { segments, totalMs } = await heardAtMs(Infinity);
    expect(segments).toBeGreaterThanOrEqual(3);
    const heard = new Set<string>();
    for (const fraction of [0.1, 0.25, 0.4, 0.55, 0.7, 0.85]) {
      const { heardText } = await heardAtMs(totalMs * fraction);
      expect(WRITTEN.slice(0, heardText.length)).toBe(heardText);
      // It ends at a word: at a space (a segment heard whole keeps the spaces it ends with) or before one.
      expect(/\s$/.test(heardText) || /\s/.test(WRITTEN[heardText.length] ?? ' ')).toBe(true);
      heard.add(heardText);
    }
    // Different positions, different words: a rule that heard nothing would pass too.
    expect(heard.size).toBeGreaterThanOrEqual(4);
    // Everything heard: the text as written, to its last word.
    expect((await heardAtMs(totalMs + 1_000)).heardText).toBe(WRITTEN);
  }, 60_000);
});

describe('heardAt keeps the heard text a prefix', () => {
  it('a segment with no audio (nothing to hear) between two heard ones keeps its text in the heard text', () => {
    const layout = { format: 'pcm', sampleRate: 24_000, channels: 1 };
    const segments = [
      { segmentId: 'a', text: 'First part. ', bytes: 48_000, complete: true },
      { segmentId: 'b', text: '... ', bytes: 0, complete: true },
      { segmentId: 'c', text: 'Then the rest of it.', bytes: 96_000, complete: true },
    ];
    const written = segments.map((s) => s.text).join('');
    for (const ms of [1_500, 2_000, 3_500]) {
      const { heardText } = heardAt(segments, { ms }, layout);
      expect(written.slice(0, heardText.length)).toBe(heardText);
      expect(heardText.startsWith('First part. ... ')).toBe(true);
    }
    // Before the next segment is heard, the heard text ends where the audio did.
    expect(heardAt(segments, { ms: 1_000 }, layout).heardText).toBe('First part. ');
  });
});
