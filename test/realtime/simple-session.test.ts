/**
 * SimpleSession against the reference server: one generation per
 * connection, committed at `end()`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { AbortError, RealtimeServerError } from '../../src/errors.js';
import { SimpleSession, type SimpleSessionOptions } from '../../src/realtime/simple-session.js';
import type { ReferenceServer } from '../../src/server/index.js';
import type { SegmentResult } from '../../src/transport.js';
import { SpeechStream } from '../../src/stream/speech-stream.js';
import { API_KEY, REQUEST, run, session, startTestServer, USER_ID } from './fixtures.js';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

function simple(options: Partial<SimpleSessionOptions> = {}): SimpleSession {
  return new SimpleSession({ wsUrl: server.wsUrl, apiKey: API_KEY, request: REQUEST, ...options });
}

const PARTS = ['Simple mode ', 'speaks only ', 'after the end.'];

async function speak(s: SimpleSession, parts: string[]) {
  const chunks: Buffer[] = [];
  s.on('audio', (c) => chunks.push(c.data));
  await s.open();
  const sends = parts.map((text, i) => s.send({ segmentId: `p${i}`, text }));
  const summary = await s.end();
  return { audio: Buffer.concat(chunks), summary, results: await Promise.all(sends) };
}

describe('SimpleSession', () => {
  it('sends every part uncommitted, commits at end, and speaks them as one generation', async () => {
    const quotaBefore = server.ctx.store.accounts.get(USER_ID)!.apiQuota;
    const r = await speak(simple(), PARTS);
    const text = PARTS.join('');
    expect(r.summary.units).toBe(text.length);
    expect(r.summary.audioBytes).toBe(r.audio.length);
    expect(server.ctx.store.accounts.get(USER_ID)!.apiQuota).toBe(quotaBefore - text.length);
    // Same audio as the whole text spoken as one reliable segment.
    const reliable = await run(session(server), [{ segmentId: 'all', text }]);
    expect(r.audio.equals(reliable.audio)).toBe(true);
    // Per-part results are known only at finish; the last carries the totals.
    expect(r.results.map((x: SegmentResult) => x.segmentId)).toEqual(['p0', 'p1', 'p2']);
    expect(r.results.map((x) => x.units)).toEqual([0, 0, text.length]);
    expect(r.summary).toMatchObject({ retries: 0, resumed: 0 });
  });

  it('hands its audio over tagged with the part that committed the request', async () => {
    const s = simple();
    const tags = new Set<string>();
    s.on('audio', (c) => tags.add(c.segmentId));
    await speak(s, PARTS);
    expect([...tags]).toEqual(['p2']);
  });

  it('under SpeechStream: the committing part carries every byte the listener got', async () => {
    const speech = new SpeechStream({ transport: simple() });
    const chunks: Buffer[] = [];
    const read = (async () => {
      for await (const c of speech) chunks.push(c as Buffer);
    })();
    speech.end('First sentence here. Second sentence there. Third one ends it.');
    await read;
    const segments = speech.summary().segments;
    expect(segments.length).toBeGreaterThan(0);
    const total = Buffer.concat(chunks).length;
    expect(total).toBeGreaterThan(0);
    expect(segments.at(-1)!.audioBytes).toBe(total);
  });

  it('accepts parts sent before ready', async () => {
    const s = simple();
    const chunks: Buffer[] = [];
    s.on('audio', (c) => chunks.push(c.data));
    const opened = s.open();
    const sends = PARTS.map((text, i) => s.send({ segmentId: `q${i}`, text }));
    const summary = await s.end();
    await opened;
    await Promise.all(sends);
    expect(summary.units).toBe(PARTS.join('').length);
    expect(chunks.length).toBeGreaterThan(0);
  });

  it('wav: one stream header, at the start', async () => {
    const r = await speak(simple({ request: { ...REQUEST, format: 'wav' } }), ['Hello wav.']);
    expect(r.audio.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(r.audio.indexOf('RIFF', 4)).toBe(-1);
  });

  it('end() with nothing sent charges nothing', async () => {
    const quotaBefore = server.ctx.store.accounts.get(USER_ID)!.apiQuota;
    const s = simple();
    await s.open();
    const summary = await s.end();
    expect(summary).toMatchObject({ units: 0, segments: [] });
    expect(server.ctx.store.accounts.get(USER_ID)!.apiQuota).toBe(quotaBefore);
  });

  it('refuses a request over 10,000 characters before sending it', async () => {
    const s = simple();
    await s.open();
    const first = s.send({ segmentId: 'a', text: 'x'.repeat(6_000) });
    await expect(s.send({ segmentId: 'b', text: 'y'.repeat(4_001) })).rejects.toMatchObject({ code: 'segment_too_large' });
    await s.abort();
    await expect(first).rejects.toBeInstanceOf(AbortError);
  });

  it('an unknown voice: voice_not_found at open', async () => {
    const error = await simple({ request: { ...REQUEST, voice_id: randomUUID() } })
      .open()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RealtimeServerError);
    expect(error).toMatchObject({ code: 'voice_not_found' });
  });

  it('abort() rejects what is pending with AbortError', async () => {
    const s = simple();
    await s.open();
    const sent = s.send({ segmentId: 'a', text: 'Never spoken.' });
    await s.abort();
    await expect(sent).rejects.toBeInstanceOf(AbortError);
    await expect(s.end()).rejects.toBeInstanceOf(AbortError);
  });
});
