import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { parseWavHeader } from '../../../../src/sinks/wav-header.js';
import { creditsOf, decodeMp3, errorOf, get, MODEL, newAccount, post, startTestServer, VOICE, VOICE_LYRA } from '../helpers.js';

let server: ReferenceServer;
let url: string;

beforeAll(async () => {
  server = await startTestServer();
  url = `${server.rootUrl}/v1/audio/speech`;
});
afterAll(async () => {
  await server.close();
});

describe('the openai package against the reference server', () => {
  it('audio.speech.create gives playable mp3 and charges credits', async () => {
    const { key, userId } = newAccount(server);
    const client = new OpenAI({ apiKey: key, baseURL: `${server.rootUrl}/v1`, maxRetries: 0 });
    const response = await client.audio.speech.create({ model: MODEL, voice: VOICE, input: 'Hello, compatible.' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(response.headers.get('x-openapi-credits-used')).toBe('18');
    const decoded = await decodeMp3(new Uint8Array(await response.arrayBuffer()));
    expect(decoded.samples).toBeGreaterThan(0);
    expect(decoded.errors).toBe(0);
    expect(creditsOf(server, userId)).toBe(1_000_000 - 18);
  });

  it('a foreign model name is a 400 the package surfaces as BadRequestError with the code', async () => {
    const client = new OpenAI({ apiKey: 'sk-local-dev', baseURL: `${server.rootUrl}/v1`, maxRetries: 0 });
    const err = await client.audio.speech.create({ model: 'tts-1', voice: VOICE, input: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('invalid_request');
  });

  it('a wrong key is a 401 AuthenticationError', async () => {
    const client = new OpenAI({ apiKey: 'sk-wrong-key', baseURL: `${server.rootUrl}/v1`, maxRetries: 0 });
    const err = await client.audio.speech.create({ model: MODEL, voice: VOICE, input: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('POST /v1/audio/speech', () => {
  it('takes voice as an object with id, and response_format wav and pcm', async () => {
    const wav = await post(url, { model: MODEL, input: 'Wave.', voice: { id: VOICE }, response_format: 'wav' });
    expect(wav.status).toBe(200);
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(parseWavHeader(Buffer.from(await wav.arrayBuffer()))).toBeDefined();
    const pcm = await post(url, { model: MODEL, input: 'Raw.', voice: VOICE, response_format: 'pcm', speed: 1.5 });
    expect(pcm.status).toBe(200);
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
  });

  it('reports X-OpenAPI-Quota-Remaining from the API quota and X-OpenAPI-Credits-Used', async () => {
    const { key } = newAccount(server, { apiQuota: 4321 });
    const res = await post(url, { model: MODEL, input: 'Quota.', voice: VOICE }, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-openapi-quota-remaining')).toBe('4321');
    expect(res.headers.get('x-openapi-credits-used')).toBe('6');
  });

  const invalid: [string, unknown][] = [
    ['missing model', { input: 'hi', voice: VOICE }],
    ['foreign model', { model: 'gpt-4o-mini-tts', input: 'hi', voice: VOICE }],
    ['missing input', { model: MODEL, voice: VOICE }],
    ['empty input', { model: MODEL, input: '', voice: VOICE }],
    ['input over 5000 characters', { model: MODEL, input: 'b'.repeat(5001), voice: VOICE }],
    ['missing voice', { model: MODEL, input: 'hi' }],
    ['voice object without id', { model: MODEL, input: 'hi', voice: {} }],
    ['unknown voice', { model: MODEL, input: 'hi', voice: 'alloy' }],
    ['response_format outside mp3, wav, pcm', { model: MODEL, input: 'hi', voice: VOICE, response_format: 'opus' }],
    ['mp3 (the default) on a model without mp3', { model: 'lyra-v2', input: 'hi', voice: VOICE_LYRA }],
    ['speed out of range', { model: MODEL, input: 'hi', voice: VOICE, speed: 4 }],
  ];
  it.each(invalid)('400 for %s, as a JSON error', async (_name, body) => {
    const res = await post(url, body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await errorOf(res)).code).toBe('invalid_request');
  });

  it('lists supportedModels when the model is foreign', async () => {
    const res = await post(url, { model: 'tts-1', input: 'hi', voice: VOICE });
    const error = await errorOf(res);
    expect(error['supportedModels']).toContain(MODEL);
  });

  it('401 without a key, 402 when short, 500 generation_failed refunded', async () => {
    expect((await post(url, { model: MODEL, input: 'hi', voice: VOICE }, { key: null })).status).toBe(401);
    const poor = newAccount(server, { credits: 1 });
    const short = await post(url, { model: MODEL, input: 'hi', voice: VOICE }, { key: poor.key });
    expect(short.status).toBe(402);
    expect((await errorOf(short)).code).toBe('insufficient_credits');
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'COMPAT-FAIL' } });
    const failed = await post(url, { model: MODEL, input: 'COMPAT-FAIL', voice: VOICE }, { key });
    expect(failed.status).toBe(500);
    expect((await errorOf(failed)).code).toBe('generation_failed');
    expect(creditsOf(server, userId)).toBe(1_000_000);
  });

  it('replays the first audio for a repeated Idempotency-Key without a second charge; 422 for another body', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'idempotency-key': 'compat-key-1' };
    const body = { model: MODEL, input: 'Once only.', voice: VOICE, response_format: 'wav' };
    const first = await post(url, body, { key, headers });
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const again = await post(url, body, { key, headers });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(Buffer.from(await again.arrayBuffer()).equals(firstBytes)).toBe(true);
    expect(creditsOf(server, userId)).toBe(1_000_000 - 10);
    const changed = await post(url, { ...body, input: 'Something else.' }, { key, headers });
    expect(changed.status).toBe(422);
    expect((await errorOf(changed)).code).toBe('idempotency_key_reused');
  });
});

describe('GET /v1/audio/voices', () => {
  it('lists public voices with id, and the caller’s personal voices only', async () => {
    const owner = newAccount(server);
    server.ctx.store.collection('voices').set('voice-compat-own', { voiceId: 'voice-compat-own', userId: owner.userId, name: 'Own' });
    const res = await get(`${server.rootUrl}/v1/audio/voices`, { key: owner.key });
    expect(res.status).toBe(200);
    const { voices } = (await res.json()) as { voices: { id: string; name: string }[] };
    expect(voices.map((v) => v.id)).toContain(VOICE);
    expect(voices.map((v) => v.id)).toContain('voice-compat-own');
    const other = await get(`${server.rootUrl}/v1/audio/voices`, { key: newAccount(server).key });
    const otherVoices = ((await other.json()) as { voices: { id: string }[] }).voices.map((v) => v.id);
    expect(otherVoices).not.toContain('voice-compat-own');
    expect((await get(`${server.rootUrl}/v1/audio/voices`, { key: null })).status).toBe(401);
  });
});
