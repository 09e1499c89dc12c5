/**
 * The client against a misbehaving realtime server. Each failure
 * mode ends in correct, ordered audio or in a typed VoxpipeError within its
 * deadline; no unhandled rejection, no audio after the end, no key in any
 * error or event.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { AudioIncompleteError, ResumeError, TimeoutError, VoxpipeError } from '../../src/errors.js';
import { ReliableSession, type ReliableSessionOptions } from '../../src/realtime/reliable/session.js';
import { SimpleSession } from '../../src/realtime/simple-session.js';
import { startServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createTransport } from '../../src/speech.js';
import { SpeechStream } from '../../src/stream/speech-stream.js';
import type { SegmentInput } from '../../src/transport.js';
import { audioOf, FRAME_BYTES, FRAMES, startHostileServer, type HostileServer, type Misbehaviour } from './hostile-server.js';

const API_KEY = 'sk-hostile-test-key-0123456789';
const VOICE = '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01';
const SEGMENTS: SegmentInput[] = [
  { segmentId: 'seg-1', text: 'One.' },
  { segmentId: 'seg-2', text: 'Two.' },
];

let hostile: HostileServer | undefined;
afterEach(async () => {
  await hostile?.close();
  hostile = undefined;
});

async function serve(plan: (connection: number) => Misbehaviour, statusState?: string): Promise<HostileServer> {
  hostile = await startHostileServer(plan, statusState);
  return hostile;
}

function session(server: HostileServer, options: Partial<ReliableSessionOptions> = {}): ReliableSession {
  return new ReliableSession({
    wsUrl: server.wsUrl,
    rtHttpUrl: server.rtHttpUrl,
    apiKey: API_KEY,
    request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' },
    backoff: { baseMs: 5, maxMs: 20 },
    progressTimeoutMs: 150,
    maxRetries: 3,
    maxResumeMs: 3_000,
    ...options,
  });
}

interface Outcome {
  audio: Buffer;
  error: VoxpipeError | undefined;
  warnings: { code: string; message: string }[];
  retries: number;
  /** Audio that arrived after end() settled. */
  lateAudio: number;
  ms: number;
}

/** open, send, end; every promise handled; watch 100 ms past the end for late audio. */
async function drive(s: ReliableSession, segments = SEGMENTS): Promise<Outcome> {
  const started = performance.now();
  const chunks: Buffer[] = [];
  const warnings: { code: string; message: string }[] = [];
  let retries = 0;
  let ended = false;
  let lateAudio = 0;
  s.on('audio', (c) => (ended ? lateAudio++ : chunks.push(c.data)));
  s.on('warning', (w) => warnings.push(w));
  s.on('retry', () => retries++);
  let error: VoxpipeError | undefined;
  try {
    await s.open();
    for (const seg of segments) s.send(seg).catch(() => undefined);
    await s.end();
  } catch (err) {
    error = err as VoxpipeError;
  }
  ended = true;
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { audio: Buffer.concat(chunks), error, warnings, retries, lateAudio, ms };
}

const expected = (segmentCount = SEGMENTS.length): Buffer => Buffer.concat(Array.from({ length: segmentCount }, (_, i) => Buffer.concat(audioOf(i))));

