/** The HTTP transports over real HTTP against the reference server: audio for several segments, in order. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../src/errors.js';
import { createClient, type VoxpipeClient } from '../../../src/http/index.js';
import type { AudioFormat } from '../../../src/protocol/audio.js';
import { parseWavHeader, WAV_UNKNOWN_SIZE } from '../../../src/sinks/wav-header.js';
import { dialectOf, startServer, type ReferenceServer } from '../../../src/server/index.js';
import { AsyncTransport } from '../../../src/stream/transports/async.js';
import { CompatTransport } from '../../../src/stream/transports/compat.js';
import type { HttpTransportOptions } from '../../../src/stream/transports/http-base.js';
import { segmentRequestId, SyncTransport } from '../../../src/stream/transports/sync.js';
import { createHttpTransport, HTTP_TRANSPORTS } from '../../../src/stream/transports/http-transports.js';
import { splitRequestText } from '../../../src/stream/transports/http-base.js';
import type { SegmentResult, SegmentTransport, TransportAudio } from '../../../src/transport.js';
import { TONE_RATE } from '../../helpers/dialect.js';

let server: ReferenceServer;
let client: VoxpipeClient;
let voiceId: string;
const credits = () => server.ctx.store.accounts.get('local-dev')!.credits;

const SEGMENTS = [
  { segmentId: 'seg-0', text: 'First, a short clause.' },
  { segmentId: 'seg-1', text: 'Then a second sentence that is somewhat longer.' },
  { segmentId: 'seg-2', text: 'And a third.' },
];

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  client = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, initialRetryDelayMs: 1 });
  voiceId = (await client.compat.voices())[0]!.id;
});
afterAll(async () => {
  await server.close();
});

type Make = (o: HttpTransportOptions) => SegmentTransport;
const makers: [string, Make][] = [
  ['sync', (o) => new SyncTransport(o)],
  ['async', (o) => new AsyncTransport({ ...o, poll: { intervalMs: 20, maxIntervalMs: 50 } })],
  ['compat', (o) => new CompatTransport(o)],
];

async function speak(t: SegmentTransport, segments = SEGMENTS): Promise<{ chunks: TransportAudio[]; completed: SegmentResult[]; results: SegmentResult[] }> {
  const chunks: TransportAudio[] = [];
  const completed: SegmentResult[] = [];
  t.on('audio', (c) => chunks.push(c));
  t.on('segment-completed', (r) => completed.push(r));
  await t.open();
  const results = await Promise.all(segments.map((s) => t.send(s)));
  await t.end();
  return { chunks, completed, results };
}

/** The PCM the sync route gives for `text` as a wav file: the reference for every transport. */
async function referencePcm(text: string): Promise<Buffer> {
  const { audio } = await client.tts.synthesize({ text, voiceId, format: 'wav' });
  const h = parseWavHeader(audio)!;
  return audio.subarray(h.dataOffset, h.dataOffset + h.dataBytes!);
}

describe.each(makers)('%s transport', (name, make) => {
  it('speaks several segments as PCM, in order, each completed once, equal to the route audio', async () => {
    const t = make({ client, voiceId, format: 'pcm', requestId: `pcm-${name}`, chunkBytes: 8_192 });
    const { chunks, completed, results } = await speak(t);
    expect(completed.map((r) => r.segmentId)).toEqual(SEGMENTS.map((s) => s.segmentId));
    expect(results.every((r) => r.transport === name)).toBe(true);
    // Chunks of a segment are contiguous and segments come in order.
    const order = chunks.map((c) => c.segmentId).filter((id, i, all) => i === 0 || all[i - 1] !== id);
    expect(order).toEqual(SEGMENTS.map((s) => s.segmentId));
    for (const c of chunks) expect(c).toMatchObject({ format: 'pcm', sampleRate: TONE_RATE, channels: 1, bitDepth: 16 });
    for (const [i, s] of SEGMENTS.entries()) {
      const got = Buffer.concat(chunks.filter((c) => c.segmentId === s.segmentId).map((c) => c.data));
      expect(got.equals(await referencePcm(s.text))).toBe(true);
      expect(completed[i]!.audioBytes).toBe(got.length);
      // A deployment answering the minimal job shape does not say what a job cost.
      if (name === 'async' && dialectOf().jobShape === 'minimal') expect(completed[i]!.units).toBe(0);
      else expect(completed[i]!.units).toBeGreaterThan(0);
    }
    expect(t.pending()).toEqual([]);
  });

  it('speaks wav as one streaming header followed by raw PCM', async () => {
    const t = make({ client, voiceId, format: 'wav', requestId: `wav-${name}` });
    const { chunks } = await speak(t, SEGMENTS.slice(0, 2));
    const stream = Buffer.concat(chunks.map((c) => c.data));
    const header = parseWavHeader(stream)!;
    expect(stream.readUInt32LE(4)).toBe(WAV_UNKNOWN_SIZE);
    expect(header.dataBytes).toBeUndefined();
    expect(stream.indexOf('RIFF', 4)).toBe(-1);
    const expected = Buffer.concat([await referencePcm(SEGMENTS[0]!.text), await referencePcm(SEGMENTS[1]!.text)]);
    expect(stream.subarray(header.dataOffset).equals(expected)).toBe(true);
  });
});

