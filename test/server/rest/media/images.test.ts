import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { decodePng, encodePng } from '../../../../src/server/media-engines/png.js';
import { balances, call, charges, download, ffprobe, HAS_FFMPEG, newAccount, startInputServer, startMediaServer, until, type InputServer } from '../../media-engines/helpers.js';

let server: ReferenceServer;
let inputs: InputServer;
let picture: string;

beforeAll(async () => {
  server = await startMediaServer();
  inputs = await startInputServer();
  const pixels = new Uint8Array(8 * 8 * 3);
  for (let i = 0; i < 64; i++) pixels.set(i % 2 ? [255, 255, 255] : [0, 0, 0], i * 3);
  picture = inputs.put('/checker.png', 'image/png', encodePng({ width: 8, height: 8, channels: 3, pixels }));
  inputs.put('/text.txt', 'text/plain', Buffer.from('not an image at all'));
});
afterAll(async () => {
  await server.close();
  await inputs.close();
});

const jobs = () => `${server.baseUrl}/media/images/jobs`;
const job = (id: string) => `${server.baseUrl}/media/images/jobs/${id}`;
const tasks = () => `${server.baseUrl}/images/tasks`;
const task = (id: string) => `${server.baseUrl}/images/tasks/${id}`;
let keySeq = 0;
const idem = () => ({ 'idempotency-key': `img-${process.pid}-${++keySeq}` });
const jobDone = (r: { json: { status: string } }) => r.json.status === 'completed' || r.json.status === 'failed';
const taskDone = (r: { json: { status: string } }) => r.json.status === 'succeeded' || r.json.status === 'failed';

describe('GET /media/models', () => {
  it('lists the image and video models by mediaType; 400 for another type, 401 without a key', async () => {
    const { key } = newAccount(server);
    const images = await call('GET', `${server.baseUrl}/media/models?mediaType=image`, { key });
    expect(images.status).toBe(200);
    expect(images.json.data.length).toBeGreaterThan(0);
    expect(images.json.data.every((m: { mediaType: string }) => m.mediaType === 'image')).toBe(true);
    expect(images.json.data[0]).toMatchObject({ id: 'svc-image-v1', default: true, maxReferenceImages: 16, quotaPerImage: 10 });
    const videos = await call('GET', `${server.baseUrl}/media/models?mediaType=video`, { key });
    expect(videos.json.data.every((m: { mediaType: string }) => m.mediaType === 'video')).toBe(true);
    expect(videos.json.data.length).toBe(HAS_FFMPEG ? 1 : 0);
    expect((await call('GET', `${server.baseUrl}/media/models?mediaType=audio`, { key })).status).toBe(400);
    expect((await call('GET', `${server.baseUrl}/media/models?mediaType=image`, { key: null })).status).toBe(401);
  });
});

