import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../../src/server/index.js';
import { taskRunnerOf } from '../../../../src/server/rest/common/task-runner.js';
import { envelopeResponse, flatCreateResponse, flatListResponse, flatTaskDoc, jobListResponse } from '../../../../src/server/rest/tts/schemas.js';
import { parseWavHeader } from '../../../../src/sinks/wav-header.js';
import { creditsOf, decodeMp3, errorOf, get, MODEL, newAccount, post, startTestServer, until, VOICE } from '../helpers.js';
import { allowKeyInUrls } from '../../../setup/secret-scan.js';

// These tests put a key in a URL on purpose, to show the server refuses it there.
allowKeyInUrls(/[?&](token|api_key)=sk-/);

let server: ReferenceServer;
let jobsUrl: string;
let tasksUrl: string;

beforeAll(async () => {
  server = await startTestServer();
  jobsUrl = `${server.baseUrl}/speech/tts/jobs`;
  tasksUrl = `${server.baseUrl}/tts/tasks`;
});
afterAll(async () => {
  await server.close();
});

type Envelope = ReturnType<typeof envelopeResponse.parse>;

async function createJob(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Envelope> {
  // wav unless a test asks otherwise: the pure-JS mp3 encoder is the slow part of a job.
  const res = await post(jobsUrl, { voiceId: VOICE, format: 'wav', ...body }, { key, headers });
  expect(res.status).toBe(202);
  return envelopeResponse.parse(await res.json());
}

async function readJob(key: string, taskId: string): Promise<Envelope> {
  const res = await get(`${jobsUrl}/${taskId}`, { key });
  expect(res.status).toBe(200);
  return envelopeResponse.parse(await res.json());
}

const TERMINAL = ['success', 'partial_fail', 'fail'];
const settled = (key: string, taskId: string) => until(() => readJob(key, taskId), (e) => TERMINAL.includes(e.task.status));

describe('envelope jobs (/speech/tts/jobs)', () => {
  it('accepts with 202, pre-deducts, moves pending -> processing -> success, and delivers audio', async () => {
    const { key, userId } = newAccount(server, { apiQuota: 55 });
    server.faults.set({ latencyMs: 2 });
    let created: Envelope;
    const seen = new Set<string>();
    try {
      created = await createJob(key, { text: 'First sentence here. Second one follows.', format: 'wav' });
      seen.add(created.task.status);
      expect(created.task.status).toBe('pending');
      expect(created.task.id).toBe(created.task.taskId);
      expect(created.record).toEqual({ id: created.task.taskId, status: 'pending' });
      expect(created.quotaRemaining).toBe(55);
      expect(created.creditsUsed).toBe(40);
      expect(created.task.audioUrl).toBeNull();
      expect(created.task.delivery).toEqual({ playbackUrl: null, downloadUrl: null, downloadReady: false });
      expect(created.task.segments).toHaveLength(2);
      expect(creditsOf(server, userId)).toBe(1_000_000 - 40);
      const done = await until(
        () => readJob(key, created.task.taskId),
        (e) => {
          seen.add(e.task.status);
          return TERMINAL.includes(e.task.status);
        },
      );
      expect(done.task.status).toBe('success');
      expect(done.record.status).toBe('success');
      expect(seen).toContain('processing');
      expect(done.quotaRemaining).toBeUndefined();
      expect(done.creditsUsed).toBe(40);
      expect(done.task.audioUrl).toBe(`${server.rootUrl}/api/open/tts/jobs/${created.task.taskId}/audio`);
      expect(done.task.delivery).toEqual({ playbackUrl: done.task.audioUrl, downloadUrl: `${done.task.audioUrl}?download=1`, downloadReady: true });
      expect(done.task.segments.every((s) => s.status === 'success' && s.playbackUrl)).toBe(true);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
    // Reading and downloading never charge again.
    const file = await get((await readJob(key, created.task.taskId)).task.audioUrl!, { key });
    expect(file.status).toBe(200);
    expect(parseWavHeader(Buffer.from(await file.arrayBuffer()))).toBeDefined();
    await get(`${jobsUrl}/${created.task.taskId}`, { key });
    expect(creditsOf(server, userId)).toBe(1_000_000 - 40);
  });

  it('partial_fail when one segment fails: final audio of the others, charged for the delivered characters only', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'BROKEN' } });
    const created = await createJob(key, { text: 'Good start. BROKEN middle. Good end.', format: 'mp3' });
    expect(created.creditsUsed).toBe(36);
    const done = await settled(key, created.task.taskId);
    expect(done.task.status).toBe('partial_fail');
    expect(done.task.segments.map((s) => s.status)).toEqual(['success', 'fail', 'success']);
    expect(done.task.segments[1]!.playbackUrl).toBeNull();
    expect(done.task.delivery.downloadReady).toBe(true);
    expect(done.task.errorCode).toBe('generation_failed');
    // 'Good start. ' (12) + 'Good end.' (9) delivered.
    expect(done.creditsUsed).toBe(21);
    expect(creditsOf(server, userId)).toBe(1_000_000 - 21);
    const audio = await get(done.task.audioUrl!, { key });
    expect(audio.status).toBe(200);
    expect((await decodeMp3(new Uint8Array(await audio.arrayBuffer()))).samples).toBeGreaterThan(0);
  });

  it('fail after an injected engine failure: refunded once, even when the failure is reported twice', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'DOOMED' } });
    const created = await createJob(key, { text: 'DOOMED job' });
    expect(creditsOf(server, userId)).toBe(1_000_000 - 10);
    const done = await settled(key, created.task.taskId);
    expect(done.task.status).toBe('fail');
    expect(done.task.audioUrl).toBeNull();
    expect(done.task.errorCode).toBe('generation_failed');
    expect(done.creditsUsed).toBe(0);
    expect(creditsOf(server, userId)).toBe(1_000_000);
    // Report the failure again and refund again: nothing changes.
    const runner = taskRunnerOf(server.ctx, 'tts')!;
    expect(runner.fail(created.task.taskId, 'generation_failed', 'reported again')).toBe(false);
    expect(runner.refund(created.task.taskId)).toBe(false);
    expect(runner.refund(created.task.taskId)).toBe(false);
    expect(creditsOf(server, userId)).toBe(1_000_000);
    // The terminal state was not rewritten.
    expect((await readJob(key, created.task.taskId)).task.errorMessage).not.toBe('reported again');
    // No download for a failed job.
    expect((await get(`${server.rootUrl}/api/open/tts/jobs/${created.task.taskId}/audio`, { key })).status).toBe(404);
  });

  it('402 when the credits do not cover the text; nothing is created', async () => {
    const { key, userId } = newAccount(server, { credits: 5 });
    const res = await post(jobsUrl, { text: 'Too many characters.', voiceId: VOICE }, { key });
    expect(res.status).toBe(402);
    expect((await errorOf(res)).code).toBe('insufficient_credits');
    expect(creditsOf(server, userId)).toBe(5);
    const list = jobListResponse.parse(await (await get(jobsUrl, { key })).json());
    expect(list.data).toHaveLength(0);
  });

  const invalid: [string, Record<string, unknown>][] = [
    ['missing text', { voiceId: VOICE }],
    ['text over 5000', { text: 'x'.repeat(5001), voiceId: VOICE }],
    ['missing voice', { text: 'hi' }],
    ['unknown model', { text: 'hi', voiceId: VOICE, engineModelId: 'tts-1' }],
    ['modelId and engineModelId disagree', { text: 'hi', voiceId: VOICE, modelId: MODEL, engineModelId: 'lyra-v2' }],
    ['speed', { text: 'hi', voiceId: VOICE, speed: 0 }],
    ['format', { text: 'hi', voiceId: VOICE, format: 'aac' }],
    ['emotion', { text: 'hi', voiceId: VOICE, emotion: 'bored' }],
    ['wrong type', { text: ['hi'], voiceId: VOICE }],
  ];
  it.each(invalid)('400 for %s', async (_name, body) => {
    const res = await post(jobsUrl, body);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('invalid_request');
  });

  it('accepts engineModelId and reference_id', async () => {
    const { key } = newAccount(server);
    const res = await post(jobsUrl, { text: 'Alias.', reference_id: VOICE, engineModelId: 'aurora-tts-1', format: 'wav' }, { key });
    expect(res.status).toBe(202);
    const job = envelopeResponse.parse(await res.json());
    expect(job.task.engineModelId).toBe('aurora-tts-1');
    expect(job.task.voiceId).toBe(VOICE);
  });

  it('401 without a key; 404 for another account’s job; 403 without the tts capability', async () => {
    const owner = newAccount(server);
    const created = await createJob(owner.key, { text: 'Private job.' });
    expect((await get(`${jobsUrl}/${created.task.taskId}`, { key: null })).status).toBe(401);
    const other = newAccount(server);
    const res = await get(`${jobsUrl}/${created.task.taskId}`, { key: other.key });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe('not_found');
    expect((await get(`${jobsUrl}/tts_doesnotexist`, { key: owner.key })).status).toBe(404);
    const limited = newAccount(server, { capabilities: ['asr'] });
    expect((await post(jobsUrl, { text: 'hi', voiceId: VOICE }, { key: limited.key })).status).toBe(403);
  });

  it('an Idempotency-Key replays the first 202 without a second job or charge', async () => {
    const { key, userId } = newAccount(server);
    const headers = { 'idempotency-key': 'job-key-1' };
    const first = await createJob(key, { text: 'Only once.' }, headers);
    const again = await createJob(key, { text: 'Only once.' }, headers);
    expect(again.task.taskId).toBe(first.task.taskId);
    expect(creditsOf(server, userId)).toBe(1_000_000 - 10);
    const conflict = await post(jobsUrl, { text: 'Different.', voiceId: VOICE, format: 'wav' }, { key, headers });
    expect(conflict.status).toBe(422);
    const list = jobListResponse.parse(await (await get(jobsUrl, { key })).json());
    expect(list.data).toHaveLength(1);
  });
});

