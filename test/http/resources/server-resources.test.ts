/**
 * The non-TTS resources over real HTTP against the reference server: profile,
 * usage, voices (clone, use, delete), voice design (create, preview, save),
 * ASR, images, videos and lip-sync in both route families.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, PermissionDeniedError } from '../../../src/errors.js';
import { createClient, type VoxpipeClient } from '../../../src/http/index.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { startFakeServer, type FakeServer } from '../fake-server.js';
import { has } from '../../helpers/needs.js';

/** The reference server's ASR needs a recognizer, its video and lip-sync ffmpeg (the capability is unavailable otherwise). */

let server: ReferenceServer;
let files: FakeServer;
let client: VoxpipeClient;
let voiceId: string;
/** Media files served on loopback as task inputs (the server allows private URLs here). */
const served = new Map<string, { type: string; data: Buffer }>();

beforeAll(async () => {
  server = await startServer({ engine: 'tone', allowPrivateUrls: true });
  client = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, initialRetryDelayMs: 1, poll: { intervalMs: 20, maxIntervalMs: 100 } });
  files = await startFakeServer((req, res) => {
    const file = served.get(req.url);
    if (!file) {
      res.writeHead(404);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.data.length });
    res.end(file.data);
  });
  voiceId = (await client.voices.list())[0]!.voiceId;
  const speech = await client.tts.synthesize({ text: 'The quick brown fox jumps over the lazy dog. It was a sunny day.', voiceId, format: 'wav' });
  served.set('/speech.wav', { type: 'audio/wav', data: speech.audio });
  // A clone takes 10 s to 5 min of speech.
  const reference = await client.tts.synthesize({ text: 'The quick brown fox jumps over the lazy dog. It was a sunny day. '.repeat(3), voiceId, format: 'wav' });
  served.set('/reference.wav', { type: 'audio/wav', data: reference.audio });
});
afterAll(async () => {
  await files.close();
  await server.close();
});

describe('profile and usage', () => {
  it('reads the profile, sets and removes the webhook URL', async () => {
    const p = await client.profile.get();
    expect(p).toMatchObject({ userId: 'local-dev', tier: expect.any(String) });
    expect(p.credits).toBeTypeOf('number');
    expect(p.apiQuotaRemaining).toBeTypeOf('number');
    const set = await client.profile.update({ webhookUrl: 'https://203.0.113.10/hook' });
    expect(set.webhookUrl).toBe('https://203.0.113.10/hook');
    expect(set.webhookSecret).toBeTruthy();
    const cleared = await client.profile.update({ webhookUrl: null });
    expect(cleared.webhookUrl).toBeUndefined();
  });

  it('usage reports apiUsage.totalCreditsCharged, including the synthesis made at start', async () => {
    const u = await client.usage.get();
    expect(u.totalCreditsCharged).toBeGreaterThan(0);
    expect(u.raw['ledger']).toBeInstanceOf(Array);
  });
});