describe('POST /media/images/jobs', () => {
  it('answers 401 without a key and 400 idempotency_key_required without an Idempotency-Key', async () => {
    const { key, userId } = newAccount(server);
    expect((await call('POST', jobs(), { key: null, body: { prompt: 'a cat' }, headers: idem() })).status).toBe(401);
    expect((await call('GET', job('img_x'), { key: null })).status).toBe(401);
    const res = await call('POST', jobs(), { key, body: { prompt: 'a cat' } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('idempotency_key_required');
    expect(balances(server, userId).quota).toBe(1_000_000);
  });

  it('answers 400 invalid_request for bad bodies, naming the problem', async () => {
    const { key } = newAccount(server);
    const cases: [unknown, RegExp][] = [
      [{}, /prompt/],
      [{ prompt: '   ' }, /prompt/],
      [{ prompt: 'x', aspect_ratio: '5:1' }, /aspect ratios/],
      [{ prompt: 'x', generation_type: 'edit' }, /image_url is required when generation_type is edit/],
      [{ prompt: 'x', generation_type: 'remix' }, /generation_type/],
      [{ prompt: 'x', model: 'dall-e-3' }, /unsupported model/],
      [{ prompt: 'x', model: 'svc-image-lite', resolution: '2k' }, /resolution/],
      [{ prompt: 'x', generation_type: 'edit', image_url: 'file:///etc/passwd' }, /image_url must use http or https/],
      [{ prompt: 'x', reference_image_urls: Array.from({ length: 17 }, (_, i) => inputs.url(`/r${i}.png`)) }, /reference_image_urls/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', jobs(), { key, body, headers: idem() });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.message).toMatch(message);
    }
  });

  it('answers 402 when the API quota is short (credits do not pay for images) and 403 without the capability', async () => {
    const noQuota = newAccount(server, { credits: 1_000_000, apiQuota: 0 });
    const res = await call('POST', jobs(), { key: noQuota.key, body: { prompt: 'a cat' }, headers: idem() });
    expect(res.status).toBe(402);
    expect(res.json.error).toMatchObject({ code: 'insufficient_credits', currency: 'quota' });
    expect(balances(server, noQuota.userId).credits).toBe(1_000_000);
    const empty = newAccount(server, { credits: 0, apiQuota: 0 });
    expect((await call('POST', tasks(), { key: empty.key, body: { prompt: 'a cat' } })).status).toBe(402);
    const asrOnly = newAccount(server, { capabilities: ['asr'] });
    expect((await call('POST', jobs(), { key: asrOnly.key, body: { prompt: 'a cat' }, headers: idem() })).status).toBe(403);
  });

  it('completes with a valid PNG of the asked size at a Bearer result URL, charging API quota once', async () => {
    const { key, userId } = newAccount(server);
    const created = await call('POST', jobs(), { key, body: { prompt: 'a red sunset over the ocean', aspect_ratio: '16:9', resolution: '512' }, headers: idem() });
    expect(created.status).toBe(202);
    expect(created.json).toMatchObject({ jobId: expect.stringMatching(/^img_/), status: 'pending', resultUrl: null, creditsCharged: 10 });
    expect(balances(server, userId)).toEqual({ credits: 1_000_000, quota: 1_000_000 - 10 });
    const done = await until(() => call('GET', job(created.json.jobId), { key }), jobDone);
    expect(done.json).toMatchObject({ status: 'completed', errorCode: null, result: { width: 512, height: 288, contentType: 'image/png' } });
    expect(done.json.resultUrl).toBe(done.json.result.url);
    const file = await download(done.json.resultUrl, key);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe('image/png');
    expect(file.redirectedTo).toMatch(/\/api\/open\/media\/signed\/.+sig=/);
    expect(file.data.length).toBe(done.json.result.bytes);
    const image = decodePng(file.data);
    expect([image.width, image.height]).toEqual([512, 288]);
    if (HAS_FFMPEG) expect(ffprobe(file.data).streams[0]).toMatchObject({ codec_name: 'png', width: 512, height: 288 });
    // Repeated polls return the same terminal object and charge nothing more.
    expect((await call('GET', job(created.json.jobId), { key })).json).toEqual(done.json);
    expect(balances(server, userId).quota).toBe(1_000_000 - 10);
  });

  it('derives the picture from the prompt: the same prompt gives the same file, another prompt another', async () => {
    const { key } = newAccount(server);
    const make = async (prompt: string) => {
      const created = await call('POST', jobs(), { key, body: { prompt, model: 'svc-image-lite', aspect_ratio: '1:1' }, headers: idem() });
      const done = await until(() => call('GET', job(created.json.jobId), { key }), jobDone);
      return (await download(done.json.resultUrl, key)).data;
    };
    const a = await make('a quiet green forest');
    const b = await make('a quiet green forest');
    const c = await make('a loud purple city');
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
    const green = decodePng(a);
    const purple = decodePng(c);
    const mean = (img: typeof green, channel: number) => {
      let sum = 0;
      for (let i = channel; i < img.pixels.length; i += img.channels) sum += img.pixels[i]!;
      return sum / (img.width * img.height);
    };
    expect(mean(green, 1)).toBeGreaterThan(mean(green, 0));
    expect(mean(purple, 2)).toBeGreaterThan(mean(purple, 1));
  });

  it('edits image_url (blended under the pattern); an image_url that is not an image fails the job with unprocessable_media, refunded', async () => {
    const { key, userId } = newAccount(server);
    const plain = await call('POST', jobs(), { key, body: { prompt: 'soft blue', resolution: '512' }, headers: idem() });
    const edited = await call('POST', jobs(), { key, body: { prompt: 'soft blue', resolution: '512', generation_type: 'edit', image_url: picture }, headers: idem() });
    const plainDone = await until(() => call('GET', job(plain.json.jobId), { key }), jobDone);
    const editDone = await until(() => call('GET', job(edited.json.jobId), { key }), jobDone);
    expect(editDone.json).toMatchObject({ status: 'completed', generationType: 'edit' });
    const p = decodePng((await download(plainDone.json.resultUrl, key)).data);
    const e = decodePng((await download(editDone.json.resultUrl, key)).data);
    // The checkerboard's first cell is black: the edit is darker there than the plain picture.
    expect(e.pixels[0]! + e.pixels[1]! + e.pixels[2]!).toBeLessThan(p.pixels[0]! + p.pixels[1]! + p.pixels[2]!);
    const quota = balances(server, userId).quota;
    const bad = await call('POST', jobs(), { key, body: { prompt: 'x', generation_type: 'edit', image_url: inputs.url('/text.txt') }, headers: idem() });
    expect(bad.status).toBe(202);
    expect(balances(server, userId).quota).toBe(quota - 10);
    const failed = await until(() => call('GET', job(bad.json.jobId), { key }), jobDone);
    expect(failed.json).toMatchObject({ status: 'failed', errorCode: 'unprocessable_media', resultUrl: null, creditsCharged: 0 });
    expect(balances(server, userId).quota).toBe(quota);
  });

  it('replays an Idempotency-Key with the first job and no second charge; a changed body answers 422', async () => {
    const { key, userId } = newAccount(server);
    const headers = idem();
    const first = await call('POST', jobs(), { key, body: { prompt: 'one lamp', resolution: '512' }, headers });
    const second = await call('POST', jobs(), { key, body: { prompt: 'one lamp', resolution: '512' }, headers });
    expect(second.status).toBe(202);
    expect(second.json).toEqual(first.json);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(balances(server, userId).quota).toBe(1_000_000 - 10);
    const changed = await call('POST', jobs(), { key, body: { prompt: 'two lamps', resolution: '512' }, headers });
    expect(changed.status).toBe(422);
    expect(changed.json.error.code).toBe('idempotency_key_reused');
    // Keys are per account: another account's same key is a new job.
    const other = newAccount(server);
    const theirs = await call('POST', jobs(), { key: other.key, body: { prompt: 'one lamp', resolution: '512' }, headers });
    expect(theirs.json.jobId).not.toBe(first.json.jobId);
  });

  it('refunds an injected engine failure once; the failed job stays failed under repeated polling', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'doomed prompt' } });
    const created = await call('POST', jobs(), { key, body: { prompt: 'a doomed prompt' }, headers: idem() });
    const done = await until(() => call('GET', job(created.json.jobId), { key }), jobDone);
    expect(done.json).toMatchObject({ status: 'failed', errorCode: 'generation_failed', creditsCharged: 0, result: null });
    for (let i = 0; i < 4; i++) expect((await call('GET', job(created.json.jobId), { key })).json).toEqual(done.json);
    // Pre-deducted once, refunded once.
    expect(charges(server, userId)).toEqual([{ amount: 10, currency: 'quota', state: 'released' }]);
    expect(balances(server, userId).quota).toBe(1_000_000);
  });
});

