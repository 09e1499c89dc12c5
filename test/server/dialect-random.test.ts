/**
 * The drawn dialects' rewriters: each open point taken the
 * drawn way without changing what the service says: the audio bytes and
 * their order, a WAV file's PCM, the wait a `Retry-After` names.
 */
import { describe, expect, it } from 'vitest';
import { HEADERS } from '../../src/protocol/rest.js';
import { decodeMap } from '../../src/protocol/wire.js';
import { REFERENCE_REALTIME, UNKNOWN_AUDIO_LABEL, type RealtimeDraw } from '../../src/server/dialect-random.js';
import { DrawnNumber, encodeDrawnFrame, randomRealtime } from '../../src/server/dialect-realtime.js';
import { dialectReply, errorReply, withWavChunks } from '../../src/server/dialect-http.js';
import { dialectOf } from '../../src/server/dialect.js';
import { resampledEngine } from '../../src/server/engines/resampled.js';
import type { SpeechEngine } from '../../src/server/engines/types.js';

const audio = (segment: string, bytes: number[]) => ({ event: 'audio', event_id: 'e', trace_id: 't', timestamp: 1_700_000_000_000, request_id: 'r1', segment_id: segment, sequence: 0, audio: new Uint8Array(bytes), format: 'pcm' });

function run(draw: Partial<RealtimeDraw>, events: Record<string, unknown>[], connections = 1): Record<string, unknown>[][] {
  const factory = randomRealtime({ ...REFERENCE_REALTIME, ...draw }, 'test');
  return Array.from({ length: connections }, () => {
    const rewrite = factory();
    return events.flatMap((e) => rewrite(e));
  });
}

const audioOf = (frames: Record<string, unknown>[]) => Buffer.concat(frames.filter((f) => f['event'] === 'audio').map((f) => f['audio'] as Uint8Array));

