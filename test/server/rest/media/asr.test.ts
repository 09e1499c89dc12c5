import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { encodePng } from '../../../../src/server/media-engines/png.js';
import { mediaToolsOf, setMediaTools } from '../../../../src/server/media-engines/tools.js';
import { balances, call, charges, HAS_RECOGNIZER, newAccount, silenceWav, startInputServer, startMediaServer, until, type InputServer } from '../../media-engines/helpers.js';
import { has } from '../../../helpers/needs.js';

let server: ReferenceServer;
let inputs: InputServer;
let silence: string;

beforeAll(async () => {
  server = await startMediaServer();
  inputs = await startInputServer();
  silence = inputs.put('/silence.wav', 'audio/wav', silenceWav(1.2));
  inputs.put('/picture.png', 'image/png', encodePng({ width: 4, height: 4, channels: 3, pixels: new Uint8Array(48).fill(200) }));
});
afterAll(async () => {
  await server.close();
  await inputs.close();
});

const tasks = () => `${server.baseUrl}/asr/tasks`;
const task = (id: string) => `${server.baseUrl}/asr/tasks/${id}`;
const terminal = (r: { json: { status: string } }) => r.json.status === 'succeeded' || r.json.status === 'failed';

describe('POST /asr/tasks', () => {
  it('answers 401 without a key, on every ASR route', async () => {
    expect((await call('POST', tasks(), { key: null, body: { audioUrl: silence } })).status).toBe(401);
    expect((await call('GET', tasks(), { key: null })).status).toBe(401);
    expect((await call('GET', task('asr_x'), { key: null })).status).toBe(401);
  });

  it('answers 400 invalid_request for a missing, malformed or credential-carrying audioUrl, a wrong type, an unknown model or language', async () => {
    const { key } = newAccount(server);
    const cases: [unknown, RegExp][] = [
      [{}, /audioUrl/],
      [{ audioUrl: 'not a url' }, /audioUrl must be an absolute http\(s\) URL/],
      [{ audioUrl: 'ftp://example.com/a.wav' }, /audioUrl must use http or https/],
      [{ audioUrl: inputs.url('/silence.wav').replace('http://', 'http://user:secret@') }, /audioUrl must not carry credentials/],
      [{ audioUrl: silence, durationSeconds: 'long' }, /durationSeconds/],
      [{ audioUrl: silence, durationSeconds: 601 }, /durationSeconds/],
      [{ audioUrl: silence, model: 'whisper-large' }, /unsupported model/],
      [{ audioUrl: silence, language: ['fr'] }, /does not recognize fr/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', tasks(), { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.message).toMatch(message);
    }
    const model = await call('POST', tasks(), { key, body: { audioUrl: silence, model: 'whisper-large' } });
    expect(model.json.error.supportedModels).toEqual(['svc-asr-v1']);
    // The credentials never come back in the message.
    const creds = await call('POST', tasks(), { key, body: { audioUrl: inputs.url('/a.wav').replace('http://', 'http://user:secret@') } });
    expect(JSON.stringify(creds.json)).not.toContain('secret');
  });

  it('answers 400 when the audio is unreachable or not decodable (fetched at create without durationSeconds), charging nothing', async () => {
    const { key, userId } = newAccount(server);
    const before = balances(server, userId).credits;
    const missing = await call('POST', tasks(), { key, body: { audioUrl: inputs.url('/missing.wav') } });
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/audioUrl answered HTTP 404/);
    const picture = await call('POST', tasks(), { key, body: { audioUrl: inputs.url('/picture.png') } });
    expect(picture.status).toBe(400);
    expect(picture.json.error.field).toBe('audioUrl');
    expect(balances(server, userId).credits).toBe(before);
  });

  it('answers 402 on an account without credits and 403 without the asr capability', async () => {
    const poor = newAccount(server, { credits: 0, apiQuota: 0 });
    const res = await call('POST', tasks(), { key: poor.key, body: { audioUrl: silence, durationSeconds: 2 } });
    expect(res.status).toBe(402);
    expect(res.json.error.code).toBe('insufficient_credits');
    const ttsOnly = newAccount(server, { capabilities: ['tts'] });
    const denied = await call('POST', tasks(), { key: ttsOnly.key, body: { audioUrl: silence } });
    expect(denied.status).toBe(403);
    expect((await call('GET', tasks(), { key: ttsOnly.key })).status).toBe(403);
  });

  it('accepts with 202 { taskId, status, model, creditsCharged }, pre-deducting credits for the measured length', async () => {
    const { key, userId } = newAccount(server);
    const before = balances(server, userId).credits;
    const res = await call('POST', tasks(), { key, body: { audioUrl: silence } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ taskId: expect.stringMatching(/^asr_/), status: 'pending', model: 'svc-asr-v1', creditsCharged: 2 });
    expect(balances(server, userId).credits).toBe(before - 2);
    const estimated = await call('POST', tasks(), { key, body: { audioUrl: silence, durationSeconds: 4.2 } });
    expect(estimated.json.creditsCharged).toBe(5);
    expect(balances(server, userId).credits).toBe(before - 7);
  });

  it('replays an Idempotency-Key with the first result and no second charge; a changed body needs a new key', async () => {
    const { key, userId } = newAccount(server);
    const before = balances(server, userId).credits;
    const headers = { 'idempotency-key': 'asr-replay-1' };
    const body = { audioUrl: inputs.url('/nothing-here.wav'), durationSeconds: 3 };
    const first = await call('POST', tasks(), { key, body, headers });
    const second = await call('POST', tasks(), { key, body, headers });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.json).toEqual(first.json);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(balances(server, userId).credits).toBe(before - 3);
    const changed = await call('POST', tasks(), { key, body: { ...body, durationSeconds: 4 }, headers });
    expect(changed.status).toBe(422);
    expect(changed.json.error.code).toBe('idempotency_key_reused');
    const list = await call('GET', tasks(), { key });
    expect(list.json.data).toHaveLength(1);
  });
});