describe('job lists', () => {
  it('newest first with page, limit, hasMore, nextPage; textPreview, textFingerprint, never the full text', async () => {
    const { key } = newAccount(server);
    const long = `${'Long text '.repeat(20)}end.`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createJob(key, { text: i === 4 ? long : `Job number ${i}.` })).task.taskId);
    const page1 = jobListResponse.parse(await (await get(`${jobsUrl}?limit=2`, { key })).json());
    expect(page1.data.map((j) => j.taskId)).toEqual([ids[4], ids[3]]);
    expect(page1.pagination).toEqual({ page: 1, limit: 2, hasMore: true, nextPage: 2 });
    const page3 = jobListResponse.parse(await (await get(`${jobsUrl}?limit=2&page=3`, { key })).json());
    expect(page3.data.map((j) => j.taskId)).toEqual([ids[0]]);
    expect(page3.pagination).toEqual({ page: 3, limit: 2, hasMore: false, nextPage: null });
    const offset = jobListResponse.parse(await (await get(`${jobsUrl}?limit=2&offset=1`, { key })).json());
    expect(offset.data.map((j) => j.taskId)).toEqual([ids[3], ids[2]]);

    const item = page1.data[0]!;
    expect(item.characters).toBe(long.length);
    expect(item.textPreview).toBe(long.slice(0, 80));
    expect(item.textFingerprint).toBe(`sha256:${createHash('sha256').update(long, 'utf8').digest('hex')}`);
    expect(item).toMatchObject({ voiceId: VOICE, engineModelId: MODEL, creditsUsed: long.length });
    expect(Date.parse(item.createdAt)).not.toBeNaN();
    expect(JSON.stringify(page1)).not.toContain(long);
  });

  it('filters by status and createdAfter', async () => {
    const { key } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'FILTER-FAIL' } });
    const bad = await createJob(key, { text: 'FILTER-FAIL' });
    await settled(key, bad.task.taskId);
    const good = await createJob(key, { text: 'Fine.' });
    await settled(key, good.task.taskId);
    const failed = jobListResponse.parse(await (await get(`${jobsUrl}?status=fail`, { key })).json());
    expect(failed.data.map((j) => j.taskId)).toEqual([bad.task.taskId]);
    const ok = jobListResponse.parse(await (await get(`${jobsUrl}?status=success`, { key })).json());
    expect(ok.data.map((j) => j.taskId)).toEqual([good.task.taskId]);
    const after = jobListResponse.parse(await (await get(`${jobsUrl}?createdAfter=${encodeURIComponent(bad.task.createdAt)}`, { key })).json());
    expect(after.data.map((j) => j.taskId)).not.toContain(bad.task.taskId);
    const future = jobListResponse.parse(await (await get(`${jobsUrl}?createdAfter=2999-01-01T00:00:00Z`, { key })).json());
    expect(future.data).toHaveLength(0);
    // Other accounts' jobs never appear.
    const stranger = jobListResponse.parse(await (await get(jobsUrl, { key: newAccount(server).key })).json());
    expect(stranger.data).toHaveLength(0);
  });

  it('400 for limit outside 1..100, a bad status or a bad createdAfter', async () => {
    for (const q of ['limit=0', 'limit=101', 'status=done', 'createdAfter=yesterday', 'page=0', 'offset=-1']) {
      const res = await get(`${jobsUrl}?${q}`);
      expect(res.status, q).toBe(400);
      expect((await errorOf(res)).code).toBe('invalid_request');
    }
  });
});