describe('hostile server', () => {
  it('audio out of sequence order is emitted in sequence order', async () => {
    const out = await drive(session(await serve(() => ({ audioOrder: [2, 1, 3] }))));
    expect(out.error).toBeUndefined();
    expect(out.audio.equals(expected())).toBe(true);
    expect(out.warnings).toEqual([]);
  });

  it('a repeated audio sequence is emitted once', async () => {
    const out = await drive(session(await serve(() => ({ repeat: [1, 2, 3] }))));
    expect(out.error).toBeUndefined();
    expect(out.audio.equals(expected())).toBe(true);
  });

  it('a frame withheld once, silently: the segment is asked for again and the audio is byte-exact', async () => {
    const server = await serve((n) => (n === 0 ? { audioOrder: [1, 3], omit: [2] } : {}));
    const out = await drive(session(server));
    expect(out.error).toBeUndefined();
    expect(out.retries).toBe(1);
    expect(out.audio.equals(expected())).toBe(true);
  });

  it('the last frame withheld once (nothing held behind it): asked for again, byte-exact', async () => {
    const out = await drive(session(await serve((n) => (n === 0 ? { omit: [3] } : {}))));
    expect(out.error).toBeUndefined();
    expect(out.audio.equals(expected())).toBe(true);
  });

  it('a frame withheld on every attempt ends in audio_incomplete naming the segment and the missing bytes, never success', async () => {
    const out = await drive(session(await serve(() => ({ omit: [3] }))));
    expect(out.error).toBeInstanceOf(AudioIncompleteError);
    expect(out.error).toMatchObject({ code: 'audio_incomplete', segmentId: 'seg-1', missing: { from: 2 * FRAME_BYTES, to: FRAMES * FRAME_BYTES } });
    expect(out.error?.message).toContain('seg-1');
  });

  it('the segment\'s byte count is read under another name (`bytes`): a withheld frame is still caught', async () => {
    const out = await drive(session(await serve(() => ({ omit: [3], audioBytesField: 'bytes' }))));
    expect(out.error).toMatchObject({ code: 'audio_incomplete' });
  });

  it('a deployment that does not say a segment\'s byte count: unknown is not 0 (no error made up from it)', async () => {
    const out = await drive(session(await serve(() => ({ audioBytesField: null }))));
    expect(out.error).toBeUndefined();
    expect(out.audio.equals(expected())).toBe(true);
  });

  it.each([
    ['per segment from 0', (_segment: number, frame: number) => frame - 1, []],
    ['per segment from 1', (_segment: number, frame: number) => frame, []],
    ['per request from 1000', (segment: number, frame: number) => 1000 + segment * FRAMES + frame - 1, []],
    // Skipping numbers is legal: said once, nothing lost.
    ['per connection with gaps', (segment: number, frame: number) => 10 * (segment * FRAMES + frame) + (frame % 2), ['audio_sequence_gap']],
  ])('audio numbered %s: every frame kept, byte-exact, no repeat dropped', async (_name, sequenceOf, warnings) => {
    const out = await drive(session(await serve(() => ({ sequenceOf }))));
    expect(out.error).toBeUndefined();
    expect(out.warnings.map((w) => w.code)).toEqual(warnings);
    expect(out.audio.equals(expected())).toBe(true);
  });

  it('audio numbered per request across a resume (the new connection goes on counting): byte-exact', async () => {
    let next = 1000;
    const out = await drive(session(await serve((n) => ({ ...(n === 0 && { omit: [3] }), sequenceOf: () => next++ }))));
    expect(out.error).toBeUndefined();
    expect(out.audio.equals(expected())).toBe(true);
  });

  it('no input_ack ever: resumes once by default (maxStallResumes 1), then fails with a TimeoutError', async () => {
    const server = await serve(() => ({ silentAfterText: true }));
    const out = await drive(session(server, { maxRetries: 6 }));
    expect(out.error).toBeInstanceOf(TimeoutError);
    expect(out.error?.details).toMatchObject({ attempts: 1 });
    expect(out.error?.message).toMatch(/stalled 2 times: no progress from the server within 150 ms while waiting for input_ack for text sequence 1/);
    expect(server.connections).toBe(2); // the first and one resume
    expect(out.ms).toBeLessThan(3_000);
    expect(out.lateAudio).toBe(0);
  });

  it('no input_ack ever: resumes, then fails with a TimeoutError saying how many attempts, within its deadline', async () => {
    const server = await serve(() => ({ silentAfterText: true }));
    const out = await drive(session(server, { maxStallResumes: 3 }));
    expect(out.error).toBeInstanceOf(TimeoutError);
    expect(out.error?.details).toMatchObject({ attempts: 3 });
    expect(out.error?.message).toMatch(/3 attempts/);
    expect(server.connections).toBe(4); // the first and three retries
    expect(out.ms).toBeLessThan(5_000);
    expect(out.lateAudio).toBe(0);
  });

  it('no segment_completed once: the resumed connection completes the request byte-exact', async () => {
    const out = await drive(session(await serve((n) => (n === 0 ? { silentAfterAudio: true } : {}))));
    expect(out.error).toBeUndefined();
    expect(out.retries).toBe(1);
    expect(out.audio.equals(expected())).toBe(true);
  });

  it('a failure right after every ready is retried a bounded number of times', async () => {
    const server = await serve(() => ({ failAfterReady: true }));
    const out = await drive(session(server, { maxRetries: 4 }));
    expect(out.error).toBeInstanceOf(ResumeError);
    expect(out.error).toMatchObject({ code: 'retries_exhausted', details: { attempts: 4 } });
    expect(server.connections).toBe(5);
  });

  it('a recovery longer than maxResumeMs gives up although attempts remain', async () => {
    const server = await serve(() => ({ failAfterReady: true }));
    const out = await drive(session(server, { maxRetries: 1_000, maxResumeMs: 300, backoff: { baseMs: 40, maxMs: 80 } }));
    expect(out.error).toMatchObject({ code: 'retries_exhausted' });
    expect(out.error?.message).toContain('300 ms');
    expect(out.ms).toBeLessThan(3_000);
  });

  it('the key echoed back by the server is in no error property, message or inspect output', async () => {
    const out = await drive(session(await serve(() => ({ echoKey: true }))));
    expect(out.error).toBeInstanceOf(VoxpipeError);
    const error = out.error!;
    const strings = [error.message, error.code, error.requestId, (error as { stage?: string }).stage, JSON.stringify(error.details), inspect(error, { depth: 5 }), JSON.stringify(out.warnings)];
    for (const s of strings) expect(s ?? '').not.toContain(API_KEY);
    expect(error.message).toContain('[redacted]');
  });

  it('an error with an empty code gets a stable code and keeps the raw value', async () => {
    const out = await drive(session(await serve(() => ({ emptyErrorCode: true }))));
    expect(out.error).toMatchObject({ code: 'server_error', details: { rawCode: '' } });
  });

  it('simple mode: a server silent after the commit fails with a retryable TimeoutError within its deadline', async () => {
    const server = await serve(() => ({ silentAfterText: true }));
    const simple = new SimpleSession({ wsUrl: server.wsUrl, apiKey: API_KEY, request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' }, progressTimeoutMs: 200 });
    const started = performance.now();
    await simple.open();
    const sent = simple.send({ segmentId: 's1', text: 'Hello there.' }).catch((e: unknown) => e);
    const error = await simple.end().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ retryable: true });
    expect(await sent).toBe(error);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('simple mode: warnings every 50 ms after the commit are no progress: a TimeoutError within its deadline', async () => {
    const server = await serve(() => ({ silentAfterText: true, chatter: true }));
    const simple = new SimpleSession({ wsUrl: server.wsUrl, apiKey: API_KEY, request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' }, progressTimeoutMs: 300 });
    let warnings = 0;
    simple.on('warning', () => warnings++);
    const started = performance.now();
    await simple.open();
    const sent = simple.send({ segmentId: 's1', text: 'Hello there.' }).catch((e: unknown) => e);
    const error = await simple.end().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(await sent).toBe(error);
    expect(warnings).toBeGreaterThan(3);
    expect(performance.now() - started).toBeLessThan(300 + 2_000);
  });

  it('reliable mode: warnings every 50 ms while an input_ack is owed are no progress: a TimeoutError within its budgets', async () => {
    const server = await serve(() => ({ silentAfterText: true, chatter: true }));
    const out = await drive(session(server));
    expect(out.error).toBeInstanceOf(TimeoutError);
    expect(out.warnings.length).toBeGreaterThan(3);
    // Two stalls (the first resumed) of at most 1.25 x 150 ms each, plus slack.
    expect(out.ms).toBeLessThan(2 * 1.25 * 150 + 2_000);
  });

  it('simple mode against a well-behaved hostile server completes (the harness speaks simple mode too)', async () => {
    const server = await serve(() => ({}));
    const simple = new SimpleSession({ wsUrl: server.wsUrl, apiKey: API_KEY, request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' }, progressTimeoutMs: 200 });
    const chunks: Buffer[] = [];
    simple.on('audio', (c) => chunks.push(c.data));
    await simple.open();
    const sent = simple.send({ segmentId: 's1', text: 'Hello there.' });
    await simple.end();
    await sent;
    expect(Buffer.concat(chunks).equals(Buffer.concat(audioOf(0)))).toBe(true);
  });

  it('a server that never answers: SpeechStream resumes, then fails over to HTTP, nothing lost or repeated', async () => {
    const server = await serve(() => ({ silentAfterText: true }));
    const reference = await startServer({ engine: 'tone' });
    try {
      const config = serviceConfigOf(reference);
      const options = { voiceId: VOICE, model: 'svc-s21pro-flash', format: 'pcm' as const, requestId: 'hostile-failover-1' };
      const speech = new SpeechStream({
        transport: session(server, { requestId: options.requestId }),
        fallback: ({ bytesEmitted }) => createTransport('sync', config, options, bytesEmitted > 0),
      });
      const failovers: string[] = [];
      speech.on('failover', (f) => failovers.push(`${f.from}->${f.to}:${f.error.code}`));
      const text = 'One sentence here. And another one there.';
      speech.end(text);
      const chunks: Buffer[] = [];
      for await (const c of speech) chunks.push(c as Buffer);
      expect(failovers).toEqual(['realtime->sync:timeout']);
      expect(speech.summary().segments.every((s) => s.transport === 'sync')).toBe(true);
      // The same text spoken over sync alone: byte for byte the same audio.
      const direct = new SpeechStream({ transport: createTransport('sync', config, { ...options, requestId: 'hostile-direct-1' }) });
      direct.end(text);
      const directChunks: Buffer[] = [];
      for await (const c of direct) directChunks.push(c as Buffer);
      expect(Buffer.concat(chunks).length).toBeGreaterThan(0);
      expect(Buffer.concat(chunks).equals(Buffer.concat(directChunks))).toBe(true);
    } finally {
      await reference.close();
    }
  });
});

// Keep the harness's numbers honest: the expected audio is what the server sends.
it('hostile harness: a segment is FRAMES frames of FRAME_BYTES bytes', () => {
  expect(expected(1).length).toBe(FRAMES * FRAME_BYTES);
});
