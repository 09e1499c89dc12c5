import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { encodePng } from '../../../../src/server/media-engines/png.js';
import { mediaToolsOf, setMediaTools } from '../../../../src/server/media-engines/tools.js';
import {
  balances,
  charges,
  call,
  correlation,
  decodeAudioTrack,
  download,
  envelope,
  ffprobe,
  HAS_FFMPEG,
  newAccount,
  startInputServer,
  startMediaServer,
  testVideo,
  toneWav,
  until,
  type InputServer,
} from '../../media-engines/helpers.js';

let server: ReferenceServer;
let inputs: InputServer;
const url = { video: '', audio: '', image: '', text: '', shortAudio: '' };
let audioBytes: Buffer;

beforeAll(async () => {
  server = await startMediaServer();
  inputs = await startInputServer();
  audioBytes = toneWav(3, 330);
  url.audio = inputs.put('/voice.wav', 'audio/wav', audioBytes);
  url.shortAudio = inputs.put('/short.wav', 'audio/wav', toneWav(1, 500));
  url.image = inputs.put('/face.png', 'image/png', encodePng({ width: 90, height: 120, channels: 3, pixels: new Uint8Array(90 * 120 * 3).fill(128) }));
  url.text = inputs.put('/notes.txt', 'text/plain', Buffer.from('these are not media'));
  if (HAS_FFMPEG) url.video = inputs.put('/face.mp4', 'video/mp4', testVideo(1));
});
afterAll(async () => {
  await server.close();
  await inputs.close();
});

const jobs = () => `${server.baseUrl}/media/lip-sync/jobs`;
const job = (id: string) => `${server.baseUrl}/media/lip-sync/jobs/${id}`;
const tasks = () => `${server.baseUrl}/lip-sync/tasks`;
const task = (id: string) => `${server.baseUrl}/lip-sync/tasks/${id}`;
const jobDone = (r: { json: { data: { status: string } } }) => r.json.data.status === 'completed' || r.json.data.status === 'failed';
const taskDone = (r: { json: { status: string } }) => r.json.status === 'succeeded' || r.json.status === 'failed';

describe('lip-sync routes without ffmpeg', () => {
  it('answer 401 without a key and 503 capability_unavailable when ffmpeg is missing', async () => {
    expect((await call('POST', jobs(), { key: null, body: { video_url: url.image, audio_url: url.audio } })).status).toBe(401);
    expect((await call('GET', jobs(), { key: null })).status).toBe(401);
    expect((await call('GET', task('lip_x'), { key: null })).status).toBe(401);
    expect((await call('GET', `${server.rootUrl}/api/open/lip-sync/list`, { key: null })).status).toBe(401);
    const lone = await startMediaServer();
    try {
      setMediaTools(lone.ctx, { ...mediaToolsOf(lone.ctx), ffmpeg: undefined });
      const { key } = newAccount(lone);
      const res = await call('POST', `${lone.baseUrl}/lip-sync/tasks`, { key, body: { inputMode: 'image', imageUrl: url.image, audioUrl: url.audio } });
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe('capability_unavailable');
      expect(res.json.error.message).toMatch(/^lip-sync is not available on this server: ffmpeg is not installed/);
    } finally {
      await lone.close();
    }
  });
});

