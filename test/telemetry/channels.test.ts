/**
 * voxpipe's diagnostics channels (`src/telemetry/channels.ts`), over real
 * sockets to the reference server on port 0: a subscriber gets a request's
 * messages in order, with the waterfall's figures, and never the key.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReferenceServer } from '../../src/server/index.js';
import { SpeechStream } from '../../src/stream/speech-stream.js';
import { createSpeechStream } from '../../src/speech.js';
import { serviceConfigOf } from '../../src/service.js';
import { ChannelName, type ChannelMessages } from '../../src/telemetry/channels.js';
import { API_KEY, session, startTestServer } from '../realtime/fixtures.js';

const TEXT = 'The quick brown fox jumps over the lazy dog near the river bank.';
let server: ReferenceServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Received = { [N in keyof ChannelMessages]: { name: N; message: ChannelMessages[N] } }[keyof ChannelMessages];

/** Every message of every voxpipe channel while `run` runs, in order. */
async function record(run: (received: readonly Received[]) => Promise<void>): Promise<Received[]> {
  const received: Received[] = [];
  const listener = (message: unknown, name: string | symbol): void => {
    received.push({ name, message } as Received);
  };
  const names = Object.values(ChannelName);
  for (const name of names) subscribe(name, listener);
  try {
    await run(received);
  } finally {
    for (const name of names) unsubscribe(name, listener);
  }
  return received;
}

/** Every string reachable in a message's own fields (not the stream, session or transport objects it names). */
function strings(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value];
  if (depth > 3 || value === null || typeof value !== 'object') return [];
  if (value instanceof SpeechStream || 'removeAllListeners' in value) return [];
  return Object.values(value).flatMap((v) => strings(v, depth + 1));
}

