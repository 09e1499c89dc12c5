import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { CLONE_CREDITS } from '../../../../src/server/rest/account/settings.js';
import { creditsOf, errorOf, fileServer, get, MODEL, newAccount, pitchOfWav, post, referenceWav, startAccountServer, startServerPlain, VOICE } from './helpers.js';

let server: ReferenceServer;
let files: Awaited<ReturnType<typeof fileServer>>;
let voicesUrl: string;
let lowWav: Buffer;
let highWav: Buffer;

beforeAll(async () => {
  server = await startAccountServer();
  voicesUrl = `${server.baseUrl}/voices`;
  lowWav = await referenceWav(95);
  highWav = await referenceWav(260);
  files = await fileServer({
    'low.wav': { body: lowWav },
    'high.wav': { body: highWav },
    'noise.bin': { body: Buffer.from('this is not audio at all, only text bytes'), type: 'application/octet-stream' },
    'silence.wav': { body: Buffer.concat([Buffer.from(wavHeaderOf(12 * 48_000)), Buffer.alloc(12 * 48_000)]) },
  });
});
afterAll(async () => {
  await files.close();
  await server.close();
});

function wavHeaderOf(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(24_000, 24);
  h.writeUInt32LE(48_000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

function multipart(fields: Record<string, string>, audio?: Buffer, key?: string, headers: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (audio) form.append('audio', new Blob([new Uint8Array(audio)], { type: 'audio/wav' }), 'reference.wav');
  return fetch(voicesUrl, { method: 'POST', body: form, headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers } });
}

async function synthesizeWav(key: string, voiceId: string, text = 'Every voice says the same sentence here.'): Promise<Response> {
  return post(`${server.baseUrl}/speech/tts`, { text, voiceId, format: 'wav' }, { key });
}

describe('GET /voices', () => {
  it('lists the public voices with defaultEngineModelId, and personal voices of the account only', async () => {
    const a = newAccount(server);
    const b = newAccount(server);
    const cloned = await post(voicesUrl, { name: 'Mine', audioUrl: `${files.url}/low.wav` }, { key: a.key });
    expect(cloned.status).toBe(201);
    const { voiceId } = (await cloned.json()) as { voiceId: string };

    const listA = (await (await get(voicesUrl, { key: a.key })).json()) as { data: { voiceId: string; type: string; defaultEngineModelId: string; models: string[] }[]; pagination: { total: number } };
    expect(listA.data.filter((v) => v.type === 'public')).toHaveLength(6);
    expect(listA.data.find((v) => v.voiceId === VOICE)).toMatchObject({ name: 'Ava', type: 'public', defaultEngineModelId: MODEL, language: 'en-US' });
    expect(listA.data.find((v) => v.voiceId === voiceId)).toMatchObject({ name: 'Mine', type: 'personal', source: 'clone', defaultEngineModelId: MODEL });
    expect(listA.pagination.total).toBe(7);
    const listB = (await (await get(voicesUrl, { key: b.key })).json()) as { data: { voiceId: string }[] };
    expect(listB.data.map((v) => v.voiceId)).not.toContain(voiceId);
  });

  it('filters by type, model and language, and pages with limit and offset', async () => {
    const a = newAccount(server);
    await post(voicesUrl, { name: 'Clone', audioUrl: `${files.url}/high.wav` }, { key: a.key });
    const ids = async (query: string) => ((await (await get(`${voicesUrl}${query}`, { key: a.key })).json()) as { data: { name: string }[] }).data.map((v) => v.name);
    expect(await ids('?type=personal')).toEqual(['Clone']);
    expect(await ids('?type=public')).toHaveLength(6);
    expect(await ids('?model=lyra-v2&type=public')).toEqual(['Ava', 'Ben', 'Dev', 'Elena']);
    expect(await ids('?language=en-GB')).toEqual(['Chloe', 'Dev']);
    expect(await ids('?language=es')).toEqual(['Elena']);
    expect(await ids('?limit=2&offset=1')).toEqual(['Ben', 'Chloe']);
  });

  it('400 for an unknown model, a bad type or limit; 401 without a key', async () => {
    const unknown = await get(`${voicesUrl}?model=tts-1`);
    expect(unknown.status).toBe(400);
    expect(await errorOf(unknown)).toMatchObject({ code: 'invalid_request', supportedModels: expect.arrayContaining([MODEL]) });
    expect((await get(`${voicesUrl}?type=shared`)).status).toBe(400);
    expect((await get(`${voicesUrl}?limit=0`)).status).toBe(400);
    expect((await get(voicesUrl, { key: null })).status).toBe(401);
  });

  it('legacy POST /api/open/list-models lists the same voices', async () => {
    const res = await post(`${server.rootUrl}/api/open/list-models`, {});
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { voiceId: string }[] };
    expect(body.data.map((v) => v.voiceId)).toContain(VOICE);
  });
});

