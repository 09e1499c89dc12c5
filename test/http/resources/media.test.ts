/**
 * Image, video and lip-sync resources against a local fake serving the
 * spec's documented shapes (2.7, 2.8, 4.5-4.7): both route families of each
 * capability normalise to one `MediaTask`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UnprocessableError } from '../../../src/errors.js';
import { createClient, type VoxpipeClient } from '../../../src/http/index.js';
import { json, startFakeServer, type FakeServer } from '../fake-server.js';

let server: FakeServer;
let client: VoxpipeClient;

beforeEach(async () => {
  server = await startFakeServer();
  client = createClient({ apiKey: 'sk-media-test-0000', baseUrl: server.baseUrl, poll: { intervalMs: 1, maxIntervalMs: 2 }, initialRetryDelayMs: 1 });
});
afterEach(async () => {
  await server.close();
});

describe('client.images', () => {
  it('media jobs: sends a new Idempotency-Key per create by default, or the given one, and the snake_case body', async () => {
    server.handle((_req, res) => json(res, 202, { jobId: 'img_1', status: 'pending' }));
    const job = await client.images.jobs.create({ prompt: 'a red fox', model: 'img-1', aspectRatio: '16:9', generationType: 'edit', imageUrl: 'https://x/y.png' });
    await client.images.jobs.create({ prompt: 'a red fox', model: 'img-1' });
    await client.images.jobs.create({ prompt: 'a red fox', model: 'img-1' }, { idempotencyKey: 'fixed-key' });
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[2]).toBe('fixed-key');
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ prompt: 'a red fox', model: 'img-1', aspect_ratio: '16:9', generation_type: 'edit', image_url: 'https://x/y.png' });
    expect(job).toMatchObject({ id: 'img_1', status: 'pending', family: 'media' });
  });

  it('media jobs: a create with its Idempotency-Key is resent after a 500 with the same key', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 500, { error: { code: 'internal_error', message: 'x' } }) : json(res, 202, { jobId: 'img_2', status: 'pending' })));
    await client.images.jobs.create({ prompt: 'p', model: 'm' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.headers['idempotency-key']).toBe(server.requests[0]!.headers['idempotency-key']);
  });

  it('tasks family: result URL from resultImageUrl, downloaded through the handle', async () => {
    server.handle((req, res) => {
      if (req.url === '/api/open/v1/images/tasks') return json(res, 202, { taskId: 'it_1', status: 'pending', creditsCharged: 5 });
      if (req.url === '/api/open/v1/images/tasks/it_1') return json(res, 200, { taskId: 'it_1', status: 'succeeded', resultImageUrl: `${server.origin}/files/it_1.png`, creditsCharged: 5 });
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from('\x89PNG fake'));
    });
    const handle = await client.images.tasks.submit({ prompt: 'p', model: 'm', referenceImageUrls: ['https://r/1.png'] });
    expect(server.requests[0]!.headers['idempotency-key']).toBeUndefined();
    const file = await handle.download();
    expect(file.contentType).toBe('image/png');
    expect(handle.task?.resultUrl).toBe(`${server.origin}/files/it_1.png`);
    // The result lives on the service's origin: fetched with the key.
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer sk-media-test-0000');
  });

  it('models() lists the catalog for the image media type', async () => {
    server.handle((_req, res) => json(res, 200, { models: [{ id: 'img-1', maxReferences: 4 }] }));
    const models = await client.images.models();
    expect(server.requests[0]!.url).toBe('/api/open/v1/media/models?mediaType=image');
    expect(models).toEqual([{ id: 'img-1', raw: { id: 'img-1', maxReferences: 4 } }]);
  });
});

describe('client.videos', () => {
  it('media jobs: completed is a success, list filters spell it as the family does', async () => {
    server.handle((req, res) => {
      if (req.url.startsWith('/api/open/v1/media/videos/jobs?')) return json(res, 200, { data: [{ id: 'vid_1', status: 'completed', resultUrl: 'https://cdn/v.mp4' }], pagination: { page: 1, limit: 20, hasMore: false } });
      return json(res, 200, { id: 'vid_1', status: 'completed', result: { videoUrl: 'https://cdn/v.mp4' } });
    });
    const job = await client.videos.jobs.wait('vid_1');
    expect(job).toMatchObject({ status: 'succeeded', rawStatus: 'completed', resultUrl: 'https://cdn/v.mp4' });
    await client.videos.jobs.list({ status: 'succeeded' });
    expect(server.requests.at(-1)!.url).toBe('/api/open/v1/media/videos/jobs?status=completed');
  });

  it('tasks family body carries the documented fields', async () => {
    server.handle((_req, res) => json(res, 202, { taskId: 'vt_1', status: 'processing', creditsCharged: 20 }));
    const t = await client.videos.tasks.create({ prompt: 'p', model: 'v-1', aspectRatio: '16:9', duration: 5, firstFrameUrl: 'https://f/1.png', seed: 7 });
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ prompt: 'p', model: 'v-1', aspectRatio: '16:9', duration: 5, firstFrameUrl: 'https://f/1.png', seed: 7 });
    expect(t).toMatchObject({ id: 'vt_1', status: 'processing', creditsCharged: 20 });
  });
});

describe('client.lipsync', () => {
  it('media jobs: unwraps the { success, message, data } envelope, finds the result in data', async () => {
    server.handle((req, res) => {
      if (req.method === 'POST') return json(res, 200, { success: true, message: 'created', data: { id: 'ls_1', status: 'pending' } });
      return json(res, 200, { success: true, message: 'ok', data: { id: 'ls_1', status: 'completed', result: { videoUrl: 'https://cdn/ls.mp4', durationSeconds: 3 } } });
    });
    const created = await client.lipsync.jobs.create({ videoUrl: 'https://v/1.mp4', audioUrl: 'https://a/1.wav' });
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ video_url: 'https://v/1.mp4', audio_url: 'https://a/1.wav' });
    expect(created).toMatchObject({ id: 'ls_1', status: 'pending' });
    const done = await client.lipsync.jobs.wait('ls_1');
    expect(done).toMatchObject({ status: 'succeeded', resultUrl: 'https://cdn/ls.mp4', result: { durationSeconds: 3 } });
  });

  it('media jobs list reads { data: { items, pagination } } and page paging', async () => {
    server.handle((_req, res) => json(res, 200, { success: true, data: { items: [{ id: 'ls_2', status: 'failed', errorCode: 'bad_media' }], pagination: { page: 2, limit: 1, hasMore: false, nextPage: null } } }));
    const page = await client.lipsync.jobs.list({ page: 2, limit: 1, status: 'failed' });
    expect(server.requests[0]!.url).toBe('/api/open/v1/media/lip-sync/jobs?page=2&limit=1&status=failed');
    expect(page).toMatchObject({ page: 2, hasMore: false });
    expect(page.items[0]).toMatchObject({ id: 'ls_2', status: 'failed', errorCode: 'bad_media' });
  });

  it('maps 422 (media reachable but not processable) to UnprocessableError', async () => {
    server.handle((_req, res) => json(res, 422, { success: false, message: 'no face found', error: { code: 'unprocessable_media', message: 'no face found' } }));
    const err = await client.lipsync.jobs.create({ videoUrl: 'https://v/1.mp4', audioUrl: 'https://a/1.wav' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnprocessableError);
    expect(server.requests).toHaveLength(1);
  });

  it('tasks family: image mode body and resultVideoUrl', async () => {
    server.handle((_req, res) => json(res, 200, { taskId: 'lt_1', status: 'succeeded', resultVideoUrl: 'https://cdn/lt.mp4', videoUrl: null }));
    await client.lipsync.tasks.create({ inputMode: 'image', imageUrl: 'https://i/1.png', audioUrl: 'https://a/1.wav', durationSeconds: 2 });
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ inputMode: 'image', imageUrl: 'https://i/1.png', audioUrl: 'https://a/1.wav', durationSeconds: 2 });
    expect((await client.lipsync.tasks.get('lt_1')).resultUrl).toBe('https://cdn/lt.mp4');
  });
});