describe('flat tasks (/tts/tasks)', () => {
  it('create -> {taskId, status, creditsCharged}; detail of spec 2.5 with states pending..succeeded', async () => {
    const { key, userId } = newAccount(server);
    const res = await post(tasksUrl, { text: 'Flat task.', voiceId: VOICE, format: 'wav' }, { key });
    expect(res.status).toBe(202);
    const created = flatCreateResponse.parse(await res.json());
    expect(created).toEqual({ taskId: created.taskId, status: 'pending', creditsCharged: 10 });
    expect(creditsOf(server, userId)).toBe(1_000_000 - 10);
    const detail = await until(
      async () => flatTaskDoc.parse(await (await get(`${tasksUrl}/${created.taskId}`, { key })).json()),
      (t) => t.status === 'succeeded' || t.status === 'failed',
    );
    expect(detail).toMatchObject({ taskId: created.taskId, type: 'tts', status: 'succeeded', text: 'Flat task.', voiceId: VOICE, engineModelId: MODEL, errorCode: null, errorMessage: null, creditsCharged: 10 });
    expect(detail.id).not.toBe(detail.taskId);
    expect(detail.audioUrl).toBe(`${server.rootUrl}/api/open/tts/jobs/${created.taskId}/audio`);
    expect(Date.parse(detail.startedAt!)).toBeLessThanOrEqual(Date.parse(detail.completedAt!));
    // The same task in the envelope shape.
    expect((await readJob(key, created.taskId)).task.status).toBe('success');
  });

  it('failed with errorCode and refunded', async () => {
    const { key, userId } = newAccount(server);
    server.faults.set({ engineFailure: { match: 'FLAT-FAIL' } });
    const created = flatCreateResponse.parse(await (await post(tasksUrl, { text: 'FLAT-FAIL', voiceId: VOICE }, { key })).json());
    const detail = await until(
      async () => flatTaskDoc.parse(await (await get(`${tasksUrl}/${created.taskId}`, { key })).json()),
      (t) => t.status === 'failed' || t.status === 'succeeded',
    );
    expect(detail).toMatchObject({ status: 'failed', errorCode: 'generation_failed', audioUrl: null, creditsCharged: 0 });
    expect(detail.errorMessage).toBeTruthy();
    expect(creditsOf(server, userId)).toBe(1_000_000);
  });

  it('lists {data, pagination{limit, offset, hasMore}} with offset and status', async () => {
    const { key } = newAccount(server);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(flatCreateResponse.parse(await (await post(tasksUrl, { text: `Flat ${i}.`, voiceId: VOICE, format: 'wav' }, { key })).json()).taskId);
    const list = flatListResponse.parse(await (await get(`${tasksUrl}?limit=2&offset=1`, { key })).json());
    expect(list.data.map((t) => t.taskId)).toEqual([ids[1], ids[0]]);
    expect(list.pagination).toEqual({ limit: 2, offset: 1, hasMore: false });
    const first = flatListResponse.parse(await (await get(`${tasksUrl}?limit=1`, { key })).json());
    expect(first.pagination).toEqual({ limit: 1, offset: 0, hasMore: true });
    for (const id of ids) await taskRunnerOf(server.ctx, 'tts')!.settled(id);
    const succeeded = flatListResponse.parse(await (await get(`${tasksUrl}?status=succeeded`, { key })).json());
    expect(succeeded.data).toHaveLength(3);
    const pending = flatListResponse.parse(await (await get(`${tasksUrl}?status=pending`, { key })).json());
    expect(pending.data).toHaveLength(0);
  });

  it('404 for another account’s task', async () => {
    const owner = newAccount(server);
    const created = flatCreateResponse.parse(await (await post(tasksUrl, { text: 'Mine.', voiceId: VOICE, format: 'wav' }, { key: owner.key })).json());
    expect((await get(`${tasksUrl}/${created.taskId}`, { key: newAccount(server).key })).status).toBe(404);
  });
});

