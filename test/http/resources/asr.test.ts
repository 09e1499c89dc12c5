/**
 * ASR tasks against a local fake serving the spec's documented shapes (2.6,
 * 4.4); the reference server's ASR routes are tested in its own suite.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/errors.js';
import { createClient, JobFailedError, type VoxpipeClient } from '../../../src/http/index.js';
import { json, startFakeServer, type FakeServer } from '../fake-server.js';

let server: FakeServer;
let client: VoxpipeClient;

beforeEach(async () => {
  server = await startFakeServer();
  client = createClient({ apiKey: 'sk-asr-test-0000', baseUrl: server.baseUrl, poll: { intervalMs: 1, maxIntervalMs: 2 } });
});
afterEach(async () => {
  await server.close();
});

const detail = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'row_1', taskId: 'asr_1', type: 'asr', status, audioUrl: 'https://cdn.example/a.wav', model: 'svc-asr-v1',
  errorCode: null, errorMessage: null, creditsCharged: 3, createdAt: '2025-01-01T00:00:00Z', startedAt: null, completedAt: null, ...extra,
});

describe('client.asr', () => {
  it('creates with the documented body and normalises the 202 response', async () => {
    server.handle((_req, res) => json(res, 202, { taskId: 'asr_1', status: 'pending', model: 'svc-asr-v1', creditsCharged: 3 }));
    const task = await client.asr.create({ audioUrl: 'https://cdn.example/a.wav', languageHints: ['en'], durationSeconds: 4.5 });
    expect(server.requests[0]!.url).toBe('/api/open/v1/asr/tasks');
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ audioUrl: 'https://cdn.example/a.wav', languageHints: ['en'], durationSeconds: 4.5 });
    expect(task).toMatchObject({ id: 'asr_1', status: 'pending', model: 'svc-asr-v1', creditsCharged: 3, family: 'tasks' });
  });

  it('a handle polls to succeeded and keeps an empty transcript (silence) as a result', async () => {
    server.handle((req, res, i) => {
      if (req.method === 'POST') return json(res, 202, { taskId: 'asr_1', status: 'pending', model: 'm', creditsCharged: 1 });
      return json(res, 200, i < 2 ? detail('processing') : detail('succeeded', { transcript: '' }));
    });
    const handle = await client.asr.submit({ audioUrl: 'https://cdn.example/silence.wav' });
    const statuses: string[] = [];
    for await (const e of handle) statuses.push(e.status);
    expect(statuses).toEqual(['pending', 'processing', 'succeeded']);
    const task = await handle.result();
    expect(task.transcript).toBe('');
    expect(task.rowId).toBe('row_1');
    expect(server.requests.slice(1).every((r) => r.url === '/api/open/v1/asr/tasks/asr_1')).toBe(true);
  });

  it('result() throws JobFailedError carrying the task error code', async () => {
    server.handle((_req, res) => json(res, 200, detail('failed', { errorCode: 'audio_unreachable', errorMessage: 'could not fetch audio' })));
    const err = await client.asr.handle('asr_1').result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err).toMatchObject({ code: 'audio_unreachable' });
  });

  it('lists with limit, offset and status, reading data and pagination', async () => {
    server.handle((_req, res) => json(res, 200, { data: [detail('succeeded', { transcript: 'hi' })], pagination: { limit: 1, offset: 2, hasMore: true } }));
    const page = await client.asr.list({ limit: 1, offset: 2, status: 'succeeded' });
    expect(server.requests[0]!.url).toBe('/api/open/v1/asr/tasks?limit=1&offset=2&status=succeeded');
    expect(page).toMatchObject({ hasMore: true, limit: 1, offset: 2 });
    expect(page.items[0]).toMatchObject({ id: 'asr_1', transcript: 'hi', status: 'succeeded' });
  });

  it('maps 404 to NotFoundError', async () => {
    server.handle((_req, res) => json(res, 404, { error: { code: 'not_found', message: 'task not found', requestId: 'req_x' } }));
    await expect(client.asr.get('nope')).rejects.toBeInstanceOf(NotFoundError);
  });
});