describe('POST /voices (clone)', () => {
  it('a high-pitched and a low-pitched reference give voices whose synthesis differs measurably in pitch', async () => {
    const a = newAccount(server);
    const low = (await (await post(voicesUrl, { name: 'Low', audioUrl: `${files.url}/low.wav` }, { key: a.key })).json()) as { voiceId: string; basePitchHz: number; gender: string; analysis: { medianF0Hz: number } };
    const high = (await (await multipart({ name: 'High' }, highWav, a.key)).json()) as { voiceId: string; basePitchHz: number; gender: string };
    expect(low.gender).toBe('male');
    expect(high.gender).toBe('female');
    expect(high.basePitchHz).toBeGreaterThan(low.basePitchHz * 2);

    const lowAudio = await synthesizeWav(a.key, low.voiceId);
    const highAudio = await synthesizeWav(a.key, high.voiceId);
    expect(lowAudio.status).toBe(200);
    expect(highAudio.status).toBe(200);
    const lowHz = pitchOfWav(Buffer.from(await lowAudio.arrayBuffer()));
    const highHz = pitchOfWav(Buffer.from(await highAudio.arrayBuffer()));
    expect(highHz / lowHz).toBeGreaterThan(2);
    // The synthesized pitch follows the analysed one (within a few semitones of intonation).
    expect(Math.abs(Math.log2(lowHz / low.basePitchHz))).toBeLessThan(0.35);
  });

  it('charges CLONE_CREDITS once, and reports the analysis', async () => {
    const a = newAccount(server);
    const res = await post(voicesUrl, { name: 'Priced', audioUrl: `${files.url}/low.wav`, language: 'en-GB', description: 'test voice' }, { key: a.key });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'personal', source: 'clone', language: 'en-GB', espeakVoice: 'en-gb', description: 'test voice', creditsCharged: CLONE_CREDITS });
    expect(body['voiceId']).toMatch(/^voice_/);
    expect(body['analysis']).toMatchObject({ decoder: 'wav', voicedRatio: expect.any(Number) });
    expect(creditsOf(server, a.userId)).toBe(1_000_000 - CLONE_CREDITS);
  });

  it('replays the first result for the same Idempotency-Key without a second charge; a changed body is 422', async () => {
    const a = newAccount(server);
    const headers = { 'idempotency-key': 'clone-1' };
    const first = await post(voicesUrl, { name: 'Once', audioUrl: `${files.url}/low.wav` }, { key: a.key, headers });
    const again = await post(voicesUrl, { name: 'Once', audioUrl: `${files.url}/low.wav` }, { key: a.key, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as { voiceId: string }).voiceId).toBe(((await first.json()) as { voiceId: string }).voiceId);
    expect(creditsOf(server, a.userId)).toBe(1_000_000 - CLONE_CREDITS);
    const changed = await post(voicesUrl, { name: 'Twice', audioUrl: `${files.url}/low.wav` }, { key: a.key, headers });
    expect(changed.status).toBe(422);
    expect((await errorOf(changed)).code).toBe('idempotency_key_reused');
    // Multipart uploads are identified by their bytes.
    const up1 = await multipart({ name: 'Up' }, highWav, a.key, { 'idempotency-key': 'clone-2' });
    const up2 = await multipart({ name: 'Up' }, lowWav, a.key, { 'idempotency-key': 'clone-2' });
    expect(up1.status).toBe(201);
    expect(up2.status).toBe(422);
  });

  it('402 on an empty account, before fetching anything', async () => {
    const poor = newAccount(server, { credits: CLONE_CREDITS - 1 });
    const res = await post(voicesUrl, { name: 'Poor', audioUrl: `${files.url}/low.wav` }, { key: poor.key });
    expect(res.status).toBe(402);
    expect(await errorOf(res)).toMatchObject({ code: 'insufficient_credits', needed: CLONE_CREDITS });
    expect(creditsOf(server, poor.userId)).toBe(CLONE_CREDITS - 1);
  });

  const invalid: [string, unknown][] = [
    ['no name', { audioUrl: 'https://example.com/a.wav' }],
    ['an empty name', { name: '  ', audioUrl: 'https://example.com/a.wav' }],
    ['no audio', { name: 'x' }],
    ['a non-http URL', { name: 'x', audioUrl: 'ftp://example.com/a.wav' }],
    ['credentials in the URL', { name: 'x', audioUrl: 'https://user:pw@example.com/a.wav' }],
    ['not a URL', { name: 'x', audioUrl: 'reference.wav' }],
    ['an unknown language', { name: 'x', audioUrl: 'https://example.com/a.wav', language: 'tlh' }],
  ];
  it.each(invalid)('400 for %s, nothing charged', async (_name, body) => {
    const a = newAccount(server);
    const res = await post(voicesUrl, body, { key: a.key });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('invalid_request');
    expect(creditsOf(server, a.userId)).toBe(1_000_000);
  });

  it('400 for a URL answering 404, and for both a file and a URL', async () => {
    const a = newAccount(server);
    const missing = await post(voicesUrl, { name: 'x', audioUrl: `${files.url}/missing.wav` }, { key: a.key });
    expect(missing.status).toBe(400);
    expect((await errorOf(missing)).message).toMatch(/404/);
    const both = await multipart({ name: 'x', audioUrl: `${files.url}/low.wav` }, lowWav, a.key);
    expect(both.status).toBe(400);
    expect(creditsOf(server, a.userId)).toBe(1_000_000);
  });

  it('422 unprocessable_media for undecodable bytes and for silence, refunded', async () => {
    const a = newAccount(server);
    for (const file of ['noise.bin', 'silence.wav']) {
      const res = await post(voicesUrl, { name: 'x', audioUrl: `${files.url}/${file}` }, { key: a.key });
      expect(res.status).toBe(422);
      expect((await errorOf(res)).code).toBe('unprocessable_media');
    }
    expect(creditsOf(server, a.userId)).toBe(1_000_000);
    expect(server.ctx.ledger.entriesOf(a.userId).every((e) => e.state === 'released')).toBe(true);
  });

  it('refuses loopback URLs where the server does not allow private URLs', async () => {
    const strict = await startServerPlain();
    try {
      const res = await post(`${strict.baseUrl}/voices`, { name: 'x', audioUrl: `${files.url}/low.wav` });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toMatch(/publicly reachable/);
      expect((await post(`${strict.baseUrl}/voices`, { name: 'x', audioUrl: 'http://10.1.2.3/a.wav' })).status).toBe(400);
      expect((await post(`${strict.baseUrl}/voices`, { name: 'x', audioUrl: 'http://[::1]:80/a.wav' })).status).toBe(400);
    } finally {
      await strict.close();
    }
  });

  it('401 without a key; legacy POST /api/open/create-model clones too', async () => {
    expect((await post(voicesUrl, { name: 'x', audioUrl: `${files.url}/low.wav` }, { key: null })).status).toBe(401);
    const a = newAccount(server);
    const res = await post(`${server.rootUrl}/api/open/create-model`, { name: 'Legacy', audioUrl: `${files.url}/high.wav` }, { key: a.key });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { gender: string }).gender).toBe('female');
  });
});

