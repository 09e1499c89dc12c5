/**
 * A text longer than one realtime request may carry (spec 8: 100,000 units
 * a session) is spoken to the end by a SpeechStream of the library alone:
 * it moves on to a next request, opened ahead, at a segment boundary, and
 * the listener gets every segment's audio once, in order, with one summary.
 * Real reference server (tone engine) on port 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/protocol/limits.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream, type SpeechOptions } from '../../src/speech.js';

const KEY = 'sk-test-rollover';
const PARAGRAPH = 'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! How vexingly quick daft zebras jump? ';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u-rollover', credits: 10_000_000, apiQuota: 10_000_000 }] });
});
afterAll(() => server.close());

/** Speak `text` to the end; what the listener got, checked chunk by chunk for order. */
async function speak(text: string, options: SpeechOptions) {
  const speech = await createSpeechStream({ ...serviceConfigOf(server), apiKey: KEY }, { format: 'pcm', speed: 2, ...options });
  const cut: string[] = [];
  speech.on('segment-start', ({ segmentId, text }) => cut.push(`${segmentId}\u0000${text}`));
  speech.end(text);
  const bytesOf = new Map<string, number>();
  const order: string[] = [];
  let sequence = 0;
  let bytes = 0;
  for await (const chunk of speech.chunks()) {
    // The listener's sequence: from 1, one by one, over every request.
    expect(chunk.sequence).toBe(++sequence);
    if (order[order.length - 1] !== chunk.segmentId) order.push(chunk.segmentId);
    bytesOf.set(chunk.segmentId, (bytesOf.get(chunk.segmentId) ?? 0) + chunk.data.length);
    bytes += chunk.data.length;
  }
  return { summary: speech.summary(), cut: cut.map((c) => c.split('\u0000') as [string, string]), order, bytesOf, bytes };
}

describe('SpeechStream: a text past one request\'s units', () => {
  // Its subject is length (the session limit, several requests), not the wire's spelling: the preset
  // dialects cross requests in the small-requests case below, at a fraction of its minute.
  it.runIf((process.env['VOXPIPE_DIALECT'] || 'reference') === 'reference')('speaks a 150,000-character text to the end over several requests: every segment once, in order, one summary', async () => {
    const text = PARAGRAPH.repeat(Math.ceil(150_000 / PARAGRAPH.length)).slice(0, 150_000);
    expect(text.length).toBeGreaterThan(LIMITS.sessionMaxUnits);
    const { summary, cut, order, bytesOf, bytes } = await speak(text, {});

    // Every character cut once, in order.
    expect(cut.map(([, t]) => t).join('')).toBe(text);
    // Each segment's audio came as one run, in the order the text was cut: none twice, none left out.
    expect(order).toEqual(cut.map(([id]) => id));
    expect(summary.segments.map((s) => s.segmentId)).toEqual(order);
    for (const s of summary.segments) expect(bytesOf.get(s.segmentId)).toBe(s.audioBytes);
    expect(summary.bytes).toBe(bytes);
    // Several requests, each under the session's units, and one summary of all of them.
    expect(summary.requestIds.length).toBeGreaterThanOrEqual(2);
    expect(new Set(summary.requestIds).size).toBe(summary.requestIds.length);
    expect(summary.requestId).toBe(summary.requestIds[0]);
    // Every character billed once (the spaces the segments begin or end with aside).
    expect(summary.units).toBeLessThanOrEqual(text.length);
    expect(summary.units).toBeGreaterThanOrEqual(text.length - 2 * cut.length);
  }, 600_000);

  it('small requests (requestUnits) carry the same audio as one request, but for the space at a seam', async () => {
    const text = PARAGRAPH.repeat(8).trim();
    const one = await speak(text, {});
    const parts = await speak(text, { requestUnits: 300 });
    expect(one.summary.requestIds).toHaveLength(1);
    expect(parts.summary.requestIds.length).toBeGreaterThanOrEqual(3);
    expect(parts.cut.map(([, t]) => t).join('')).toBe(text);
    expect(parts.order).toEqual(parts.cut.map(([id]) => id));
    // The tone engine: 40 ms (20 ms at speed 2) a space, 48 bytes a ms.
    expect(Math.abs(one.bytes - parts.bytes)).toBeLessThanOrEqual(parts.summary.requestIds.length * 20 * 48);
  }, 60_000);
});
