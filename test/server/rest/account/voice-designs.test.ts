import { MPEGDecoder } from 'mpg123-decoder';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { accountSettings, DEFAULT_DESIGN_TTL_MS, DESIGN_CANDIDATES, DESIGN_CREDITS_PER_CANDIDATE } from '../../../../src/server/rest/account/settings.js';
import { parsePrompt, designCandidates } from '../../../../src/server/voices/design.js';
import { creditsOf, errorOf, get, newAccount, pitchOfWav, post, startAccountServer } from './helpers.js';

const DESIGN_CREDITS = DESIGN_CANDIDATES * DESIGN_CREDITS_PER_CANDIDATE;

interface Design {
  designId: string;
  candidates: { candidateId: string; previewAudioUrl: string; parameters: { basePitchHz: number; rate: number; gender: string; language: string; espeakVoice: string; provider: string; engineModelId: string } }[];
  billing: { creditsCharged: number; currency: string };
  createdAt: string;
  expiresAt: string;
  parameters: { basePitchHz: number; traits: string[] };
}

let server: ReferenceServer;
let designsUrl: string;
let seq = 0;

beforeAll(async () => {
  server = await startAccountServer();
  designsUrl = `${server.baseUrl}/voice-designs`;
});
afterAll(async () => {
  await server.close();
});

function create(key: string, body: unknown, idempotencyKey: string | null = `design-${++seq}`): Promise<Response> {
  return post(designsUrl, body, { key, headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey } });
}

function save(key: string, designId: string, body: unknown, idempotencyKey: string | null = `save-${++seq}`): Promise<Response> {
  return post(`${designsUrl}/${designId}/voices`, body, { key, headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey } });
}

const BODY = { prompt: 'A deep, calm male narrator', previewText: 'Hello there, this is a preview.' };

describe('parsePrompt and designCandidates', () => {
  it('moves pitch, rate, gender and language with the words of the prompt', () => {
    const deep = parsePrompt('a very deep, slow male voice with a British accent');
    const bright = parsePrompt('a bright, fast, energetic young woman');
    const neutral = parsePrompt('a voice');
    expect(deep.basePitchHz).toBeLessThan(neutral.basePitchHz);
    expect(bright.basePitchHz).toBeGreaterThan(neutral.basePitchHz);
    expect(deep.rate).toBeLessThan(1);
    expect(bright.rate).toBeGreaterThan(1.3);
    expect(deep).toMatchObject({ gender: 'male', language: 'en-GB', espeakVoice: 'en-gb' });
    expect(bright).toMatchObject({ gender: 'female', language: 'en-US', espeakVoice: 'en-us+f3' });
    expect(deep.traits).toEqual(['very deep', 'slow', 'male', 'british']);
    expect(parsePrompt('a child').basePitchHz).toBeGreaterThan(bright.basePitchHz);
    expect(parsePrompt('a Spanish grandmother')).toMatchObject({ language: 'es-ES', gender: 'female', espeakVoice: 'es+f3' });
    expect(parsePrompt('ein tiefer deutscher Mann, German').language).toBe('de-DE');
  });

  it('candidates vary around the parameters; the first is the prompt\'s own', () => {
    const params = parsePrompt('a calm female voice');
    const c = designCandidates(params, 3);
    expect(c).toHaveLength(3);
    expect(c[0]).toMatchObject({ basePitchHz: params.basePitchHz, rate: params.rate, espeakVoice: params.espeakVoice });
    expect(new Set(c.map((x) => x.basePitchHz)).size).toBe(3);
    expect(new Set(c.map((x) => x.espeakVoice)).size).toBe(3);
    expect(c.every((x) => x.gender === 'female')).toBe(true);
  });
});