describe('downloads (GET /api/open/tts/jobs/{taskId}/audio)', () => {
  it('needs the Bearer key, redirects to a signed URL, and gives an attachment with download=1', async () => {
    const { key } = newAccount(server);
    const created = await createJob(key, { text: 'Download me. Twice.', format: 'wav' });
    const done = await settled(key, created.task.taskId);
    const noKey = await get(done.task.audioUrl!, { key: null });
    expect(noKey.status).toBe(401);
    expect((await errorOf(noKey)).code).toBe('unauthorized');
    const other = await get(done.task.audioUrl!, { key: newAccount(server).key });
    expect(other.status).toBe(404);

    const redirect = await get(done.task.delivery.downloadUrl!, { key, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location).toContain('sig=');
    const file = await get(location, { key: null });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.wav"$/);
    const inline = await get(done.task.delivery.playbackUrl!, { key });
    expect(inline.status).toBe(200);
    expect(inline.headers.get('content-disposition')).toMatch(/^inline/);
    const bytes = Buffer.from(await inline.arrayBuffer());
    expect(parseWavHeader(bytes)!.dataBytes).toBe(bytes.length - parseWavHeader(bytes)!.dataOffset);

    // Segment playback URLs need the key too.
    const segmentUrl = done.task.segments[1]!.playbackUrl!;
    expect((await get(segmentUrl, { key: null })).status).toBe(401);
    expect((await get(segmentUrl, { key: newAccount(server).key })).status).toBe(404);
    const segment = await get(segmentUrl, { key });
    expect(segment.status).toBe(200);
    expect(parseWavHeader(Buffer.from(await segment.arrayBuffer()))).toBeDefined();
    expect((await get(`${server.rootUrl}/api/open/tts/jobs/${created.task.taskId}/segments/9/audio`, { key })).status).toBe(404);
  });

  it('404 while the audio is not ready', async () => {
    const { key } = newAccount(server);
    server.faults.set({ latencyMs: 10 });
    try {
      const created = await createJob(key, { text: 'Not yet ready.' });
      const res = await get(`${server.rootUrl}/api/open/tts/jobs/${created.task.taskId}/audio`, { key });
      expect(res.status).toBe(404);
      await settled(key, created.task.taskId);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
  });

  it('refuses an API key in the URL', async () => {
    const { key } = newAccount(server);
    const created = await createJob(key, { text: 'Key in URL.' });
    const done = await settled(key, created.task.taskId);
    expect((await get(`${done.task.audioUrl}?token=${key}`, { key: null })).status).toBe(401);
  });
});