describe('sync transport', () => {
  it('uses a stable X-Request-Id per segment, so a second transport with the same request id replays without charging', async () => {
    const first = await speak(new SyncTransport({ client, voiceId, format: 'mp3', requestId: 'replay-stream' }));
    const before = credits();
    const again = await speak(new SyncTransport({ client, voiceId, format: 'mp3', requestId: 'replay-stream' }));
    expect(credits()).toBe(before);
    expect(Buffer.concat(again.chunks.map((c) => c.data)).equals(Buffer.concat(first.chunks.map((c) => c.data)))).toBe(true);
    expect(again.chunks[0]).toMatchObject({ format: 'mp3', sampleRate: TONE_RATE, channels: 1 });
  });

  it('derives segment request ids within 128 characters', () => {
    expect(segmentRequestId('r1', 's1')).toBe('r1:s1');
    const long = segmentRequestId('r'.repeat(100), 's'.repeat(100));
    expect(long.length).toBeLessThanOrEqual(128);
    expect(long).toBe(segmentRequestId('r'.repeat(100), 's'.repeat(100)));
    expect(long).not.toBe(segmentRequestId('r'.repeat(100), `${'s'.repeat(99)}t`));
  });

  it('fails every segment on a validation error and keeps them pending in order for failover', async () => {
    const t = new SyncTransport({ client, voiceId: 'no-such-voice', format: 'pcm', concurrency: 1 });
    await t.open();
    const sends = SEGMENTS.map((s) => t.send(s).catch((e: unknown) => e));
    const errors = await Promise.all(sends);
    for (const e of errors) expect(e).toBeInstanceOf(BadRequestError);
    expect(t.pending().map((s) => s.segmentId)).toEqual(SEGMENTS.map((s) => s.segmentId));
    await expect(t.end()).rejects.toBeInstanceOf(BadRequestError);
  });
});

describe('segments over the per-request limit', () => {
  it('are spoken as several requests whose audio is joined in order', async () => {
    const text = 'A segment longer than one request may carry, so it goes out in parts.';
    const t = new SyncTransport({ client, voiceId, format: 'pcm', maxRequestChars: 30 });
    const { chunks, completed } = await speak(t, [{ segmentId: 'long', text }]);
    const parts = splitRequestText(text, 30);
    expect(parts.length).toBeGreaterThan(1);
    const expected = Buffer.concat(await Promise.all(parts.map((p) => referencePcm(p))));
    expect(Buffer.concat(chunks.map((c) => c.data)).equals(expected)).toBe(true);
    expect(completed).toHaveLength(1);
  });
});

describe('createHttpTransport', () => {
  it('builds each HTTP transport by name', () => {
    for (const name of HTTP_TRANSPORTS) expect(createHttpTransport(name, { client, voiceId }).name).toBe(name);
  });
});

describe('compat transport', () => {
  it('refuses opus, which the compatible route does not produce', () => {
    expect(() => new CompatTransport({ client, voiceId, format: 'opus' as AudioFormat })).toThrow(expect.objectContaining({ code: 'unavailable' }));
  });
});