describe('POST /voice-designs', () => {
  it('makes candidates whose parameters follow the prompt, spread over the providers, and charges once', async () => {
    const a = newAccount(server);
    const res = await create(a.key, { ...BODY, providers: ['svc', 'aurora'] });
    expect(res.status).toBe(201);
    const design = (await res.json()) as Design;
    expect(design.designId).toMatch(/^vdesign_/);
    expect(design.candidates).toHaveLength(DESIGN_CANDIDATES);
    expect(design.parameters.traits).toEqual(expect.arrayContaining(['deep', 'calm', 'male']));
    expect(design.candidates.map((c) => c.parameters.provider)).toEqual(['svc', 'aurora', 'svc']);
    expect(design.candidates.map((c) => c.parameters.engineModelId)).toEqual(['svc-s21pro-flash', 'aurora-tts-1', 'svc-s21pro-flash']);
    for (const c of design.candidates) {
      expect(c.parameters.gender).toBe('male');
      expect(c.parameters.basePitchHz).toBeLessThan(115);
      expect(c.parameters.rate).toBeLessThan(1);
      expect(c.previewAudioUrl).toBe(`${server.baseUrl}/voice-designs/${design.designId}/candidates/${c.candidateId}/audio`);
    }
    expect(design.billing).toMatchObject({ creditsCharged: DESIGN_CREDITS, currency: 'credits' });
    expect(Date.parse(design.expiresAt) - Date.parse(design.createdAt)).toBe(DEFAULT_DESIGN_TTL_MS);
    expect(creditsOf(server, a.userId)).toBe(1_000_000 - DESIGN_CREDITS);
  });

  it('replays the same Idempotency-Key and body without a second charge; a changed body is 422', async () => {
    const a = newAccount(server);
    const first = (await (await create(a.key, BODY, 'same-key')).json()) as Design;
    const replay = await create(a.key, BODY, 'same-key');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as Design).designId).toBe(first.designId);
    expect(creditsOf(server, a.userId)).toBe(1_000_000 - DESIGN_CREDITS);
    const changed = await create(a.key, { ...BODY, prompt: 'A high female voice' }, 'same-key');
    expect(changed.status).toBe(422);
    expect((await errorOf(changed)).code).toBe('idempotency_key_reused');
    // The same key of another account is another request.
    const b = newAccount(server);
    expect(((await (await create(b.key, BODY, 'same-key')).json()) as Design).designId).not.toBe(first.designId);
  });

  const invalid: [string, unknown][] = [
    ['no prompt', { previewText: 'hi' }],
    ['an empty prompt', { prompt: ' ', previewText: 'hi' }],
    ['no previewText', { prompt: 'deep' }],
    ['a previewText over 500 characters', { prompt: 'deep', previewText: 'a'.repeat(501) }],
    ['an unknown provider', { ...BODY, providers: ['svc', 'elevenlabs'] }],
    ['an empty providers list', { ...BODY, providers: [] }],
    ['providers not strings', { ...BODY, providers: [1] }],
  ];
  it.each(invalid)('400 for %s, nothing charged', async (_name, body) => {
    const a = newAccount(server);
    const res = await create(a.key, body);
    expect(res.status).toBe(400);
    expect(creditsOf(server, a.userId)).toBe(1_000_000);
  });

  it('400 idempotency_key_required without the header; 401 without a key; 402 on an empty account', async () => {
    const a = newAccount(server);
    const noKey = await create(a.key, BODY, null);
    expect(noKey.status).toBe(400);
    expect((await errorOf(noKey)).code).toBe('idempotency_key_required');
    expect((await post(designsUrl, BODY, { key: null, headers: { 'idempotency-key': 'k' } })).status).toBe(401);
    const poor = newAccount(server, { credits: DESIGN_CREDITS - 1 });
    const res = await create(poor.key, BODY);
    expect(res.status).toBe(402);
    expect((await errorOf(res)).code).toBe('insufficient_credits');
    expect(creditsOf(server, poor.userId)).toBe(DESIGN_CREDITS - 1);
  });

  it('500 generation_failed and a refund when rendering the previews fails', async () => {
    const a = newAccount(server);
    server.faults.set({ engineFailure: { match: 'doomed preview' } });
    const res = await create(a.key, { prompt: 'any', previewText: 'a doomed preview' });
    expect(res.status).toBe(500);
    expect((await errorOf(res)).code).toBe('generation_failed');
    expect(creditsOf(server, a.userId)).toBe(1_000_000);
  });
});

