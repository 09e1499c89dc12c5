import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { encodePng } from '../../../../src/server/media-engines/png.js';
import { mediaToolsOf, setMediaTools } from '../../../../src/server/media-engines/tools.js';
import { balances, call, download, ffprobe, HAS_FFMPEG, newAccount, startInputServer, startMediaServer, until, type InputServer } from '../../media-engines/helpers.js';

let server: ReferenceServer;
let inputs: InputServer;
let frame: string;

beforeAll(async () => {
  server = await startMediaServer();
  inputs = await startInputServer();
  frame = inputs.put('/frame.png', 'image/png', encodePng({ width: 4, height: 4, channels: 3, pixels: new Uint8Array(48).fill(250) }));
  inputs.put('/notes.txt', 'text/plain', Buffer.from('plain text'));
});
afterAll(async () => {
  await server.close();
  await inputs.close();
});

const jobs = () => `${server.baseUrl}/media/videos/jobs`;
const job = (id: string) => `${server.baseUrl}/media/videos/jobs/${id}`;
const tasks = () => `${server.baseUrl}/videos/tasks`;
const task = (id: string) => `${server.baseUrl}/videos/tasks/${id}`;
let keySeq = 0;
const idem = () => ({ 'idempotency-key': `vid-${process.pid}-${++keySeq}` });
const jobDone = (r: { json: { status: string } }) => r.json.status === 'completed' || r.json.status === 'failed';
const taskDone = (r: { json: { status: string } }) => r.json.status === 'succeeded' || r.json.status === 'failed';
/** A small, short video keeps the tests quick. */
const SMALL = { size: '64x36', seconds: 1 };

