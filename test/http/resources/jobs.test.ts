/** Async TTS jobs over real HTTP against the reference server, both route families (spec 2.4, 2.5, 4.3). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/errors.js';
import { createClient, textFingerprint, TtsJobFamily, type VoxpipeClient } from '../../../src/http/index.js';
import type { TtsJob } from '../../../src/http/resources/jobs.js';
import { parseWavHeader } from '../../../src/sinks/wav-header.js';
import { dialectOf, startServer, type ReferenceServer } from '../../../src/server/index.js';
import { failingRequests, isPost, losingResponses } from '../lossy-fetch.js';

const FAST_POLL = { intervalMs: 20, maxIntervalMs: 50 };
/**
 * The shape `/speech/tts/jobs` answers in the dialect this suite runs under
 * (envelope in ours, flat or minimal in others, spec 4.3); `/tts/tasks` is
 * always flat. Assertions about one shape's own fields are kept to it.
 */
const SHAPE = dialectOf().jobShape;

let server: ReferenceServer;
let client: VoxpipeClient;
let voiceId: string;
const credits = () => server.ctx.store.accounts.get('local-dev')!.credits;

function clientWith(extra: Parameters<typeof createClient>[0] = {}): VoxpipeClient {
  return createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, initialRetryDelayMs: 1, poll: FAST_POLL, ...extra });
}

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  client = clientWith();
  voiceId = (await client.voices.list().catch(async () => (await client.compat.voices()).map((v) => ({ voiceId: v.id }))))[0]!.voiceId;
});
afterAll(async () => {
  await server.close();
});

describe.each([TtsJobFamily.jobs, TtsJobFamily.tasks])('jobs (%s family)', (family) => {
  const jobs = () => client.jobs.using(family);

  it('create, get, wait, download: one normalised TtsJob type', async () => {
    const text = `Job in the ${family} family. Two sentences here.`;
    const created = await jobs().create({ text, voiceId, format: 'wav' });
    expect(created.id).toBeTruthy();
    expect(created.family).toBe(family);
    expect(['queued', 'pending', 'processing', 'succeeded']).toContain(created.status);
    const shape = family === 'jobs' ? SHAPE : 'flat';
    if (shape !== 'minimal') expect(created.creditsCharged).toBeGreaterThan(0);

    const statuses: string[] = [];
    const done = await jobs().wait(created.id, { onProgress: (e) => statuses.push(e.status) });
    expect(done.status).toBe('succeeded');
    expect(done.rawStatus).toBe(shape === 'envelope' ? 'success' : 'succeeded');
    if (shape !== 'minimal') {
      expect(done.voiceId).toBe(voiceId);
      expect(done.engineModelId).toBeTruthy();
    }
    expect(done.audioUrl).toBeTruthy();
    expect(statuses.at(-1)).toBe('succeeded');

    const got = await jobs().get(created.id);
    expect(got.id).toBe(created.id);
    if (shape === 'flat') {
      expect(got.text).toBe(text);
      expect(got.rowId).toBeTruthy();
    } else if (shape === 'envelope') {
      expect(got.downloadReady).toBe(true);
      expect(got.downloadUrl).toContain('download=1');
    }
    expect(got.textFingerprint ?? textFingerprint(text)).toBe(textFingerprint(text));

    const file = await jobs().download(created.id);
    expect(parseWavHeader(file.data)?.dataBytes).toBeGreaterThan(0);
    const attachment = await jobs().download(got, { download: true });
    expect(attachment.headers?.get('content-disposition')).toMatch(/^attachment/);
    expect(attachment.data.equals(file.data)).toBe(true);
  });

  it('a JobHandle iterates status changes and downloads the result', async () => {
    const created = await jobs().create({ text: 'Handle me.', voiceId, format: 'mp3' });
    const handle = jobs().handle(created);
    const seen: string[] = [];
    for await (const event of handle) seen.push(event.status);
    expect(seen.at(-1)).toBe('succeeded');
    expect(new Set(seen).size).toBe(seen.length); // one event per status change
    const file = await handle.download();
    expect(file.contentType).toBe('audio/mpeg');
  });
});