describe('GET /voice-designs/{designId}/candidates/{candidateId}/audio', () => {
  it('serves each candidate\'s preview as wav (pitch as designed) and mp3', async () => {
    const a = newAccount(server);
    const low = (await (await create(a.key, { prompt: 'a very deep bass man', previewText: 'Preview of the voice.' })).json()) as Design;
    const high = (await (await create(a.key, { prompt: 'a high, bright girl', previewText: 'Preview of the voice.' })).json()) as Design;
    const lowRes = await get(low.candidates[0]!.previewAudioUrl, { key: a.key });
    expect(lowRes.status).toBe(200);
    expect(lowRes.headers.get('content-type')).toBe('audio/wav');
    const highRes = await get(high.candidates[0]!.previewAudioUrl, { key: a.key });
    const lowHz = pitchOfWav(Buffer.from(await lowRes.arrayBuffer()));
    const highHz = pitchOfWav(Buffer.from(await highRes.arrayBuffer()));
    expect(highHz / lowHz).toBeGreaterThan(2);

    const mp3 = await get(`${low.candidates[1]!.previewAudioUrl}?format=mp3`, { key: a.key });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    const decoder = new MPEGDecoder();
    await decoder.ready;
    const decoded = decoder.decode(new Uint8Array(await mp3.arrayBuffer()));
    decoder.free();
    expect(decoded.samplesDecoded).toBeGreaterThan(10_000);
    expect(decoded.errors).toHaveLength(0);
  });

  it('401 without a key; 404 for another account, an unknown design or candidate; 400 for a bad format', async () => {
    const a = newAccount(server);
    const b = newAccount(server);
    const design = (await (await create(a.key, BODY)).json()) as Design;
    const url = design.candidates[0]!.previewAudioUrl;
    expect((await get(url, { key: null })).status).toBe(401);
    expect((await get(url, { key: b.key })).status).toBe(404);
    expect((await get(`${designsUrl}/vdesign_nope/candidates/${design.candidates[0]!.candidateId}/audio`, { key: a.key })).status).toBe(404);
    expect((await get(`${designsUrl}/${design.designId}/candidates/vcand_nope/audio`, { key: a.key })).status).toBe(404);
    expect((await get(`${url}?format=flac`, { key: a.key })).status).toBe(400);
  });
});