describe('video routes: validation and access', () => {
  it('answer 401 without a key', async () => {
    expect((await call('POST', jobs(), { key: null, body: { prompt: 'x' }, headers: idem() })).status).toBe(401);
    expect((await call('GET', job('vid_x'), { key: null })).status).toBe(401);
    expect((await call('GET', tasks(), { key: null })).status).toBe(401);
  });

  it.skipIf(!HAS_FFMPEG)('answer 400 idempotency_key_required without an Idempotency-Key (needs ffmpeg: without it create answers 503 first)', async () => {
    const { key } = newAccount(server);
    const res = await call('POST', jobs(), { key, body: { prompt: 'x', ...SMALL } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('idempotency_key_required');
  });

  it.skipIf(HAS_FFMPEG)('answer 503 on create when ffmpeg is missing (the video engine needs it)', async () => {
    const { key } = newAccount(server);
    expect((await call('POST', jobs(), { key, body: { prompt: 'x', ...SMALL }, headers: idem() })).status).toBe(503);
  });

  it.skipIf(!HAS_FFMPEG)('answer 400 for bad bodies (needs ffmpeg: without it create answers 503 first)', async () => {
    const { key } = newAccount(server);
    const jobCases: [unknown, RegExp][] = [
      [{ seconds: 1 }, /prompt/],
      [{ prompt: 'x', seconds: 0 }, /seconds/],
      [{ prompt: 'x', seconds: 11 }, /1 to 10 seconds/],
      [{ prompt: 'x', size: 'big' }, /size must be <width>x<height>/],
      [{ prompt: 'x', size: '4000x10' }, /size sides/],
      [{ prompt: 'x', aspect_ratio: '7:1' }, /aspect ratios/],
      [{ prompt: 'x', model: 'sora' }, /unsupported model/],
      [{ prompt: 'x', references: [{ role: 'middle_frame', url: frame }] }, /references/],
      [{ prompt: 'x', references: [{ role: 'start_frame', url: frame }, { role: 'start_frame', url: frame }] }, /one start_frame/],
      [{ prompt: 'x', references: [{ role: 'start_frame', url: 'http://u:p@example.com/f.png' }] }, /must not carry credentials/],
    ];
    for (const [body, message] of jobCases) {
      const res = await call('POST', jobs(), { key, body, headers: idem() });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.message).toMatch(message);
    }
    for (const body of [{ prompt: 'x', duration: 20 }, { prompt: 'x', seed: -1 }, { prompt: 'x', referenceImageUrls: Array.from({ length: 17 }, () => frame) }, { prompt: 'x', firstFrameUrl: 'nope' }]) {
      expect((await call('POST', tasks(), { key, body })).status, JSON.stringify(body)).toBe(400);
    }
  });

  it.skipIf(!HAS_FFMPEG)('answer 402 when the API quota is short and 403 without the capability (needs ffmpeg)', async () => {
    const short = newAccount(server, { credits: 1_000_000, apiQuota: 15 });
    const res = await call('POST', jobs(), { key: short.key, body: { prompt: 'x', size: '64x36', seconds: 2 }, headers: idem() });
    expect(res.status).toBe(402);
    expect(res.json.error).toMatchObject({ code: 'insufficient_credits', needed: 20, available: 15 });
    const empty = newAccount(server, { credits: 0, apiQuota: 0 });
    expect((await call('POST', tasks(), { key: empty.key, body: { prompt: 'x', ...SMALL } })).status).toBe(402);
    const imagesOnly = newAccount(server, { capabilities: ['image'] });
    expect((await call('POST', tasks(), { key: imagesOnly.key, body: { prompt: 'x' } })).status).toBe(403);
  });

  it('answer 503 capability_unavailable without ffmpeg, charging nothing', async () => {
    const lone = await startMediaServer();
    try {
      setMediaTools(lone.ctx, { ...mediaToolsOf(lone.ctx), ffmpeg: undefined, ffprobe: undefined });
      const { key, userId } = newAccount(lone);
      for (const [url, headers] of [[`${lone.baseUrl}/media/videos/jobs`, idem()], [`${lone.baseUrl}/videos/tasks`, {}]] as const) {
        const res = await call('POST', url, { key, body: { prompt: 'x' }, headers });
        expect(res.status).toBe(503);
        expect(res.json.error).toMatchObject({ code: 'capability_unavailable', capability: 'video generation' });
        expect(res.json.error.message).toMatch(/ffmpeg is not installed/);
      }
      expect(balances(lone, userId).quota).toBe(1_000_000);
      expect((await call('GET', `${lone.baseUrl}/media/models?mediaType=video`, { key })).json.data).toEqual([]);
    } finally {
      await lone.close();
    }
  });
});

describe.skipIf(!HAS_FFMPEG)('video jobs and tasks (need ffmpeg)', () => {
  it('complete with a playable MP4 of the asked size and length, charging quota per started second', async () => {
    const { key, userId } = newAccount(server);
    const created = await call('POST', jobs(), { key, body: { prompt: 'slow blue waves', size: '96x54', seconds: 1.5 }, headers: idem() });
    expect(created.status).toBe(202);
    expect(created.json).toMatchObject({ jobId: expect.stringMatching(/^vid_/), status: 'pending', size: '96x54', seconds: 1.5, resultUrl: null, creditsCharged: 20 });
    expect(balances(server, userId).quota).toBe(1_000_000 - 20);
    const done = await until(() => call('GET', job(created.json.jobId), { key }), jobDone);
    expect(done.json).toMatchObject({ status: 'completed', result: { width: 96, height: 54, contentType: 'video/mp4' } });
    const file = await download(done.json.resultUrl, key);
    expect(file.contentType).toBe('video/mp4');
    const probe = ffprobe(file.data);
    expect(probe.format.format_name).toContain('mp4');
    const video = probe.streams.find((s) => s.codec_type === 'video')!;
    expect(video).toMatchObject({ width: 96, height: 54 });
    expect(Number(probe.format.duration)).toBeCloseTo(1.5, 1);
    for (let i = 0; i < 3; i++) expect((await call('GET', job(created.json.jobId), { key })).json).toEqual(done.json);
    expect(balances(server, userId).quota).toBe(1_000_000 - 20);
  });

  it('use a start frame; a start frame that is not an image fails the job with unprocessable_media, refunded', async () => {
    const { key, userId } = newAccount(server);
    const good = await call('POST', jobs(), { key, body: { prompt: 'fade', ...SMALL, references: [{ role: 'start_frame', url: frame }] }, headers: idem() });
    expect((await until(() => call('GET', job(good.json.jobId), { key }), jobDone)).json.status).toBe('completed');
    const bad = await call('POST', tasks(), { key, body: { prompt: 'fade', ...{ size: '64x36', duration: 1 }, firstFrameUrl: inputs.url('/notes.txt') } });
    const failed = await until(() => call('GET', task(bad.json.taskId), { key }), taskDone);
    expect(failed.json).toMatchObject({ status: 'failed', errorCode: 'unprocessable_media', resultVideoUrl: null, creditsCharged: 0 });
    expect(balances(server, userId).quota).toBe(1_000_000 - 10);
  });

  it('replay an Idempotency-Key with the first job and no second charge; a changed body answers 422', async () => {
    const { key, userId } = newAccount(server);
    const headers = idem();
    const first = await call('POST', jobs(), { key, body: { prompt: 'once', ...SMALL }, headers });
    const second = await call('POST', jobs(), { key, body: { prompt: 'once', ...SMALL }, headers });
    expect(second.json).toEqual(first.json);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(balances(server, userId).quota).toBe(1_000_000 - 10);
    const changed = await call('POST', jobs(), { key, body: { prompt: 'twice', ...SMALL }, headers });
    expect(changed.status).toBe(422);
  });

  it('refund an injected engine failure once; the failed job stays failed under repeated polling', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'broken reel' } });
    const created = await call('POST', jobs(), { key, body: { prompt: 'a broken reel', size: '64x36', seconds: 3 }, headers: idem() });
    expect(balances(server, userId).quota).toBe(1_000_000 - 30);
    const done = await until(() => call('GET', job(created.json.jobId), { key }), jobDone);
    expect(done.json).toMatchObject({ status: 'failed', errorCode: 'generation_failed', creditsCharged: 0 });
    for (let i = 0; i < 4; i++) expect((await call('GET', job(created.json.jobId), { key })).json).toEqual(done.json);
    expect(balances(server, userId).quota).toBe(1_000_000);
  });

  it("answer 404 for another account's ids; list with pagination and status filters in both families", async () => {
    const { key } = newAccount(server);
    const other = newAccount(server);
    server.faults.set({ engineFailure: { match: 'vlist-fail' } });
    const a = (await call('POST', jobs(), { key, body: { prompt: 'vlist a', ...SMALL }, headers: idem() })).json.jobId as string;
    const b = (await call('POST', tasks(), { key, body: { prompt: 'vlist-fail b', size: '64x36', duration: 1 } })).json.taskId as string;
    const c = (await call('POST', tasks(), { key, body: { prompt: 'vlist c', size: '64x36', duration: 1, seed: 7 } })).json.taskId as string;
    for (const id of [a, b, c]) await until(() => call('GET', job(id), { key }), jobDone);
    expect((await call('GET', job(a), { key: other.key })).status).toBe(404);
    expect((await call('GET', task(c), { key: other.key })).status).toBe(404);
    const jobPage = await call('GET', `${jobs()}?limit=2&status=completed`, { key });
    expect(jobPage.json.data.map((j: { jobId: string }) => j.jobId)).toEqual([c, a]);
    expect(jobPage.json.pagination).toEqual({ page: 1, limit: 2, hasMore: false, nextPage: null });
    const taskPage = await call('GET', `${tasks()}?limit=1&offset=1`, { key });
    expect(taskPage.json.data.map((t: { taskId: string }) => t.taskId)).toEqual([b]);
    expect(taskPage.json.pagination).toEqual({ limit: 1, offset: 1, hasMore: true });
    const failed = await call('GET', `${tasks()}?status=failed`, { key });
    expect(failed.json.data.map((t: { taskId: string }) => t.taskId)).toEqual([b]);
    const seeded = (await call('GET', task(c), { key })).json;
    expect(seeded).toMatchObject({ type: 'video', status: 'succeeded', seed: 7, duration: 1, size: '64x36' });
    expect((await download(seeded.resultVideoUrl, key)).contentType).toBe('video/mp4');
    expect((await call('GET', `${tasks()}?status=completed`, { key })).status).toBe(400);
  });
});