describe('realtime rewriter', () => {
  const events = [audio('s1', [1, 2, 3, 4, 5]), audio('s1', [6, 7]), audio('s1', [8]), { event: 'segment_completed', segment_id: 's1', units: 3, audio_bytes: 8 }, audio('s2', [9, 10, 11])];

  it('numbers audio from the drawn start, per segment, with the drawn step', () => {
    const [frames] = run({ sequence: { start: 2 ** 32 + 7, scope: 'segment', step: 10 } }, events);
    const seq = frames!.filter((f) => f['event'] === 'audio').map((f) => [f['segment_id'], f['sequence']]);
    expect(seq).toEqual([['s1', 2 ** 32 + 7], ['s1', 2 ** 32 + 17], ['s1', 2 ** 32 + 27], ['s2', 2 ** 32 + 7]]);
  });

  it('scope request: a second connection of the request goes on counting', () => {
    const [first, second] = run({ sequence: { start: 0, scope: 'request', step: 1 } }, events, 2);
    expect(first!.filter((f) => f['event'] === 'audio').map((f) => f['sequence'])).toEqual([0, 1, 2, 3]);
    expect(second!.filter((f) => f['event'] === 'audio').map((f) => f['sequence'])).toEqual([4, 5, 6, 7]);
  });

  it('split and merge change the framing, never the bytes or their order', () => {
    const [split] = run({ frames: { kind: 'split', bytes: 2 } }, events);
    expect(split!.filter((f) => f['event'] === 'audio').map((f) => (f['audio'] as Uint8Array).length)).toEqual([2, 2, 1, 2, 1, 2, 1]);
    expect([...audioOf(split!)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const [merged] = run({ frames: { kind: 'merge', count: 2 } }, events);
    // s1: [1..5]+[6,7], then [8] held until segment_completed releases it, before that event.
    expect(merged!.map((f) => (f['event'] === 'audio' ? [...(f['audio'] as Uint8Array)] : f['event']))).toEqual([[1, 2, 3, 4, 5, 6, 7], [8], 'segment_completed']);
  });

  it('spells fields the drawn way, drops envelope fields, types the timestamp, adds unknown events and fields', () => {
    const [frames] = run(
      {
        spellings: { segment_completed: { audio_bytes: 'audio_length', segment_id: 'id' } },
        envelope: { event_id: 'never', trace_id: 'never', timestamp: 'always' },
        timestamps: 'iso',
        unknownEvents: 1,
        unknownFields: 1,
      },
      [{ event: 'segment_completed', event_id: 'e', trace_id: 't', timestamp: 0, segment_id: 's1', units: 3, audio_bytes: 8 }],
    );
    expect(frames).toHaveLength(2);
    const completed = frames!.find((f) => f['event'] === 'segment_completed')!;
    expect(completed).toMatchObject({ id: 's1', audio_length: 8, units: 3, timestamp: '1970-01-01T00:00:00.000Z' });
    expect(completed).not.toHaveProperty('event_id');
    expect(completed).not.toHaveProperty('trace_id');
    expect(Object.keys(completed).length).toBeGreaterThan(5);
    expect(frames![0]!['event']).not.toBe('segment_completed');
  });
});

describe('HTTP rewriter', () => {
  const wire = { ...dialectOf('random:http').wire };

  it('errors: problem+json, text and an HTML page for a 500 only, each naming the code where it can', () => {
    const fields = { code: 'not_found', message: 'no such job', requestId: 'req_1' };
    const problem = errorReply({ errorBody: 'wrapped', wire: { ...wire, errorContentType: 'problem' } }, 404, fields);
    expect(problem.headers!['content-type']).toBe('application/problem+json');
    expect(JSON.parse(String(problem.body))).toMatchObject({ status: 404, detail: 'no such job', code: 'not_found' });
    const text = errorReply({ errorBody: 'flat', wire: { ...wire, errorContentType: 'text' } }, 404, fields);
    expect(text.body).toBe('not_found: no such job (request req_1)\n');
    const html = { errorBody: 'flat', wire: { ...wire, errorContentType: 'html-500' } } as const;
    expect(String(errorReply(html, 500, fields).body)).toMatch(/^<!DOCTYPE html>/);
    expect(errorReply(html, 404, fields).json).toEqual(fields);
  });

  it('redirects: the drawn status and a root-relative Location; Retry-After as a date no earlier than the seconds', () => {
    const reply = dialectReply({ ...wire, redirectStatus: 308, redirectLocation: 'root-relative' }, { status: 302, headers: { location: 'http://127.0.0.1:9/api/open/tts/files/a?sig=x' } });
    expect(reply).toMatchObject({ status: 308, headers: { location: '/api/open/tts/files/a?sig=x' } });
    const before = Date.now();
    const limited = dialectReply({ ...wire, retryAfter: 'date' }, { status: 429, headers: { 'retry-after': '3' } });
    expect(Date.parse(String(limited.headers!['retry-after']))).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3000);
  });

  it('pcm stated by an audio/L16 Content-Type alone, its bytes big-endian as L16 is (RFC 2586)', () => {
    const reply = dialectReply({ ...wire, pcmStatement: 'l16' }, { status: 200, body: Buffer.from([1, 0, 2, 0]), headers: { 'content-type': 'audio/pcm', [HEADERS.sampleRate]: '22050', [HEADERS.channels]: '1', [HEADERS.bitDepth]: '16' } });
    expect(reply.headers).toEqual({ 'content-type': 'audio/L16;rate=22050;channels=1' });
    expect(reply.body).toEqual(Buffer.from([0, 1, 0, 2]));
  });

  it('pcm stated by GStreamer caps (little-endian as is, big-endian swapped), or under a label no client knows with our headers', () => {
    const pcm = { status: 200, body: Buffer.from([1, 0, 2, 0]), headers: { 'content-type': 'audio/pcm', [HEADERS.sampleRate]: '16000', [HEADERS.channels]: '1', [HEADERS.bitDepth]: '16' } };
    expect(dialectReply({ ...wire, pcmStatement: 'x-raw' }, pcm)).toMatchObject({ headers: { 'content-type': 'audio/x-raw, format=S16LE, rate=16000, channels=1, layout=interleaved' }, body: Buffer.from([1, 0, 2, 0]) });
    expect(dialectReply({ ...wire, pcmStatement: 'x-raw-be' }, pcm)).toMatchObject({ headers: { 'content-type': 'audio/x-raw, format=S16BE, rate=16000, channels=1, layout=interleaved' }, body: Buffer.from([0, 1, 0, 2]) });
    expect(dialectReply({ ...wire, pcmStatement: 'unknown-label' }, pcm).headers).toEqual({ ...pcm.headers, 'content-type': UNKNOWN_AUDIO_LABEL });
  });

  it('drawn encodings of whole numbers and nested spellings: the same values once decoded', () => {
    const frame = { event: 'input_ack', payload: { seq: new DrawnNumber(3, 'float64') }, a: new DrawnNumber(7, 'uint64'), b: new DrawnNumber(-2, 'int64'), c: new DrawnNumber(9, 'float32'), d: new DrawnNumber(5, 'uint32'), at: new Date(0) };
    const bytes = encodeDrawnFrame(frame);
    expect([...bytes].includes(0xcb) && [...bytes].includes(0xcf)).toBe(true);
    expect(decodeMap(bytes)).toEqual({ event: 'input_ack', payload: { seq: 3 }, a: 7, b: -2, c: 9, d: 5, at: new Date(0) });
  });

  it('WAV: LIST and fact chunks before data, sizes right, the PCM unchanged', () => {
    const pcm = Buffer.from([1, 0, 2, 0, 3, 0]);
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'latin1');
    header.writeUInt32LE(36 + pcm.length, 4);
    header.write('WAVEfmt ', 8, 'latin1');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(24_000, 24);
    header.writeUInt32LE(48_000, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'latin1');
    header.writeUInt32LE(pcm.length, 40);
    const out = withWavChunks(Buffer.concat([header, pcm]), ['LIST', 'fact']);
    expect(out.readUInt32LE(4)).toBe(out.length - 8);
    const ids: string[] = [];
    for (let at = 12; at + 8 <= out.length; at += 8 + out.readUInt32LE(at + 4)) ids.push(out.toString('latin1', at, at + 4));
    expect(ids).toEqual(['fmt ', 'LIST', 'fact', 'data']);
    expect(out.subarray(out.length - pcm.length).equals(pcm)).toBe(true);
    // A streaming header (sizes unknown) is left alone.
    const streaming = Buffer.from(header);
    streaming.writeUInt32LE(0xffffffff, 4);
    expect(withWavChunks(streaming, ['LIST'])).toBe(streaming);
  });
});