describe('jobs list', () => {
  const made: TtsJob[] = [];
  let since = '';
  let lister: VoxpipeClient;
  beforeAll(async () => {
    // An account of its own: the list holds exactly the jobs made here.
    server.addAccount({ apiKey: 'sk-list-account-1', userId: 'lister' });
    lister = createClient({ apiKey: 'sk-list-account-1', baseUrl: server.baseUrl, poll: FAST_POLL });
    since = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 3; i++) made.push(await lister.jobs.create({ text: `List item ${i}.`, voiceId }));
    await Promise.all(made.map((j) => lister.jobs.wait(j.id)));
  });

  it.runIf(SHAPE === 'envelope')('lists newest first with page pagination and never the full text (jobs family)', async () => {
    const page1 = await lister.jobs.list({ limit: 2, page: 1, createdAfter: since });
    expect(page1.items).toHaveLength(2);
    expect(page1.hasMore).toBe(true);
    expect(page1.nextPage).toBe(2);
    expect(page1.items[0]!.id).toBe(made[2]!.id);
    expect(page1.items[0]!.text).toBeUndefined();
    expect(page1.items[0]!.textPreview).toBe('List item 2.');
    expect(page1.items[0]!.textFingerprint).toBe(textFingerprint('List item 2.'));
    const page2 = await lister.jobs.list({ limit: 2, page: 2, createdAfter: since });
    expect(page2.items.map((j) => j.id)).toEqual([made[0]!.id]);
    expect(page2.hasMore).toBe(false);
  });

  it.runIf(SHAPE !== 'envelope')('lists newest first with offset pagination where the jobs route answers the flat or minimal shape', async () => {
    const page1 = await lister.jobs.list({ limit: 2, offset: 0, createdAfter: since });
    expect(page1.items.map((j) => j.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(page1.hasMore).toBe(true);
    const page2 = await lister.jobs.list({ limit: 2, offset: 2, createdAfter: since });
    expect(page2.items.map((j) => j.id)).toEqual([made[0]!.id]);
    expect(page2.hasMore).toBe(false);
  });

  it('translates a normalised status filter to each family spelling', async () => {
    const ok = await lister.jobs.list({ status: 'succeeded', createdAfter: since });
    expect(ok.items).toHaveLength(3);
    expect(ok.items.every((j) => j.status === 'succeeded')).toBe(true);
    const flat = await lister.jobs.using('tasks').list({ status: 'succeeded', limit: 1, offset: 1 });
    expect(flat.items).toHaveLength(1);
    expect(flat.offset).toBe(1);
    const failed = await lister.jobs.list({ status: 'failed', createdAfter: since });
    expect(failed.items).toEqual([]);
  });

  it('answers 404 for another account’s job, and for its audio', async () => {
    server.addAccount({ apiKey: 'sk-other-account-1', userId: 'other' });
    const other = createClient({ apiKey: 'sk-other-account-1', baseUrl: server.baseUrl });
    await expect(other.jobs.get(made[0]!.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.jobs.download(made[0]!.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe.runIf(SHAPE === 'minimal')('jobs.createOrRecover where the list cannot identify a job (minimal shape)', () => {
  it('refuses to resubmit blindly after a lost 202: recovery_unavailable, exactly one job made', async () => {
    const lossy = losingResponses(isPost('/speech/tts/jobs'));
    const c = clientWith({ fetch: lossy });
    const before = (await client.jobs.list({ limit: 100 })).items.length;
    await expect(c.jobs.createOrRecover({ text: `Minimal ${Date.now()}.`, voiceId })).rejects.toMatchObject({ code: 'recovery_unavailable' });
    expect(lossy.lost).toBe(1);
    expect((await client.jobs.list({ limit: 100 })).items.length).toBe(before + 1);
  });

  it('with an Idempotency-Key the caller vouches for, the create is resent under it: one job', async () => {
    const lossy = losingResponses(isPost('/speech/tts/jobs'));
    const c = clientWith({ fetch: lossy });
    const before = (await client.jobs.list({ limit: 100 })).items.length;
    const { job } = await c.jobs.createOrRecover({ text: `Keyed ${Date.now()}.`, voiceId }, { idempotencyKey: `key-${Date.now()}` });
    expect(lossy.lost).toBe(1);
    expect((await c.jobs.wait(job.id)).status).toBe('succeeded');
    const after = (await client.jobs.list({ limit: 100 })).items;
    expect(after.length).toBe(before + 1);
    expect(after.filter((j) => j.id === job.id)).toHaveLength(1);
  });
});

describe.runIf(SHAPE !== 'minimal')('jobs.createOrRecover', () => {
  it('after a lost 202 finds the job in the list instead of creating a second one', async () => {
    const lossy = losingResponses(isPost('/speech/tts/jobs'));
    const c = clientWith({ fetch: lossy });
    const text = `Recover me ${Date.now()}.`;
    const before = credits();
    const { job, recovered, resubmitted } = await c.jobs.createOrRecover({ text, voiceId });
    expect(lossy.lost).toBe(1);
    expect(recovered).toBe(true);
    expect(resubmitted).toBe(false);
    const all = (await client.jobs.list({ limit: 100 })).items.filter((j) => j.textFingerprint === textFingerprint(text));
    expect(all.map((j) => j.id)).toEqual([job.id]);
    expect(before - credits()).toBe(all[0]!.creditsCharged);
    expect((await c.jobs.wait(job.id)).status).toBe('succeeded');
  });

  it('submits again when the lost request never reached the server, creating exactly one job', async () => {
    const failing = failingRequests(isPost('/speech/tts/jobs'));
    const c = clientWith({ fetch: failing });
    const text = `Never arrived ${Date.now()}.`;
    const { job, recovered, resubmitted } = await c.jobs.createOrRecover({ text, voiceId });
    expect(failing.failed).toBe(1);
    expect(recovered).toBe(false);
    expect(resubmitted).toBe(true);
    const all = (await client.jobs.list({ limit: 100 })).items.filter((j) => j.textFingerprint === textFingerprint(text));
    expect(all.map((j) => j.id)).toEqual([job.id]);
  });

  it('does not take an older job with the same text for the lost one', async () => {
    const text = `Same text twice ${Date.now()}.`;
    const older = await client.jobs.create({ text, voiceId });
    const lossy = losingResponses(isPost('/speech/tts/jobs'));
    // No clock skew allowance: only jobs created from now on may match.
    const { job, recovered } = await clientWith({ fetch: lossy }).jobs.createOrRecover({ text, voiceId }, { clockSkewMs: 0 });
    expect(recovered).toBe(true);
    expect(job.id).not.toBe(older.id);
  });

  it('never resubmits when the list cannot be read', async () => {
    let posts = 0;
    const broken: typeof fetch = async (input, init) => {
      const url = String(input);
      if (init?.method === 'POST') {
        posts++;
        await (await fetch(input, init)).arrayBuffer();
        throw new TypeError('fetch failed');
      }
      if (new URL(url).pathname.endsWith('/speech/tts/jobs')) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const c = createClient({ apiKey: 'sk-local-dev', baseUrl: server.baseUrl, fetch: broken, maxRetries: 0 });
    await expect(c.jobs.createOrRecover({ text: `No list ${Date.now()}.`, voiceId })).rejects.toMatchObject({ code: 'connection_failed' });
    expect(posts).toBe(1);
  });
});