describe('GET /media/images/jobs and result files', () => {
  it("answers 404 for another account's job and result file; the signed file refuses a bad signature", async () => {
    const owner = newAccount(server);
    const other = newAccount(server);
    const created = await call('POST', jobs(), { key: owner.key, body: { prompt: 'private', resolution: '512' }, headers: idem() });
    const done = await until(() => call('GET', job(created.json.jobId), { key: owner.key }), jobDone);
    expect((await call('GET', job(created.json.jobId), { key: other.key })).status).toBe(404);
    expect((await call('GET', task(created.json.jobId), { key: other.key })).status).toBe(404);
    expect((await download(done.json.resultUrl, other.key)).status).toBe(404);
    expect((await call('GET', done.json.resultUrl, { key: null })).status).toBe(401);
    const signed = (await download(done.json.resultUrl, owner.key)).redirectedTo;
    const tampered = signed.replace(/sig=([^&]+)/, 'sig=AAAA$1');
    expect((await fetch(tampered)).status).toBe(403);
    expect((await fetch(signed)).status).toBe(200);
  });

  it('lists jobs by page with a status filter (succeeded read as completed)', async () => {
    const { key } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'list-fail' } });
    const ids: string[] = [];
    for (const prompt of ['list one', 'list-fail two', 'list three']) ids.push((await call('POST', jobs(), { key, body: { prompt, model: 'svc-image-lite' }, headers: idem() })).json.jobId);
    for (const id of ids) await until(() => call('GET', job(id), { key }), jobDone);
    const page1 = await call('GET', `${jobs()}?limit=2`, { key });
    expect(page1.json.data.map((j: { jobId: string }) => j.jobId)).toEqual([ids[2], ids[1]]);
    expect(page1.json.pagination).toEqual({ page: 1, limit: 2, hasMore: true, nextPage: 2 });
    const page2 = await call('GET', `${jobs()}?limit=2&page=2`, { key });
    expect(page2.json.data.map((j: { jobId: string }) => j.jobId)).toEqual([ids[0]]);
    expect(page2.json.pagination.hasMore).toBe(false);
    expect((await call('GET', `${jobs()}?status=completed`, { key })).json.data.map((j: { jobId: string }) => j.jobId)).toEqual([ids[2], ids[0]]);
    expect((await call('GET', `${jobs()}?status=succeeded`, { key })).json.data).toHaveLength(2);
    expect((await call('GET', `${jobs()}?status=failed`, { key })).json.data.map((j: { jobId: string }) => j.jobId)).toEqual([ids[1]]);
    expect((await call('GET', `${jobs()}?status=nope`, { key })).status).toBe(400);
  });
});