describe('DELETE /voices/{voiceId}', () => {
  it('deletes an own voice: it leaves the list and synthesis no longer knows it', async () => {
    const a = newAccount(server);
    const { voiceId } = (await (await post(voicesUrl, { name: 'Gone', audioUrl: `${files.url}/low.wav` }, { key: a.key })).json()) as { voiceId: string };
    expect((await synthesizeWav(a.key, voiceId)).status).toBe(200);
    const res = await fetch(`${voicesUrl}/${voiceId}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ voiceId, deleted: true });
    const list = (await (await get(`${voicesUrl}?type=personal`, { key: a.key })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(0);
    expect((await synthesizeWav(a.key, voiceId)).status).toBe(400);
    const twice = await fetch(`${voicesUrl}/${voiceId}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.key}` } });
    expect(twice.status).toBe(404);
  });

  it('403 for a public voice, 404 for another account\'s voice or an unknown one, 401 without a key', async () => {
    const a = newAccount(server);
    const b = newAccount(server);
    const { voiceId } = (await (await post(voicesUrl, { name: 'A', audioUrl: `${files.url}/low.wav` }, { key: a.key })).json()) as { voiceId: string };
    const del = (id: string, key: string | null) => fetch(`${voicesUrl}/${id}`, { method: 'DELETE', headers: key ? { authorization: `Bearer ${key}` } : {} });
    expect((await del(VOICE, a.key)).status).toBe(403);
    expect((await del(voiceId, b.key)).status).toBe(404);
    expect((await del('voice_unknown', a.key)).status).toBe(404);
    expect((await del(voiceId, null)).status).toBe(401);
    // Still there for its owner.
    expect((await synthesizeWav(a.key, voiceId)).status).toBe(200);
  });

  it('legacy POST /api/open/delete-model deletes by voiceId or reference_id', async () => {
    const a = newAccount(server);
    const one = (await (await post(voicesUrl, { name: 'L1', audioUrl: `${files.url}/low.wav` }, { key: a.key })).json()) as { voiceId: string };
    const two = (await (await post(voicesUrl, { name: 'L2', audioUrl: `${files.url}/low.wav` }, { key: a.key })).json()) as { voiceId: string };
    expect((await post(`${server.rootUrl}/api/open/delete-model`, { voiceId: one.voiceId }, { key: a.key })).status).toBe(200);
    expect((await post(`${server.rootUrl}/api/open/delete-model`, { reference_id: two.voiceId }, { key: a.key })).status).toBe(200);
    expect((await post(`${server.rootUrl}/api/open/delete-model`, {}, { key: a.key })).status).toBe(400);
  });
});

describe('POST /voices: the reference audio is 10 s to 5 min of speech', () => {
  it('a 3 s clip is refused with 400 naming its length, and charges nothing', async () => {
    const a = newAccount(server);
    const before = creditsOf(server, a.userId);
    const short = await referenceWav(120, 'Three seconds only, please.');
    const res = await multipart({ name: 'Short' }, short, a.key);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/lasts \d+\.\d s; a clone takes 10 s to 5 min of speech/);
    expect(creditsOf(server, a.userId)).toBe(before);
  });
});
