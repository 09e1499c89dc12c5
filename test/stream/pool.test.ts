/**
 * Prewarmed connections: a pooled SpeechStream starts on a
 * connection already authenticated, speaks exactly what an unpooled one
 * speaks, still resumes, and the pool refills.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceConfig } from '../../src/config.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechPool, createSpeechStream, type SpeechOptions } from '../../src/speech.js';
import type { SpeechStream } from '../../src/stream/speech-stream.js';

const TEXT = 'A pooled turn. It speaks as any other.';
let server: ReferenceServer;
let config: ServiceConfig;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  config = serviceConfigOf(server);
});
afterAll(() => server.close());

async function speak(speech: SpeechStream): Promise<Buffer> {
  speech.end(TEXT);
  const chunks: Buffer[] = [];
  for await (const c of speech) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const options: SpeechOptions = { format: 'pcm', transport: 'realtime' };

describe('createSpeechPool', () => {
  it('hands out a ready connection, speaks byte-exact, and refills', async () => {
    const pool = createSpeechPool(config, { ...options, spare: 2 });
    try {
      await pool.ready();
      expect(pool.stats.ready).toBe(2);
      const reference = await speak(await createSpeechStream(config, options));
      const pooled = await speak(await pool.createSpeechStream());
      expect(pooled.equals(reference)).toBe(true);
      expect(pool.stats.hits).toBe(1);
      await pool.ready();
      expect(pool.stats.ready).toBe(2);
    } finally {
      pool.close();
    }
    expect(pool.stats.ready).toBe(0);
  });

  it('a pooled turn still resumes after close 1012 mid-segment, byte-exact', async () => {
    const pool = createSpeechPool(config, { ...options, spare: 1 });
    try {
      await pool.ready();
      const reference = await speak(await createSpeechStream(config, options));
      server.faults.set({ realtimeClose: { afterAudioFrames: 2, code: 1012 } });
      const speech = await pool.createSpeechStream();
      let resumed = 0;
      speech.on('resumed', () => resumed++);
      const audio = await speak(speech);
      server.faults.clear();
      expect(resumed).toBe(1);
      expect(audio.equals(reference)).toBe(true);
    } finally {
      pool.close();
    }
  });

  it('with no spare ready, a turn connects itself (a miss, never slower than no pool)', async () => {
    const pool = createSpeechPool(config, { ...options, spare: 0 });
    try {
      const audio = await speak(await pool.createSpeechStream());
      expect(audio.length).toBeGreaterThan(0);
      expect(pool.stats).toMatchObject({ hits: 0, misses: 1 });
    } finally {
      pool.close();
    }
  });
});