describe('GET /asr/tasks and /asr/tasks/{taskId}', () => {
  it("answers 404 for another account's task and for unknown ids", async () => {
    const owner = newAccount(server);
    const other = newAccount(server);
    const created = await call('POST', tasks(), { key: owner.key, body: { audioUrl: silence, durationSeconds: 1 } });
    expect((await call('GET', task(created.json.taskId), { key: owner.key })).status).toBe(200);
    const res = await call('GET', task(created.json.taskId), { key: other.key });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
    expect((await call('GET', task('asr_unknown'), { key: owner.key })).status).toBe(404);
    expect((await call('GET', tasks(), { key: other.key })).json.data).toEqual([]);
  });

  it('lists newest first with limit, offset, hasMore and a status filter; rejects bad queries with 400', async () => {
    const { key } = newAccount(server);
    const ids: string[] = [];
    // Audio that is not there: each task fails quickly when it runs (and is refunded).
    for (let i = 0; i < 3; i++) ids.push((await call('POST', tasks(), { key, body: { audioUrl: inputs.url(`/gone-${i}.wav`), durationSeconds: 1 } })).json.taskId);
    for (const id of ids) await until(() => call('GET', task(id), { key }), terminal);
    const page1 = await call('GET', `${tasks()}?limit=2`, { key });
    expect(page1.json.data.map((t: { taskId: string }) => t.taskId)).toEqual([ids[2], ids[1]]);
    expect(page1.json.pagination).toEqual({ limit: 2, offset: 0, hasMore: true });
    const page2 = await call('GET', `${tasks()}?limit=2&offset=2`, { key });
    expect(page2.json.data.map((t: { taskId: string }) => t.taskId)).toEqual([ids[0]]);
    expect(page2.json.pagination).toEqual({ limit: 2, offset: 2, hasMore: false });
    const failed = await call('GET', `${tasks()}?status=failed`, { key });
    expect(failed.json.data).toHaveLength(3);
    expect(failed.json.data[0]).toMatchObject({ type: 'asr', status: 'failed', errorCode: 'media_fetch_failed', transcript: null, creditsCharged: 0 });
    expect((await call('GET', `${tasks()}?status=succeeded`, { key })).json.data).toEqual([]);
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'status=done']) {
      const bad = await call('GET', `${tasks()}?${q}`, { key });
      expect(bad.status, q).toBe(400);
      expect(bad.json.error.code).toBe('invalid_request');
    }
  });
});