describe.skipIf(!HAS_FFMPEG)('lip-sync (needs ffmpeg)', () => {
  it('answers 400 for missing or bad fields and unreachable URLs, 422 for reachable media it cannot process, charging nothing', async () => {
    const { key, userId } = newAccount(server);
    const bad: [string, unknown, RegExp][] = [
      [jobs(), { audio_url: url.audio }, /video_url/],
      [jobs(), { video_url: url.video }, /audio_url/],
      [jobs(), { video_url: 'nope', audio_url: url.audio }, /video_url must be an absolute http\(s\) URL/],
      [jobs(), { video_url: url.video, audio_url: inputs.url('/missing.wav') }, /audio_url answered HTTP 404/],
      [jobs(), { video_url: url.video, audio_url: url.audio, model: 'wav2lip' }, /unsupported model/],
      [tasks(), { inputMode: 'image', audioUrl: url.audio }, /imageUrl is required in image mode/],
      [tasks(), { inputMode: 'video', imageUrl: url.image, audioUrl: url.audio }, /videoUrl is required in video mode/],
      [tasks(), { inputMode: 'video', videoUrl: url.video, imageUrl: url.image, audioUrl: url.audio }, /imageUrl belongs to image mode/],
      [tasks(), { inputMode: 'sideways', videoUrl: url.video, audioUrl: url.audio }, /inputMode/],
      [tasks(), { videoUrl: url.video, audioUrl: url.audio, durationSeconds: -1 }, /durationSeconds/],
    ];
    for (const [route, body, message] of bad) {
      const res = await call('POST', route, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.message).toMatch(message);
    }
    const unprocessable: [string, unknown, RegExp][] = [
      [jobs(), { video_url: url.video, audio_url: url.image }, /^audio_url holds no audio track/],
      [jobs(), { video_url: url.video, audio_url: url.text }, /^audio_url is not a media file/],
      [jobs(), { video_url: url.audio, audio_url: url.audio }, /^video_url holds no video track/],
      [tasks(), { inputMode: 'image', imageUrl: url.video, audioUrl: url.audio }, /^imageUrl is not a still image/],
    ];
    for (const [route, body, message] of unprocessable) {
      const res = await call('POST', route, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.json.error.code).toBe('unprocessable_media');
      expect(res.json.error.message).toMatch(message);
    }
    expect(balances(server, userId).quota).toBe(1_000_000);
  });

  it('answers 402 when the API quota is short, 403 without the capability', async () => {
    const empty = newAccount(server, { credits: 0, apiQuota: 0 });
    const res = await call('POST', jobs(), { key: empty.key, body: { video_url: url.video, audio_url: url.audio } });
    expect(res.status).toBe(402);
    expect(res.json.error).toMatchObject({ code: 'insufficient_credits', currency: 'quota', needed: 15 });
    const ttsOnly = newAccount(server, { capabilities: ['tts'] });
    expect((await call('POST', tasks(), { key: ttsOnly.key, body: { videoUrl: url.video, audioUrl: url.audio } })).status).toBe(403);
  });

  it('creates in the { success, message, data: { id, status: pending } } envelope and delivers an MP4 whose audio track is the given audio', async () => {
    const { key, userId } = newAccount(server);
    const created = await call('POST', jobs(), { key, body: { video_url: url.video, audio_url: url.audio } });
    expect(created.status).toBe(202);
    expect(created.json).toEqual({ success: true, message: expect.any(String), data: { id: expect.stringMatching(/^lip_/), status: 'pending' } });
    expect(balances(server, userId).quota).toBe(1_000_000 - 15);
    const done = await until(() => call('GET', job(created.json.data.id), { key }), jobDone, 120_000);
    expect(done.json.success).toBe(true);
    expect(done.json.data).toMatchObject({ status: 'completed', inputMode: 'video', durationSeconds: 3, errorCode: null, result: { contentType: 'video/mp4', hasAudio: true } });
    const file = await download(done.json.data.result.url, key);
    expect(file.contentType).toBe('video/mp4');
    const probe = ffprobe(file.data);
    const audio = probe.streams.find((s) => s.codec_type === 'audio');
    const video = probe.streams.find((s) => s.codec_type === 'video');
    expect(audio?.codec_name).toBe('aac');
    expect(video).toMatchObject({ width: 160, height: 120 });
    // The 1 s source video is looped to the audio's 3 s.
    expect(Number(probe.format.duration)).toBeCloseTo(3, 0);
    // The track is the given audio: same loudness contour, window by window.
    const given = envelope(decodeAudioTrack(audioBytes), 400);
    const muxed = envelope(decodeAudioTrack(file.data), 400);
    expect(correlation(given, muxed)).toBeGreaterThan(0.9);
    // Terminal: repeated polls give the same answer and charge nothing more.
    for (let i = 0; i < 4; i++) expect((await call('GET', job(created.json.data.id), { key })).json).toEqual(done.json);
    expect(balances(server, userId).quota).toBe(1_000_000 - 15);
  });

  it('makes a video from a still image in image mode, cut to durationSeconds (charged for the cut length)', async () => {
    const { key, userId } = newAccount(server);
    const created = await call('POST', tasks(), { key, body: { inputMode: 'image', imageUrl: url.image, referenceImageUrl: url.image, audioUrl: url.audio, durationSeconds: 1.2 } });
    expect(created.status).toBe(202);
    expect(created.json).toEqual({ taskId: expect.stringMatching(/^lip_/), status: 'pending', creditsCharged: 10 });
    const done = await until(() => call('GET', task(created.json.taskId), { key }), taskDone, 120_000);
    expect(done.json).toMatchObject({ type: 'lipsync', status: 'succeeded', inputMode: 'image', imageUrl: url.image, videoUrl: null, durationSeconds: 1.2, creditsCharged: 10 });
    const probe = ffprobe((await download(done.json.resultVideoUrl, key)).data);
    expect(probe.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 90, height: 120 });
    expect(probe.streams.some((s) => s.codec_type === 'audio')).toBe(true);
    expect(Number(probe.format.duration)).toBeCloseTo(1.2, 0);
    expect(balances(server, userId).quota).toBe(1_000_000 - 10);
  });

  it('refunds an injected engine failure once; the failed job keeps its state under repeated polling', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: '/short.wav' } });
    const created = await call('POST', jobs(), { key, body: { video_url: url.video, audio_url: url.shortAudio } });
    const done = await until(() => call('GET', job(created.json.data.id), { key }), jobDone);
    expect(done.json.data).toMatchObject({ status: 'failed', errorCode: 'generation_failed', result: null, creditsCharged: 0 });
    for (let i = 0; i < 4; i++) expect((await call('GET', job(created.json.data.id), { key })).json).toEqual(done.json);
    // Pre-deducted once, refunded once.
    expect(charges(server, userId)).toEqual([{ amount: 5, currency: 'quota', state: 'released' }]);
    expect(balances(server, userId).quota).toBe(1_000_000);
  });

  it('replays an optional Idempotency-Key without a second job or charge', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'idempotency-key': 'lip-once' };
    const body = { video_url: url.video, audio_url: url.shortAudio };
    const first = await call('POST', jobs(), { key, body, headers });
    const second = await call('POST', jobs(), { key, body, headers });
    expect(second.json).toEqual(first.json);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(balances(server, userId).quota).toBe(1_000_000 - 5);
    expect((await call('POST', jobs(), { key, body: { ...body, audio_url: url.audio }, headers })).status).toBe(422);
  });

  it("lists by page with status filters in the envelope; 404 for another account's ids", async () => {
    const { key } = newAccount(server);
    const other = newAccount(server);
    server.faults.set({ engineFailure: { match: '/face.png' } });
    const a = (await call('POST', jobs(), { key, body: { video_url: url.video, audio_url: url.shortAudio } })).json.data.id as string;
    const b = (await call('POST', tasks(), { key, body: { inputMode: 'image', imageUrl: url.image, audioUrl: url.shortAudio } })).json.taskId as string;
    for (const id of [a, b]) await until(() => call('GET', job(id), { key }), jobDone, 120_000);
    const page = await call('GET', `${jobs()}?limit=1`, { key });
    expect(page.json).toMatchObject({ success: true, pagination: { page: 1, limit: 1, hasMore: true, nextPage: 2 } });
    expect(page.json.data.map((j: { id: string }) => j.id)).toEqual([b]);
    expect((await call('GET', `${jobs()}?status=completed`, { key })).json.data.map((j: { id: string }) => j.id)).toEqual([a]);
    expect((await call('GET', `${jobs()}?status=failed`, { key })).json.data.map((j: { id: string }) => j.id)).toEqual([b]);
    expect((await call('GET', `${tasks()}?status=succeeded`, { key })).json.data.map((t: { taskId: string }) => t.taskId)).toEqual([a]);
    expect((await call('GET', `${jobs()}?status=weird`, { key })).status).toBe(400);
    const foreign = await call('GET', job(a), { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('not_found');
    expect((await call('GET', task(b), { key: other.key })).status).toBe(404);
    expect((await call('GET', jobs(), { key: other.key })).json.data).toEqual([]);
  });

  it('serves the legacy create, list and query paths (hidden from openapi.json)', async () => {
    const { key } = newAccount(server);
    const created = await call('POST', `${server.rootUrl}/api/open/lip-sync/create`, { key, body: { videoUrl: url.video, audio_url: url.shortAudio } });
    expect(created.status).toBe(202);
    expect(created.json.data.status).toBe('pending');
    const id = created.json.data.id as string;
    const done = await until(() => call('GET', `${server.rootUrl}/api/open/lip-sync/query?id=${id}`, { key }), jobDone, 120_000);
    expect(done.json.data).toMatchObject({ id, status: 'completed' });
    const list = await call('GET', `${server.rootUrl}/api/open/lip-sync/list?limit=5`, { key });
    expect(list.json.data.map((j: { id: string }) => j.id)).toEqual([id]);
    expect((await call('GET', `${server.rootUrl}/api/open/lip-sync/query`, { key })).status).toBe(400);
    expect((await call('GET', `${server.rootUrl}/api/open/lip-sync/query?id=lip_nope`, { key })).status).toBe(404);
    const doc = (await call('GET', `${server.rootUrl}/api/openapi.json`)).json as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain('/api/open/v1/media/lip-sync/jobs');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/open/lip-sync'))).toEqual([]);
  });
});
