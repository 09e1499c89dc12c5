import { describe, expect, it } from 'vitest';
import { AbortError, VoxpipeError } from '../../../src/errors.js';
import { HttpClient } from '../../../src/http/client.js';
import { buildWavHeader } from '../../../src/sinks/wav-header.js';
import { HttpSegmentTransport, splitRequestText, type FetchedSegment, type HttpTransportOptions } from '../../../src/stream/transports/http-base.js';
import type { SegmentInput, SegmentResult, TransportAudio, TransportName } from '../../../src/transport.js';

const PCM = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

interface Deferred {
  resolve: (f: FetchedSegment) => void;
  reject: (e: Error) => void;
  signal: AbortSignal;
}

/** A transport whose fetches the test settles by hand, in any order. */
class ManualTransport extends HttpSegmentTransport {
  readonly name: TransportName = 'sync';
  readonly fetches = new Map<string, Deferred>();
  started: string[] = [];

  protected fetchSegment(segment: SegmentInput, signal: AbortSignal): Promise<FetchedSegment> {
    this.started.push(segment.segmentId);
    return new Promise((resolve, reject) => this.fetches.set(segment.segmentId, { resolve, reject, signal }));
  }
}

const options = (extra: Partial<HttpTransportOptions> = {}): HttpTransportOptions => ({
  client: new HttpClient({ apiKey: 'sk-test-base-000', baseUrl: 'http://127.0.0.1:9/api/open/v1' }),
  voiceId: 'v1',
  requestId: 'req-1',
  ...extra,
});

const wav = (bytes: number[]): FetchedSegment => ({ data: Buffer.concat([buildWavHeader(PCM, bytes.length), Buffer.from(bytes)]), contentType: 'audio/wav', units: bytes.length, quotaRemaining: 100 - bytes.length });
const tick = () => new Promise((r) => setImmediate(r));

function collect(t: HttpSegmentTransport): { chunks: TransportAudio[]; completed: SegmentResult[] } {
  const out = { chunks: [] as TransportAudio[], completed: [] as SegmentResult[] };
  t.on('audio', (c) => out.chunks.push(c));
  t.on('segment-completed', (r) => out.completed.push(r));
  return out;
}