describe('/images/tasks', () => {
  it('creates with 202 { taskId, status, creditsCharged }, honours size and referenceImageUrls (at most 16), result resultImageUrl', async () => {
    const { key, userId } = newAccount(server);
    expect((await call('POST', tasks(), { key: null, body: { prompt: 'x' } })).status).toBe(401);
    const tooMany = await call('POST', tasks(), { key, body: { prompt: 'x', referenceImageUrls: Array.from({ length: 17 }, () => picture) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.message).toMatch(/referenceImageUrls/);
    expect((await call('POST', tasks(), { key, body: { prompt: 'x', size: '4096x10' } })).status).toBe(400);
    const created = await call('POST', tasks(), { key, body: { prompt: 'tiny', size: '96x64', resolution: '512', referenceImageUrls: Array.from({ length: 16 }, () => picture) } });
    expect(created.status).toBe(202);
    expect(created.json).toEqual({ taskId: expect.stringMatching(/^img_/), status: 'pending', creditsCharged: 10 });
    expect(balances(server, userId).quota).toBe(1_000_000 - 10);
    const done = await until(() => call('GET', task(created.json.taskId), { key }), taskDone);
    expect(done.json).toMatchObject({ type: 'image', status: 'succeeded', width: 96, height: 64, errorCode: null, creditsCharged: 10 });
    expect(done.json.referenceImageUrls).toHaveLength(16);
    const png = decodePng((await download(done.json.resultImageUrl, key)).data);
    expect([png.width, png.height]).toEqual([96, 64]);
    // One task, readable in the media-job shape too.
    expect((await call('GET', job(created.json.taskId), { key })).json).toMatchObject({ status: 'completed', resultUrl: done.json.resultImageUrl });
  });

  it('lists with limit, offset and status; 404 for unknown ids; Idempotency-Key replays when given', async () => {
    const { key, userId } = newAccount(server);
    const headers = idem();
    const a = await call('POST', tasks(), { key, body: { prompt: 'first', model: 'svc-image-lite' }, headers });
    const again = await call('POST', tasks(), { key, body: { prompt: 'first', model: 'svc-image-lite' }, headers });
    expect(again.json).toEqual(a.json);
    const b = await call('POST', tasks(), { key, body: { prompt: 'second', model: 'svc-image-lite' } });
    expect(balances(server, userId).quota).toBe(1_000_000 - 8);
    for (const id of [a.json.taskId, b.json.taskId]) await until(() => call('GET', task(id), { key }), taskDone);
    const list = await call('GET', `${tasks()}?limit=1&offset=1&status=succeeded`, { key });
    expect(list.json.data.map((t: { taskId: string }) => t.taskId)).toEqual([a.json.taskId]);
    expect(list.json.pagination).toEqual({ limit: 1, offset: 1, hasMore: false });
    expect((await call('GET', `${tasks()}?status=pending`, { key })).json.data).toEqual([]);
    expect((await call('GET', task('img_nope'), { key })).status).toBe(404);
  });
});