describe('voices', () => {
  it('lists public voices with their default engine model', async () => {
    const voices = await client.voices.list();
    expect(voices.length).toBeGreaterThan(0);
    expect(voices[0]!.defaultEngineModelId).toBeTruthy();
  });

  it('clones from uploaded audio (multipart), synthesizes with the clone, deletes it', async () => {
    const cloned = await client.voices.clone({ name: 'Uploaded', audio: served.get('/reference.wav')!.data, fileName: 'reference.wav' });
    expect(cloned.voiceId).toBeTruthy();
    expect((await client.voices.list()).map((v) => v.voiceId)).toContain(cloned.voiceId);
    const audio = await client.tts.synthesize({ text: 'Spoken by the clone.', voiceId: cloned.voiceId });
    expect(audio.audio.length).toBeGreaterThan(0);
    expect(await client.voices.delete(cloned.voiceId)).toMatchObject({ deleted: true });
    expect((await client.voices.list()).map((v) => v.voiceId)).not.toContain(cloned.voiceId);
  });

  it('clones from a URL (JSON)', async () => {
    const cloned = await client.voices.clone({ name: 'By URL', audioUrl: `${files.origin}/reference.wav` });
    expect(cloned.voiceId).toBeTruthy();
    await client.voices.delete(cloned.voiceId);
  });

  it('refuses to delete a public voice (403) and an unknown one (404)', async () => {
    await expect(client.voices.delete(voiceId)).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(client.voices.delete('no-such-voice')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('voice designs', () => {
  it('creates candidates, previews one with the key, saves it as a voice and replays with the same key', async () => {
    const design = await client.voiceDesigns.create({ prompt: 'a deep, calm male voice', previewText: 'Hello, this is a preview.' });
    expect(design.candidates.length).toBeGreaterThan(0);
    expect(design.expiresAt).toBeTruthy();
    const replay = await client.voiceDesigns.create({ prompt: 'a deep, calm male voice', previewText: 'Hello, this is a preview.', idempotencyKey: design.idempotencyKey });
    expect(replay.designId).toBe(design.designId);
    const candidate = design.candidates[0]!;
    const preview = await client.voiceDesigns.preview(design.designId, candidate.candidateId);
    expect(preview.contentType).toMatch(/^audio\//);
    expect(preview.data.length).toBeGreaterThan(44);
    const saved = await client.voiceDesigns.save(design.designId, { candidateId: candidate.candidateId, name: 'Designed' });
    expect(saved.voiceId).toBeTruthy();
    expect((await client.tts.synthesize({ text: 'Designed voice.', voiceId: saved.voiceId })).audio.length).toBeGreaterThan(0);
    await client.voices.delete(saved.voiceId);
  });
});

describe.skipIf(!has('pocketsphinx'))('asr (needs pocketsphinx)', () => {
  it('transcribes audio at a URL: the task succeeds with a transcript', async () => {
    const handle = await client.asr.submit({ audioUrl: `${files.origin}/speech.wav`, languageHints: ['en'] });
    const task = await handle.result({ timeoutMs: 60_000 });
    expect(task.status).toBe('succeeded');
    expect(task.transcript).toBeTypeOf('string');
    expect(task.creditsCharged).toBeGreaterThanOrEqual(0);
    const page = await client.asr.list({ limit: 5, status: 'succeeded' });
    expect(page.items.map((t) => t.id)).toContain(task.id);
  });
});

describe('images', () => {
  it('media jobs: create (Idempotency-Key replay returns the same job), wait, download a PNG; models listed', async () => {
    const models = await client.images.models();
    expect(models.map((m) => m.id)).toContain('svc-image-v1');
    const job = await client.images.jobs.create({ prompt: 'a red circle', model: 'svc-image-v1', aspectRatio: '1:1' }, { idempotencyKey: 'img-key-1' });
    const again = await client.images.jobs.create({ prompt: 'a red circle', model: 'svc-image-v1', aspectRatio: '1:1' }, { idempotencyKey: 'img-key-1' });
    expect(again.id).toBe(job.id);
    const file = await client.images.jobs.handle(job).download();
    expect(file.data.subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('tasks family: create and wait for resultImageUrl', async () => {
    const task = await (await client.images.tasks.submit({ prompt: 'blue stripes', model: 'svc-image-lite' })).result();
    expect(task.resultUrl).toBeTruthy();
    expect(task.family).toBe('tasks');
  });
});

describe.skipIf(!has('ffmpeg', 'ffprobe'))('videos and lip-sync (need ffmpeg)', () => {
  it('video media job: completed normalises to succeeded, result downloads as MP4', async () => {
    const models = await client.videos.models();
    const job = await client.videos.jobs.create({ prompt: 'a moving square', model: models[0]!.id!, seconds: 1 });
    const done = await client.videos.jobs.handle(job).result({ timeoutMs: 60_000 });
    expect(done.rawStatus).toBe('completed');
    const file = await client.videos.jobs.download(done);
    expect(file.data.subarray(4, 8).toString('latin1')).toBe('ftyp');
    served.set('/clip.mp4', { type: 'video/mp4', data: file.data });
  });

  it('lip-sync media job in the envelope, from the video and the speech', async () => {
    const job = await client.lipsync.jobs.create({ videoUrl: `${files.origin}/clip.mp4`, audioUrl: `${files.origin}/speech.wav` });
    expect(job.status).toBe('pending');
    const done = await client.lipsync.jobs.handle(job).result({ timeoutMs: 60_000 });
    expect(done.status).toBe('succeeded');
    expect(done.resultUrl).toBeTruthy();
  });

  it('lip-sync task in image mode gives resultVideoUrl', async () => {
    const image = await (await client.images.tasks.submit({ prompt: 'a face', model: 'svc-image-lite' })).download();
    served.set('/face.png', { type: 'image/png', data: image.data });
    const task = await (await client.lipsync.tasks.submit({ inputMode: 'image', imageUrl: `${files.origin}/face.png`, audioUrl: `${files.origin}/speech.wav` })).result({ timeoutMs: 60_000 });
    expect(task.resultUrl).toBeTruthy();
    const video = await client.lipsync.tasks.download(task);
    expect(video.data.subarray(4, 8).toString('latin1')).toBe('ftyp');
  });
});
