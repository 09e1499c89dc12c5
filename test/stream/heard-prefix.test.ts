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
