/** Sync TTS over real HTTP against the reference server (spec 4.1, 3.6). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, BadRequestError, ConflictError, InsufficientCreditsError } from '../../../src/errors.js';
import { createClient, type VoxpipeClient } from '../../../src/http/index.js';
import { parseWavHeader } from '../../../src/sinks/wav-header.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { isPost, losingResponses } from '../lossy-fetch.js';

let server: ReferenceServer;
let client: VoxpipeClient;
let voiceId: string;
const credits = (userId = 'local-dev') => server.ctx.store.accounts.get(userId)!.credits;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  client = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, initialRetryDelayMs: 1 });
  voiceId = (await client.compat.voices())[0]!.id;
});
afterAll(async () => {
  await server.close();
});

describe('tts.synthesize (binary)', () => {
  it('returns audio with its Content-Type and the credits charged', async () => {
    const before = credits();
    const res = await client.tts.synthesize({ text: 'Hello from voxpipe.', voiceId, format: 'wav' });
    expect(res.contentType).toBe('audio/wav');
    const header = parseWavHeader(res.audio)!;
    expect(header.dataBytes).toBeGreaterThan(0);
    expect(res.creditsCharged).toBeGreaterThan(0);
    expect(before - credits()).toBe(res.creditsCharged);
    expect(res.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.serverRequestId).toBeTruthy();
  });

  it('a repeated binary request id answers 409 ERR_REQUEST_ALREADY_COMPLETED without a charge', async () => {
    await client.tts.synthesize({ text: 'Once only.', voiceId, requestId: 'bin-1' });
    const before = credits();
    const err = await client.tts.synthesize({ text: 'Once only.', voiceId, requestId: 'bin-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, code: 'ERR_REQUEST_ALREADY_COMPLETED' });
    expect(credits()).toBe(before);
  });

  it('maps validation and balance failures to typed errors keeping the server fields', async () => {
    const bad = await client.tts.synthesize({ text: 'x', voiceId: 'no-such-voice' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).requestId).toBeTruthy();
    const badModel = await client.tts.synthesize({ text: 'x', voiceId, modelId: 'tts-1' }).catch((e: unknown) => e);
    expect(badModel).toBeInstanceOf(BadRequestError);

    server.addAccount({ apiKey: 'sk-empty-account-1', userId: 'empty', credits: 0 });
    const poor = createClient({ apiKey: 'sk-empty-account-1', baseUrl: server.baseUrl });
    await expect(poor.tts.synthesize({ text: 'Hello.', voiceId })).rejects.toBeInstanceOf(InsufficientCreditsError);
  });

  it('a wrong key gives AuthenticationError whose message and properties never carry the key', async () => {
    const key = 'sk-wrong-key-abcdef123';
    const err = await createClient({ apiKey: key, baseUrl: server.baseUrl }).tts.synthesize({ text: 'Hello.', voiceId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as Error).message).not.toContain(key);
    expect(JSON.stringify(err)).not.toContain(key);
  });
});

describe('tts.synthesizeCached (cache: true)', () => {
  it('returns the audio URL, and the audio behind it is fetched with the key through the signed redirect', async () => {
    const res = await client.tts.synthesizeCached({ text: 'Cached hello.', voiceId, format: 'mp3' });
    expect(res.audioUrl).toContain('/api/open/tts/');
    expect(res.creditsUsed).toBeGreaterThan(0);
    expect(res.quotaRemaining).toBeTypeOf('number');
    const file = await client.tts.fetchAudio(res.audioUrl);
    expect(file.contentType).toBe('audio/mpeg');
    expect(file.data.length).toBeGreaterThan(100);
    expect(file.url).not.toBe(res.audioUrl); // followed the redirect
  });

  it('replaying the same X-Request-Id returns the stored result with no second charge', async () => {
    const params = { text: 'Replay me, please.', voiceId, requestId: 'cached-replay-1' };
    const first = await client.tts.synthesizeCached(params);
    const before = credits();
    const again = await client.tts.synthesizeCached(params);
    expect(again.audioUrl).toBe(first.audioUrl);
    expect(credits()).toBe(before);
    const conflict = await client.tts.synthesizeCached({ ...params, text: 'Something else.' }).catch((e: unknown) => e);
    expect(conflict).toMatchObject({ status: 409, code: 'ERR_REQUEST_ID_CONFLICT' });
  });

  it('a lost response is resent by the client core with the same id and charged once', async () => {
    const lossy = losingResponses(isPost('/speech/tts'));
    const c = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, fetch: lossy, initialRetryDelayMs: 1 });
    const before = credits();
    const res = await c.tts.synthesizeCached({ text: 'Lost once, found again.', voiceId });
    expect(lossy.lost).toBe(1);
    expect(before - credits()).toBe(res.creditsUsed);
  });
});

describe('a 409 in progress (spec 3.6, 7.2: follow the code)', () => {
  it('a retry that finds its id still generating waits it out past the retry budget, on the same id, and is charged once', async () => {
    // A first send of the request is generating slowly (the engine is held
    // back); the same request sent again, by a client with no retry budget at
    // all, answers 409 ERR_REQUEST_IN_PROGRESS, waits, and asks again until
    // the stored result is replayed. The engine is let go once the 409 came.
    const requestId = `in-progress-${Date.now()}`;
    const params = { text: 'Slow, and waited out.', voiceId, requestId };
    const before = credits();
    server.faults.set({ latencyMs: 500 });
    try {
      const first = client.tts.synthesizeCached(params);
      const table = server.ctx.store.collection('sync-tts-request-ids');
      while (table.get(`local-dev\u0000${requestId}`) === undefined) await new Promise((r) => setImmediate(r));
      const patient = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, maxRetries: 0, initialRetryDelayMs: 20, maxRetryDelayMs: 200 });
      const answers: string[] = [];
      const again = await patient.tts.synthesizeCached({
        ...params,
        onRetry: (r) => {
          answers.push(r.error.code);
          server.faults.set({ latencyMs: 0 });
        },
      });
      const original = await first;
      expect(answers.length).toBeGreaterThan(0);
      expect(new Set(answers)).toEqual(new Set(['ERR_REQUEST_IN_PROGRESS']));
      expect(again.audioUrl).toBe(original.audioUrl);
      expect(before - credits()).toBe(original.creditsUsed);
      expect((await patient.tts.fetchAudio(again.audioUrl)).data.length).toBeGreaterThan(44);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
  });
});

describe('compat', () => {
  it('speech() returns mp3 with the quota headers; voices() lists ids', async () => {
    const voices = await client.compat.voices();
    expect(voices.length).toBeGreaterThan(0);
    const res = await client.compat.speech({ model: 'svc-s21pro-flash', input: 'Compatible hello.', voice: { id: voiceId } });
    expect(res.contentType).toBe('audio/mpeg');
    expect(res.creditsUsed).toBeGreaterThan(0);
    expect(res.quotaRemaining).toBeTypeOf('number');
  });

  it('keeps extra error properties such as supportedModels for a foreign model name', async () => {
    const err = await client.compat.speech({ model: 'tts-1', input: 'x', voice: voiceId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(Object.keys((err as BadRequestError).details)).toContain('supportedModels');
  });
});
