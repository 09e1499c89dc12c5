import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { parseWavHeader } from '../../../../src/sinks/wav-header.js';
import { syncCacheResponse } from '../../../../src/server/rest/tts/schemas.js';
import { PERSONAL_VOICES_COLLECTION, type PersonalVoiceRecord } from '../../../../src/server/rest/common/voices.js';
import { creditsOf, decodeMp3, errorOf, get, MODEL, newAccount, post, startTestServer, until, VOICE, VOICE_LYRA } from '../helpers.js';

let server: ReferenceServer;
let url: string;

beforeAll(async () => {
  server = await startTestServer();
  url = `${server.baseUrl}/speech/tts`;
});
afterAll(async () => {
  await server.close();
});

describe('POST /speech/tts success', () => {
  it('returns playable mp3 with x-svc-credits-charged and charges one credit per character', async () => {
    const { key, userId } = newAccount(server);
    const before = creditsOf(server, userId);
    const res = await post(url, { text: 'Hello there.', voiceId: VOICE }, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('x-svc-credits-charged')).toBe('12');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-svc-request-id')).toBe(res.headers.get('x-request-id'));
    const decoded = await decodeMp3(new Uint8Array(await res.arrayBuffer()));
    expect(decoded.samples).toBeGreaterThan(0);
    expect(creditsOf(server, userId)).toBe(before - 12);
  });

  it('counts characters as code points (an emoji is one credit)', async () => {
    const { key } = newAccount(server);
    const res = await post(url, { text: 'hi 😀', voiceId: VOICE, format: 'wav' }, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-credits-charged')).toBe('4');
  });

  it('returns a WAV file with exact sizes for format wav', async () => {
    const res = await post(url, { text: 'Wave file.', voiceId: VOICE, format: 'wav' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await res.arrayBuffer());
    const header = parseWavHeader(bytes);
    expect(header).toBeDefined();
    expect(header!.dataBytes).toBe(bytes.length - header!.dataOffset);
  });

  it('accepts the legacy alias reference_id and the legacy paths', async () => {
    const a = await post(url, { text: 'Alias.', reference_id: VOICE });
    expect(a.status).toBe(200);
    for (const path of ['/api/open/tts', '/v1/speech/tts']) {
      const res = await post(`${server.rootUrl}${path}`, { text: 'Legacy.', voiceId: VOICE, format: 'wav' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('audio/wav');
    }
  });

  it('answers JSON of spec 2.9 with cache=true; audio_url needs the key and redirects to a signed file', async () => {
    const { key, userId } = newAccount(server, { apiQuota: 777 });
    const res = await post(url, { text: 'Cached audio.', voiceId: VOICE, cache: true }, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const json = syncCacheResponse.parse(await res.json());
    expect(json).toMatchObject({ credits_used: 13, quota_remaining: 777 });
    expect(creditsOf(server, userId)).toBe(1_000_000 - 13);
    expect((await get(json.audio_url, { key: null })).status).toBe(401);
    const other = newAccount(server);
    expect((await get(json.audio_url, { key: other.key })).status).toBe(404);
    const redirect = await get(json.audio_url, { key, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location).not.toContain(key);
    const file = await get(location, { key: null });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('audio/mpeg');
    expect((await decodeMp3(new Uint8Array(await file.arrayBuffer()))).samples).toBeGreaterThan(0);
    // A tampered signature is refused.
    expect((await get(location.replace(/sig=[^&]+/, 'sig=AAAA'), { key: null })).status).toBe(403);
  });

  it('gives PCM metadata headers for format pcm', async () => {
    const res = await post(url, { text: 'Raw.', voiceId: VOICE, format: 'pcm' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    expect(Number(res.headers.get('x-svc-sample-rate'))).toBe(server.ctx.engine.sampleRate);
    expect((await res.arrayBuffer()).byteLength % 2).toBe(0);
  });
});

describe('POST /speech/tts validation (400 invalid_request)', () => {
  const cases: [string, unknown, string?][] = [
    ['empty text', { text: '', voiceId: VOICE }],
    ['text over 5000 characters', { text: 'a'.repeat(5001), voiceId: VOICE }],
    ['text of the wrong type', { text: 42, voiceId: VOICE }],
    ['missing text', { voiceId: VOICE }],
    ['missing voiceId', { text: 'hi' }],
    ['unknown voice', { text: 'hi', voiceId: 'no-such-voice' }],
    ['speed below 0.5', { text: 'hi', voiceId: VOICE, speed: 0.4 }],
    ['speed above 2', { text: 'hi', voiceId: VOICE, speed: 2.1 }],
    ['unknown emotion', { text: 'hi', voiceId: VOICE, emotion: 'ecstatic' }],
    ['emotion on a model without it', { text: 'hi', voiceId: VOICE, modelId: 'lyra-v2', emotion: 'happy' }],
    ['unknown format', { text: 'hi', voiceId: VOICE, format: 'flac' }],
    ['format the model cannot produce', { text: 'hi', voiceId: VOICE, modelId: 'lyra-v2', format: 'mp3' }, 'supportedFormats'],
    ['voice without the model', { text: 'hi', voiceId: VOICE_LYRA, modelId: 'aurora-tts-1' }, 'supportedModels'],
    ['unknown model', { text: 'hi', voiceId: VOICE, modelId: 'tts-1' }, 'supportedModels'],
    ['cache of the wrong type', { text: 'hi', voiceId: VOICE, cache: 'yes' }],
    ['invalid JSON', '{"text": '],
  ];
  it.each(cases)('%s', async (_name, body, extra) => {
    const { key, userId } = newAccount(server);
    const res = await post(url, body, { key });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe('invalid_request');
    expect(error.requestId).toBe(res.headers.get('x-request-id'));
    if (extra) expect(Array.isArray(error[extra])).toBe(true);
    expect(creditsOf(server, userId)).toBe(1_000_000);
  });

  it('accepts exactly 5000 characters', async () => {
    const { key } = newAccount(server);
    const res = await post(url, { text: 'a'.repeat(5000), voiceId: VOICE, format: 'pcm' }, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-credits-charged')).toBe('5000');
  });

  it('rejects a malformed X-Request-Id', async () => {
    const res = await post(url, { text: 'hi', voiceId: VOICE }, { headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(res.status).toBe(400);
  });
});

describe('POST /speech/tts authentication and access', () => {
  it('401 without a key, with a malformed header, an unknown key, a disabled account, or a key in the URL', async () => {
    const body = { text: 'hi', voiceId: VOICE };
    const disabled = newAccount(server, { disabled: true });
    const responses = [
      await post(url, body, { key: null }),
      await post(url, body, { key: null, headers: { authorization: 'Token abc' } }),
      await post(url, body, { key: 'sk-unknown-key' }),
      await post(url, body, { key: disabled.key }),
      await post(`${url}?api_key=sk-local-dev`, body, { key: null }),
    ];
    for (const res of responses) {
      expect(res.status).toBe(401);
      const error = await errorOf(res);
      expect(error.code).toBe('unauthorized');
      expect(error.message).not.toContain('sk-');
    }
  });

  it('402 insufficient_credits when the balance is short, and nothing is charged', async () => {
    const { key, userId } = newAccount(server, { credits: 3 });
    const res = await post(url, { text: 'four', voiceId: VOICE }, { key });
    expect(res.status).toBe(402);
    expect((await errorOf(res)).code).toBe('insufficient_credits');
    expect(creditsOf(server, userId)).toBe(3);
    expect((await post(url, { text: 'abc', voiceId: VOICE }, { key })).status).toBe(200);
    expect(creditsOf(server, userId)).toBe(0);
  });

  it('403 when the key lacks the tts capability', async () => {
    const { key } = newAccount(server, { capabilities: ['asr'] });
    const res = await post(url, { text: 'hi', voiceId: VOICE }, { key });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
  });

  it("403 for another account's personal voice; the owner can use it", async () => {
    const owner = newAccount(server);
    const other = newAccount(server);
    server.ctx.store.collection<PersonalVoiceRecord>(PERSONAL_VOICES_COLLECTION).set('voice-private-1', { voiceId: 'voice-private-1', userId: owner.userId, name: 'Mine' });
    const denied = await post(url, { text: 'hi', voiceId: 'voice-private-1', format: 'wav' }, { key: other.key });
    expect(denied.status).toBe(403);
    expect((await errorOf(denied)).code).toBe('forbidden');
    const ok = await post(url, { text: 'hi', voiceId: 'voice-private-1', format: 'wav' }, { key: owner.key });
    expect(ok.status).toBe(200);
  });

  it('500 generation_failed on an engine failure, refunded', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'BREAK-SYNC' } });
    const res = await post(url, { text: 'please BREAK-SYNC now', voiceId: VOICE }, { key });
    expect(res.status).toBe(500);
    expect((await errorOf(res)).code).toBe('generation_failed');
    expect(creditsOf(server, userId)).toBe(1_000_000);
  });
});

describe('X-Request-Id table (spec 3.6)', () => {
  const body = (text: string, extra: Record<string, unknown> = {}) => ({ text, voiceId: VOICE, format: 'wav', ...extra });

  /** Start a slow generation and resolve once it holds its charge (it is then "in progress"). */
  async function startSlow(key: string, userId: string, headers: Record<string, string>, text: string): Promise<{ first: Promise<Response> }> {
    server.faults.set({ latencyMs: 3 });
    const first = post(url, body(text), { key, headers });
    await until(async () => creditsOf(server, userId), (credits) => credits < 1_000_000);
    // Wrapped: an async function returning the promise itself would wait for it.
    return { first };
  }

  it('in progress + same payload: 409 ERR_REQUEST_IN_PROGRESS, no new charge', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'x-request-id': 'rid-progress' };
    try {
      const { first } = await startSlow(key, userId, headers, 'Slow generation here.');
      const second = await post(url, body('Slow generation here.'), { key, headers });
      expect(second.status).toBe(409);
      expect((await errorOf(second)).code).toBe('ERR_REQUEST_IN_PROGRESS');
      expect((await first).status).toBe(200);
      expect(creditsOf(server, userId)).toBe(1_000_000 - 21);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
  });

  it('in progress + different payload: 409 ERR_REQUEST_ID_CONFLICT', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'x-request-id': 'rid-progress-conflict' };
    try {
      const { first } = await startSlow(key, userId, headers, 'Slow generation here.');
      const second = await post(url, body('Another text.'), { key, headers });
      expect(second.status).toBe(409);
      expect((await errorOf(second)).code).toBe('ERR_REQUEST_ID_CONFLICT');
      expect((await first).status).toBe(200);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
  });

  it('completed with cache=true: replays the stored JSON without a new charge', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'x-request-id': 'rid-cache' };
    const first = await post(url, body('Replay me.', { cache: true }), { key, headers });
    expect(first.status).toBe(200);
    const firstJson = await first.json();
    const charged = creditsOf(server, userId);
    const again = await post(url, body('Replay me.', { cache: true }), { key, headers });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(firstJson);
    expect(again.headers.get('x-svc-credits-charged')).toBe('0');
    expect(creditsOf(server, userId)).toBe(charged);
  });

  it('completed binary: 409 ERR_REQUEST_ALREADY_COMPLETED', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'x-request-id': 'rid-binary' };
    expect((await post(url, body('Binary once.'), { key, headers })).status).toBe(200);
    const charged = creditsOf(server, userId);
    const again = await post(url, body('Binary once.'), { key, headers });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe('ERR_REQUEST_ALREADY_COMPLETED');
    expect(creditsOf(server, userId)).toBe(charged);
  });

  it('completed + different payload: 409 ERR_REQUEST_ID_CONFLICT', async () => {
    const { key } = newAccount(server);
    const headers = { 'x-request-id': 'rid-done-conflict' };
    expect((await post(url, body('First.', { cache: true }), { key, headers })).status).toBe(200);
    const res = await post(url, body('Second.', { cache: true }), { key, headers });
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe('ERR_REQUEST_ID_CONFLICT');
  });

  it('refunded: 409 ERR_REQUEST_PREVIOUSLY_REFUNDED; a new id works', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'x-request-id': 'rid-refunded' };
    server.faults.set({ engineFailure: { match: 'FAIL-ONCE' } });
    const failed = await post(url, body('FAIL-ONCE text'), { key, headers });
    expect(failed.status).toBe(500);
    expect(creditsOf(server, userId)).toBe(1_000_000);
    const again = await post(url, body('FAIL-ONCE text'), { key, headers });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe('ERR_REQUEST_PREVIOUSLY_REFUNDED');
    const fresh = await post(url, body('FAIL-ONCE text'), { key, headers: { 'x-request-id': 'rid-refunded-2' } });
    expect(fresh.status).toBe(200);
  });

  it('ids are per account: another account may use the same id', async () => {
    const a = newAccount(server);
    const b = newAccount(server);
    const headers = { 'x-request-id': 'rid-shared' };
    expect((await post(url, body('Mine.'), { key: a.key, headers })).status).toBe(200);
    expect((await post(url, body('Mine.'), { key: b.key, headers })).status).toBe(200);
  });

  it('a 402 leaves the id free for a retry after topping up', async () => {
    const { key, userId } = newAccount(server, { credits: 1 });
    const headers = { 'x-request-id': 'rid-402' };
    expect((await post(url, body('Too long.'), { key, headers })).status).toBe(402);
    server.ctx.store.accounts.get(userId)!.credits = 100;
    expect((await post(url, body('Too long.'), { key, headers })).status).toBe(200);
  });

  it('uses model ids and defaults in the payload comparison (modelId given or defaulted is the same payload)', async () => {
    const { key } = newAccount(server);
    const headers = { 'x-request-id': 'rid-defaults' };
    expect((await post(url, body('Same.', { cache: true }), { key, headers })).status).toBe(200);
    const replay = await post(url, body('Same.', { cache: true, modelId: MODEL, speed: 1 }), { key, headers });
    expect(replay.status).toBe(200);
  });
});