describe('diagnostics channels', () => {
  it('a simple realtime request: its messages in order, each with its figures, no key', async () => {
    const transport = session(server);
    const speech = new SpeechStream({ transport, segmentIdPrefix: 'ch' });
    const received = await record(async (so) => {
      speech.end(TEXT);
      for await (const _ of speech) void _;
      // The connection closes after the stream ended: wait for its attempt to end.
      await vi.waitUntil(() => so.some((r) => r.name === ChannelName.attemptEnd), { timeout: 5_000 });
    });
    const names = received.map((r) => r.name);
    const ofStream = names.filter((n) => !n.startsWith('voxpipe:attempt:') && !n.startsWith('voxpipe:http:'));
    expect(ofStream).toEqual([
      ChannelName.requestStart,
      ChannelName.segmentStart,
      ChannelName.requestReady,
      ChannelName.segmentSent,
      ChannelName.segmentFirstAudio,
      ChannelName.requestFirstAudio,
      ChannelName.segmentComplete,
      ChannelName.requestEnd,
    ]);
    // One connection: it starts after the request and ends after it authenticated.
    expect(names.filter((n) => n.startsWith('voxpipe:attempt:'))).toEqual([ChannelName.attemptStart, ChannelName.attemptEnd]);
    expect(names.indexOf(ChannelName.attemptStart)).toBeGreaterThan(names.indexOf(ChannelName.requestStart));
    expect(names.indexOf(ChannelName.attemptStart)).toBeLessThan(names.indexOf(ChannelName.requestReady));

    const summary = speech.summary();
    for (const r of received) {
      if ('stream' in r.message) expect(r.message.stream).toBe(speech);
      expect(strings(r.message).filter((s) => s.includes(API_KEY))).toEqual([]);
      switch (r.name) {
        case ChannelName.requestStart:
          expect(r.message.transport).toBe(transport);
          expect(r.message.transportName).toBe('realtime');
          break;
        case ChannelName.requestReady:
          expect(r.message.requestId).toBe(transport.requestId);
          expect(r.message.ready.format).toBe('pcm');
          break;
        case ChannelName.segmentStart:
          expect(r.message).toMatchObject({ segmentId: 'ch-0', characters: TEXT.length, text: TEXT });
          break;
        case ChannelName.segmentSent:
          expect(r.message).toMatchObject({ segmentId: 'ch-0', requestId: transport.requestId, transportName: 'realtime' });
          expect(r.message.transport).toBe(transport);
          break;
        case ChannelName.requestFirstAudio:
          expect(r.message.ttfaMs).toBe(summary.waterfall.ttfaMs);
          break;
        case ChannelName.segmentComplete:
          expect(r.message).toMatchObject({ segmentId: 'ch-0', requestId: transport.requestId, transportName: 'realtime', units: summary.segments[0]!.units, bytes: summary.bytes, rechargedUnits: 0 });
          expect(r.message.durationMs).toBeGreaterThanOrEqual(r.message.firstAudioMs!);
          break;
        case ChannelName.requestEnd:
          expect(r.message).toMatchObject({ outcome: 'completed', error: undefined, requestId: transport.requestId, bytes: summary.bytes, units: summary.units, segments: 1, retries: 0, resumed: 0, failovers: 0, ttfaMs: summary.waterfall.ttfaMs });
          break;
        case ChannelName.attemptStart:
          expect(r.message).toMatchObject({ session: transport, requestId: transport.requestId, attempt: 1, server: { address: new URL(server.wsUrl).hostname, port: Number(new URL(server.wsUrl).port) } });
          break;
        case ChannelName.attemptEnd:
          expect(r.message).toMatchObject({ session: transport, attempt: 1, outcome: 'closed', code: 1000 });
          break;
      }
    }
  });

  it('an HTTP transport: each REST request starts and ends with its status, path without query', async () => {
    const speech = await createSpeechStream(serviceConfigOf(server, API_KEY), { format: 'pcm', transport: 'sync' });
    const received = await record(async () => {
      speech.end(TEXT);
      for await (const _ of speech) void _;
    });
    const http = received.filter((r) => r.name === ChannelName.httpRequestStart || r.name === ChannelName.httpRequestEnd);
    expect(http.length).toBeGreaterThanOrEqual(2);
    const starts = http.filter((r) => r.name === ChannelName.httpRequestStart);
    const ends = http.filter((r) => r.name === ChannelName.httpRequestEnd);
    expect(ends).toHaveLength(starts.length);
    for (const end of ends) {
      if (end.name !== ChannelName.httpRequestEnd) continue;
      expect(starts.some((s) => s.message.request === end.message.request)).toBe(true);
      expect(end.message).toMatchObject({ status: 200, error: undefined });
      expect(end.message.request.path).not.toContain('?');
      expect(strings(end.message).filter((s) => s.includes(API_KEY))).toEqual([]);
    }
    expect(received.find((r) => r.name === ChannelName.requestEnd)?.message).toMatchObject({ outcome: 'completed', transportName: 'sync' });
  });


  it('request:end is published once however the stream ends: interrupted, failed (after request:error), destroyed by its user', async () => {
    const ends = (received: Received[]) => received.filter((r) => r.name === ChannelName.requestEnd || r.name === ChannelName.requestError).map((r) => (r.name === ChannelName.requestEnd ? `end:${r.message.outcome}` : `error:${r.message.error.code}`));

    const interrupted = await record(async () => {
      const speech = new SpeechStream({ transport: session(server) });
      speech.write(TEXT);
      await new Promise((resolve) => speech.once('first-audio', resolve));
      await speech.interrupt();
    });
    expect(ends(interrupted)).toEqual(['end:interrupted']);

    const failed = await record(async () => {
      const speech = new SpeechStream({ transport: session(server, { apiKey: 'sk-not-a-key' }) });
      speech.end(TEXT);
      await new Promise((resolve) => speech.once('error', resolve));
    });
    expect(ends(failed)).toEqual(['error:unauthorized', 'end:failed']);
    expect(strings(failed.map((r) => r.message)).filter((v) => v.includes('sk-not-a-key'))).toEqual([]);

    const destroyed = await record(async () => {
      const speech = new SpeechStream({ transport: session(server) });
      speech.write(TEXT);
      await new Promise((resolve) => speech.once('first-audio', resolve));
      speech.destroy();
      await new Promise((resolve) => speech.once('close', resolve));
    });
    expect(ends(destroyed)).toEqual(['end:aborted']);
  });
});