describe('HttpSegmentTransport', () => {
  it('announces ready with mode http, the model default and the PCM layout', async () => {
    const t = new ManualTransport(options());
    const ready = await t.open();
    expect(ready).toMatchObject({ transport: 'sync', mode: 'http', requestId: 'req-1', model: 'svc-s21pro-flash', voiceId: 'v1', format: 'pcm', sampleRate: 24_000, channels: 1, bitDepth: 16 });
  });

  it('fetches `concurrency` segments ahead and emits strictly in order even when fetches finish out of order', async () => {
    const t = new ManualTransport(options({ concurrency: 2, chunkBytes: 4 }));
    const out = collect(t);
    await t.open();
    const sends = ['s1', 's2', 's3'].map((id) => t.send({ segmentId: id, text: id }));
    await tick();
    expect(t.started).toEqual(['s1', 's2']);
    t.fetches.get('s2')!.resolve(wav([5, 6]));
    await tick();
    expect(out.chunks).toHaveLength(0); // s1 not there yet
    t.fetches.get('s1')!.resolve(wav([1, 2, 3, 4, 9, 9]));
    await tick();
    expect(t.started).toEqual(['s1', 's2', 's3']);
    t.fetches.get('s3')!.resolve(wav([7, 8]));
    const results = await Promise.all(sends);
    expect(results.map((r) => r.segmentId)).toEqual(['s1', 's2', 's3']);
    expect(out.chunks.map((c) => c.segmentId)).toEqual(['s1', 's1', 's2', 's3']);
    expect(Buffer.concat(out.chunks.map((c) => c.data))).toEqual(Buffer.from([1, 2, 3, 4, 9, 9, 5, 6, 7, 8]));
    expect(out.completed.map((r) => [r.segmentId, r.audioBytes, r.units])).toEqual([['s1', 6, 6], ['s2', 2, 2], ['s3', 2, 2]]);
    const summary = await t.end();
    expect(summary).toMatchObject({ requestId: 'req-1', units: 10, retries: 0, resumed: 0 });
    expect(summary.segments).toHaveLength(3);
  });

  it('holds audio while paused and continues on resume', async () => {
    const t = new ManualTransport(options({ chunkBytes: 2 }));
    const out = collect(t);
    await t.open();
    t.pause();
    const sent = t.send({ segmentId: 's1', text: 'x' });
    t.fetches.get('s1')!.resolve(wav([1, 2, 3, 4]));
    await tick();
    await tick();
    expect(out.chunks).toHaveLength(0);
    expect(t.pending().map((s) => s.segmentId)).toEqual(['s1']);
    t.resume();
    await sent;
    expect(out.chunks).toHaveLength(2);
    expect(t.pending()).toEqual([]);
  });

  it('a failed segment fails it and every later one; pending() keeps them in order for failover', async () => {
    const t = new ManualTransport(options({ concurrency: 1 }));
    const out = collect(t);
    await t.open();
    const s1 = t.send({ segmentId: 's1', text: 'a' });
    const s2 = t.send({ segmentId: 's2', text: 'b' });
    const s3 = t.send({ segmentId: 's3', text: 'c' });
    t.fetches.get('s1')!.resolve(wav([1, 2]));
    await s1;
    await tick();
    const boom = new VoxpipeError('provider_unavailable', 'down');
    t.fetches.get('s2')!.reject(boom);
    await expect(s2).rejects.toBe(boom);
    await expect(s3).rejects.toBe(boom);
    expect(t.pending().map((s) => s.segmentId)).toEqual(['s2', 's3']);
    await expect(t.end()).rejects.toBe(boom);
    await expect(t.send({ segmentId: 's4', text: 'd' })).rejects.toBe(boom);
    expect(out.completed.map((r) => r.segmentId)).toEqual(['s1']);
  });

  it('abort drops queued segments, cancels their fetches and emits no more audio', async () => {
    const t = new ManualTransport(options());
    const out = collect(t);
    await t.open();
    const s1 = t.send({ segmentId: 's1', text: 'a' });
    const s2 = t.send({ segmentId: 's2', text: 'b' });
    await tick();
    await t.abort();
    await expect(s1).rejects.toBeInstanceOf(AbortError);
    await expect(s2).rejects.toBeInstanceOf(AbortError);
    expect(t.fetches.get('s1')!.signal.aborted).toBe(true);
    t.fetches.get('s1')!.resolve(wav([1, 2]));
    await tick();
    expect(out.chunks).toHaveLength(0);
    expect(t.pending()).toEqual([]);
    await expect(t.send({ segmentId: 's3', text: 'c' })).rejects.toBeInstanceOf(AbortError);
  });

  it('the open() signal aborts the transport', async () => {
    const t = new ManualTransport(options());
    const ac = new AbortController();
    await t.open(ac.signal);
    const s1 = t.send({ segmentId: 's1', text: 'a' });
    ac.abort();
    await expect(s1).rejects.toBeInstanceOf(AbortError);
  });

  it('audio whose layout differs from the one assumed: the chunks carry the audio\'s own layout, nothing to warn about', async () => {
    const t = new ManualTransport(options({ pcm: { sampleRate: 16_000, channels: 1, bitDepth: 16 } }));
    const warnings: string[] = [];
    t.on('warning', (w) => warnings.push(w.code));
    const out = collect(t);
    await t.open();
    const s = t.send({ segmentId: 's1', text: 'a' });
    t.fetches.get('s1')!.resolve(wav([1, 2]));
    const result = await s;
    expect(warnings).toEqual([]);
    expect(out.chunks[0]).toMatchObject({ sampleRate: 24_000 });
    expect(result.expectedBytes).toBe(2); // the WAV's data size
  });

  it('emits usage with the quota the service reported', async () => {
    const t = new ManualTransport(options());
    const usage: unknown[] = [];
    t.on('usage', (u) => usage.push(u));
    await t.open();
    const s = t.send({ segmentId: 's1', text: 'a' });
    t.fetches.get('s1')!.resolve(wav([1, 2, 3, 4]));
    await s;
    expect(usage).toEqual([{ segmentId: 's1', segmentUnits: 4, sessionUnits: 4, quotaRemaining: 96, audioBytes: 4 }]);
  });
});

describe('splitRequestText', () => {
  it('keeps short text whole and cuts long text after whitespace, losing nothing', () => {
    expect(splitRequestText('short', 10)).toEqual(['short']);
    expect(splitRequestText('', 10)).toEqual(['']);
    const parts = splitRequestText('alpha beta gamma delta', 12);
    expect(parts).toEqual(['alpha beta ', 'gamma delta']);
    const hard = splitRequestText('abcdefghijklmnop', 5);
    expect(hard).toEqual(['abcde', 'fghij', 'klmno', 'p']);
  });
  it('counts code points and never splits a surrogate pair', () => {
    const text = '😀😀😀😀😀';
    const parts = splitRequestText(text, 2);
    expect(parts).toEqual(['😀😀', '😀😀', '😀']);
    expect(parts.join('')).toBe(text);
  });
});

describe('HttpSegmentTransport over the per-request limit', () => {
  it('speaks a long segment as several requests with deterministic part ids and joins their audio', async () => {
    const t = new ManualTransport(options({ maxRequestChars: 6 }));
    const out = collect(t);
    await t.open();
    const sent = t.send({ segmentId: 's1', text: 'one two three' });
    await tick();
    expect(t.started).toEqual(['s1~0']);
    t.fetches.get('s1~0')!.resolve(wav([1, 2]));
    await tick();
    t.fetches.get('s1~1')!.resolve(wav([3, 4]));
    await tick();
    t.fetches.get('s1~2')!.resolve(wav([5, 6]));
    const result = await sent;
    expect(t.started).toEqual(['s1~0', 's1~1', 's1~2']);
    expect(result).toMatchObject({ segmentId: 's1', units: 6, audioBytes: 6 });
    expect(Buffer.concat(out.chunks.map((c) => c.data))).toEqual(Buffer.from([1, 2, 3, 4, 5, 6]));
    expect(out.chunks.every((c) => c.segmentId === 's1')).toBe(true);
  });
});