describe('running ASR tasks', () => {
  it('refunds an injected engine failure once, and the failed state stays put under repeated polling', async () => {
    const { key, userId } = newAccount(server);
    const before = balances(server, userId).credits;
    server.faults.set({ engineFailure: { match: 'fail-me' } });
    const created = await call('POST', tasks(), { key, body: { audioUrl: inputs.url('/fail-me.wav'), durationSeconds: 5 } });
    const done = await until(() => call('GET', task(created.json.taskId), { key }), terminal);
    expect(done.json).toMatchObject({ status: 'failed', errorCode: 'generation_failed', creditsCharged: 0, transcript: null });
    // Pre-deducted once, refunded once.
    expect(charges(server, userId)).toEqual([{ amount: 5, currency: 'credits', state: 'released' }]);
    expect(balances(server, userId).credits).toBe(before);
    for (let i = 0; i < 4; i++) {
      const again = await call('GET', task(created.json.taskId), { key });
      expect(again.json).toEqual(done.json);
    }
    expect(balances(server, userId).credits).toBe(before);
    expect(inputs.requests).not.toContain('/fail-me.wav');
  });

  it('fails (refunded) when the audio is much longer than the durationSeconds estimate charged', async () => {
    const { key, userId } = newAccount(server);
    const before = balances(server, userId).credits;
    const long = inputs.put('/long-silence.wav', 'audio/wav', silenceWav(6));
    const created = await call('POST', tasks(), { key, body: { audioUrl: long, durationSeconds: 1 } });
    const done = await until(() => call('GET', task(created.json.taskId), { key }), terminal);
    expect(done.json).toMatchObject({ status: 'failed', errorCode: 'duration_exceeds_estimate' });
    expect(done.json.errorMessage).toMatch(/6\.0 s/);
    expect(balances(server, userId).credits).toBe(before);
  });

  it.skipIf(!HAS_RECOGNIZER)('transcribes silence as an empty transcript, and keeps the charge (needs pocketsphinx)', async () => {
    const { key, userId } = newAccount(server);
    const before = balances(server, userId).credits;
    const created = await call('POST', tasks(), { key, body: { audioUrl: silence } });
    const done = await until(() => call('GET', task(created.json.taskId), { key }), terminal);
    expect(done.json).toMatchObject({ status: 'succeeded', transcript: '', errorCode: null, creditsCharged: 2, durationSeconds: 1.2 });
    expect(done.json.startedAt).not.toBeNull();
    expect(done.json.completedAt).not.toBeNull();
    expect(balances(server, userId).credits).toBe(before - 2);
    expect((await call('GET', task(created.json.taskId), { key })).json).toEqual(done.json);
  });

  it('answers 503 capability_unavailable when no recognizer is installed; reads still work', async () => {
    const lone = await startMediaServer();
    try {
      setMediaTools(lone.ctx, { ...mediaToolsOf(lone.ctx), recognizer: undefined });
      const { key, userId } = newAccount(lone);
      const res = await call('POST', `${lone.baseUrl}/asr/tasks`, { key, body: { audioUrl: silence } });
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe('capability_unavailable');
      expect(res.json.error.message).toMatch(/speech recognition is not available on this server: no recognizer is installed/);
      expect(balances(lone, userId).credits).toBe(1_000_000);
      expect((await call('GET', `${lone.baseUrl}/asr/tasks`, { key })).status).toBe(200);
    } finally {
      await lone.close();
    }
  });
});

describe('legacy ASR paths (spec 9)', () => {
  it('POST /api/open/speech-to-text and /v1/speech/transcriptions create ASR tasks (audio_url accepted) and are hidden from openapi.json', async () => {
    const { key } = newAccount(server);
    const a = await call('POST', `${server.rootUrl}/api/open/speech-to-text`, { key, body: { audio_url: silence, durationSeconds: 2 } });
    expect(a.status).toBe(202);
    expect(a.json).toMatchObject({ status: 'pending', model: 'svc-asr-v1', creditsCharged: 2 });
    const b = await call('POST', `${server.baseUrl}/speech/transcriptions`, { key, body: { audioUrl: silence, durationSeconds: 2 } });
    expect(b.status).toBe(202);
    const listed = (await call('GET', tasks(), { key })).json.data.map((t: { taskId: string }) => t.taskId);
    expect(listed).toEqual([b.json.taskId, a.json.taskId]);
    expect((await call('GET', task(a.json.taskId), { key })).json.audioUrl).toBe(silence);
    expect((await call('POST', `${server.rootUrl}/api/open/speech-to-text`, { key, body: {} })).status).toBe(400);
    expect((await call('POST', `${server.rootUrl}/api/open/speech-to-text`, { key: null, body: { audio_url: silence } })).status).toBe(401);
    const doc = (await call('GET', `${server.rootUrl}/api/openapi.json`)).json as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain('/api/open/v1/asr/tasks');
    expect(Object.keys(doc.paths)).not.toContain('/api/open/speech-to-text');
    expect(Object.keys(doc.paths)).not.toContain('/api/open/v1/speech/transcriptions');
  });
});

describe.skipIf(!HAS_RECOGNIZER || !has('espeak'))('transcribing speech the server synthesized (needs pocketsphinx and espeak)', () => {
  it('finishes succeeded with a non-empty transcript', async () => {
    const speaking = await startMediaServer({ engine: 'espeak' });
    const files = await startInputServer();
    try {
      const { key } = newAccount(speaking);
      const voices = await call('GET', `${speaking.rootUrl}/v1/audio/voices`, { key });
      const voiceId = (voices.json.voices as { id: string; name: string }[]).find((v) => v.name === 'Ben')!.id;
      const res = await fetch(`${speaking.baseUrl}/speech/tts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Hello world. This is a test of speech recognition.', voiceId, format: 'wav' }),
      });
      expect(res.status).toBe(200);
      const audioUrl = files.put('/speech.wav', 'audio/wav', Buffer.from(await res.arrayBuffer()));
      const created = await call('POST', `${speaking.baseUrl}/asr/tasks`, { key, body: { audioUrl, language: 'en-US' } });
      expect(created.status).toBe(202);
      const done = await until(() => call('GET', `${speaking.baseUrl}/asr/tasks/${created.json.taskId}`, { key }), terminal);
      expect(done.json.status).toBe('succeeded');
      expect(done.json.transcript.trim().length).toBeGreaterThan(0);
      expect(done.json.transcript.split(' ').length).toBeGreaterThanOrEqual(3);
    } finally {
      await speaking.close();
      await files.close();
    }
  });
});
