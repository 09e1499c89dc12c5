/**
 * A stalled sink over real sockets: the stream keeps its buffered audio under
 * its bound (the realtime transport stops reading the socket), and once the
 * sink reads again the stream completes with nothing lost.
 */
import { serviceConfigOf } from '../../src/service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpeechStream } from '../../src/speech.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import type { ServiceConfig } from '../../src/config.js';

const TEXT = 'This text is long enough to make several seconds of audio. '.repeat(12);
const BOUND = 64 * 1024; // 64 KiB of audio held for the reader at most
let server: ReferenceServer;
let config: ServiceConfig;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  config = serviceConfigOf(server);
});
afterAll(() => server.close());

async function collect(stalledMs: number): Promise<{ audio: Buffer; maxHeld: number }> {
  const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', maxBufferedAudioBytes: BOUND });
  speech.end(TEXT);
  let maxHeld = 0;
  if (stalledMs > 0) {
    const start = Date.now();
    while (Date.now() - start < stalledMs) {
      maxHeld = Math.max(maxHeld, speech.readableLength);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const chunks: Buffer[] = [];
  for await (const c of speech) {
    chunks.push(c as Buffer);
    maxHeld = Math.max(maxHeld, speech.readableLength);
  }
  return { audio: Buffer.concat(chunks), maxHeld };
}

describe('backpressure', () => {
  it('a sink stalled for 5 s keeps buffered audio under the bound, then completes with nothing lost', async () => {
    const reference = await collect(0);
    // The text makes far more audio than the bound: the stall really holds audio back.
    expect(reference.audio.length).toBeGreaterThan(10 * BOUND);
    const stalled = await collect(5_000);
    // Frames already read from the socket when the transport pauses still arrive:
    // at most one socket read (64 KiB) over the bound, against megabytes of audio.
    expect(stalled.maxHeld).toBeLessThanOrEqual(BOUND + 64 * 1024);
    expect(stalled.audio.equals(reference.audio)).toBe(true);
  }, 30_000);
});