describe('POST /voice-designs/{designId}/voices', () => {
  it('saves a candidate as a permanent personal voice that synthesis uses; the ids differ from the design\'s', async () => {
    const a = newAccount(server);
    const design = (await (await create(a.key, { prompt: 'a high female voice', previewText: 'Preview.' })).json()) as Design;
    const candidate = design.candidates[2]!;
    const res = await save(a.key, design.designId, { candidateId: candidate.candidateId, name: 'Designed', visibility: 'private' });
    expect(res.status).toBe(201);
    const voice = (await res.json()) as Record<string, unknown>;
    expect(voice).toMatchObject({ name: 'Designed', type: 'personal', source: 'design', visibility: 'private', designId: design.designId, candidateId: candidate.candidateId });
    expect(voice['voiceId']).toMatch(/^voice_/);
    expect(voice['voiceId']).not.toBe(design.designId);
    expect(voice['voiceId']).not.toBe(candidate.candidateId);
    expect(voice['basePitchHz']).toBe(candidate.parameters.basePitchHz);
    expect(creditsOf(server, a.userId)).toBe(1_000_000 - DESIGN_CREDITS); // saving is free

    const tts = await post(`${server.baseUrl}/speech/tts`, { text: 'Designed voices speak too.', voiceId: voice['voiceId'], format: 'wav' }, { key: a.key });
    expect(tts.status).toBe(200);
    const hz = pitchOfWav(Buffer.from(await tts.arrayBuffer()));
    expect(Math.abs(Math.log2(hz / candidate.parameters.basePitchHz))).toBeLessThan(0.4);
    // Neither design nor candidate id is a voice.
    for (const id of [design.designId, candidate.candidateId]) {
      expect((await post(`${server.baseUrl}/speech/tts`, { text: 'x', voiceId: id, format: 'wav' }, { key: a.key })).status).toBe(400);
    }
    const list = (await (await get(`${server.baseUrl}/voices?type=personal`, { key: a.key })).json()) as { data: { voiceId: string }[] };
    expect(list.data.map((v) => v.voiceId)).toEqual([voice['voiceId']]);
  });

  it('replays with the same key, 422 for a changed body, 409 for saving a candidate twice', async () => {
    const a = newAccount(server);
    const design = (await (await create(a.key, BODY)).json()) as Design;
    const body = { candidateId: design.candidates[0]!.candidateId, name: 'Once' };
    const first = (await (await save(a.key, design.designId, body, 'save-key')).json()) as { voiceId: string };
    const replay = await save(a.key, design.designId, body, 'save-key');
    expect(replay.status).toBe(201);
    expect(((await replay.json()) as { voiceId: string }).voiceId).toBe(first.voiceId);
    const changed = await save(a.key, design.designId, { ...body, name: 'Other' }, 'save-key');
    expect(changed.status).toBe(422);
    const twice = await save(a.key, design.designId, { ...body, name: 'Again' });
    expect(twice.status).toBe(409);
    expect(await errorOf(twice)).toMatchObject({ code: 'candidate_already_saved', voiceId: first.voiceId });
    const list = (await (await get(`${server.baseUrl}/voices?type=personal`, { key: a.key })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(1);
  });

  it('400 for a missing key, name or candidateId, or a visibility other than private; 404 for other accounts and unknown candidates', async () => {
    const a = newAccount(server);
    const b = newAccount(server);
    const design = (await (await create(a.key, BODY)).json()) as Design;
    const candidateId = design.candidates[0]!.candidateId;
    expect((await errorOf(await save(a.key, design.designId, { candidateId, name: 'x' }, null))).code).toBe('idempotency_key_required');
    expect((await save(a.key, design.designId, { candidateId })).status).toBe(400);
    expect((await save(a.key, design.designId, { name: 'x' })).status).toBe(400);
    expect((await save(a.key, design.designId, { candidateId, name: 'x', visibility: 'public' })).status).toBe(400);
    expect((await save(b.key, design.designId, { candidateId, name: 'x' })).status).toBe(404);
    expect((await save(a.key, design.designId, { candidateId: 'vcand_nope', name: 'x' })).status).toBe(404);
    expect((await save(a.key, 'vdesign_nope', { candidateId, name: 'x' })).status).toBe(404);
    expect((await post(`${designsUrl}/${design.designId}/voices`, { candidateId, name: 'x' }, { key: null, headers: { 'idempotency-key': 'k' } })).status).toBe(401);
  });
});

describe('design expiry', () => {
  it('an expired design answers 410 design_expired to preview and save, then 404 after the grace period', async () => {
    const a = newAccount(server);
    const settings = accountSettings(server.ctx);
    const realNow = server.ctx.now;
    settings.designTtlMs = 60_000;
    try {
      const design = (await (await create(a.key, BODY)).json()) as Design;
      expect(Date.parse(design.expiresAt) - Date.parse(design.createdAt)).toBe(60_000);
      const url = design.candidates[0]!.previewAudioUrl;
      expect((await get(url, { key: a.key })).status).toBe(200);
      const saveBody = { candidateId: design.candidates[0]!.candidateId, name: 'Late' };
      // Move the server's clock past the expiry.
      server.ctx.now = () => new Date(realNow().getTime() + 61_000);
      const preview = await get(url, { key: a.key });
      expect(preview.status).toBe(410);
      expect(await errorOf(preview)).toMatchObject({ code: 'design_expired', expiresAt: design.expiresAt });
      const saved = await save(a.key, design.designId, saveBody);
      expect(saved.status).toBe(410);
      expect((await errorOf(saved)).code).toBe('design_expired');
      server.ctx.now = () => new Date(realNow().getTime() + 61_000 + 86_400_000);
      expect((await get(url, { key: a.key })).status).toBe(404);
    } finally {
      server.ctx.now = realNow;
      settings.designTtlMs = DEFAULT_DESIGN_TTL_MS;
    }
  });

  it('VOXPIPE_DESIGN_TTL_MS sets the lifetime of a new server\'s designs', async () => {
    process.env['VOXPIPE_DESIGN_TTL_MS'] = '1234';
    let other: ReferenceServer | undefined;
    try {
      other = await startAccountServer();
      const res = await post(`${other.baseUrl}/voice-designs`, BODY, { headers: { 'idempotency-key': 'ttl' } });
      const design = (await res.json()) as Design;
      expect(Date.parse(design.expiresAt) - Date.parse(design.createdAt)).toBe(1234);
    } finally {
      delete process.env['VOXPIPE_DESIGN_TTL_MS'];
      await other?.close();
    }
  });
});