describe('resampled engine', () => {
  const engine = (chunks: number[]): SpeechEngine => ({
    name: 'tone',
    sampleRate: 24_000,
    async *synthesize() {
      const all = Buffer.alloc(4_800 * 2);
      for (let i = 0; i < 4_800; i++) all.writeInt16LE(Math.round(8_000 * Math.sin(i / 7)), i * 2);
      let at = 0;
      for (const n of chunks) {
        yield all.subarray(at, at + n * 2);
        at += n * 2;
      }
      yield all.subarray(at);
    },
    warmUp: async () => undefined,
    close: async () => undefined,
  });
  const collect = async (e: SpeechEngine) => {
    const parts: Buffer[] = [];
    for await (const c of e.synthesize('x', { voice: { basePitchHz: 100, rate: 1, espeakVoice: 'en' } })) parts.push(c);
    return Buffer.concat(parts);
  };

  it.each([8_000, 44_100])('at %i Hz: the length the rate says, the same bytes however the engine chunks', async (rate) => {
    const one = await collect(resampledEngine(engine([]), rate));
    const many = await collect(resampledEngine(engine([1, 333, 7, 2_000, 5]), rate));
    expect(one.length).toBe(Math.round((4_800 * rate) / 24_000) * 2);
    expect(many.equals(one)).toBe(true);
  });
});
