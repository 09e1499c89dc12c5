import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ReferenceServer } from '../../../../src/server/index.js';
import { balances, call, HAS_FFMPEG, HAS_RECOGNIZER, newAccount, silenceWav, startInputServer, type InputServer } from '../../media-engines/helpers.js';

/** A server with the spec's rule: public URLs only (allowPrivateUrls off, the default). */
let server: ReferenceServer;
let inputs: InputServer;

beforeAll(async () => {
  server = await startServer({ engine: 'tone', port: 0 });
  inputs = await startInputServer();
  inputs.put('/a.wav', 'audio/wav', silenceWav(1));
});
afterAll(async () => {
  await server.close();
  await inputs.close();
});

const PRIVATE_URLS = [
  'http://127.0.0.1:9/a.wav',
  'http://localhost:9/a.wav',
  'http://[::1]:9/a.wav',
  'http://[::ffff:127.0.0.1]:9/a.wav',
  'http://10.1.2.3/a.wav',
  'http://172.16.0.9/a.wav',
  'http://192.168.1.20/a.wav',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/a.wav',
  'http://0.0.0.0/a.wav',
  'http://[fd00::1]/a.wav',
  'http://[fe80::1]/a.wav',
];

describe('input URLs on a server without allowPrivateUrls', () => {
  it.skipIf(!HAS_RECOGNIZER)('ASR refuses loopback, LAN and link-local URLs with 400, even those it would fetch later (needs pocketsphinx)', async () => {
    const { key, userId } = newAccount(server);
    for (const audioUrl of [...PRIVATE_URLS, inputs.url('/a.wav')]) {
      for (const body of [{ audioUrl }, { audioUrl, durationSeconds: 1 }]) {
        const res = await call('POST', `${server.baseUrl}/asr/tasks`, { key, body });
        expect(res.status, audioUrl).toBe(400);
        expect(res.json.error).toMatchObject({ code: 'invalid_request', field: 'audioUrl', reason: 'private_address' });
        expect(res.json.error.message).toMatch(/public URLs only/);
      }
    }
    expect(inputs.requests).toEqual([]);
    expect(balances(server, userId).credits).toBe(1_000_000);
  });

  it.skipIf(!HAS_RECOGNIZER)('ASR accepts a public host that does not resolve right now; the task then fails with an errorCode, refunded once (needs pocketsphinx)', async () => {
    const { key, userId } = newAccount(server);
    const res = await call('POST', `${server.baseUrl}/asr/tasks`, { key, body: { audioUrl: 'http://no-such-host.invalid/a.wav', durationSeconds: 1 } });
    expect(res.status).toBe(202);
    const taskId = res.json.taskId as string;
    expect(balances(server, userId).credits).toBeLessThan(1_000_000);
    let task: { status: string; errorCode: string | null } = { status: 'pending', errorCode: null };
    for (let i = 0; i < 200 && task.status !== 'failed' && task.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      task = (await call('GET', `${server.baseUrl}/asr/tasks/${taskId}`, { key })).json;
    }
    expect(task.status).toBe('failed');
    expect(task.errorCode).toBeTruthy();
    expect(balances(server, userId).credits).toBe(1_000_000);
    // Polling again does not refund twice.
    await call('GET', `${server.baseUrl}/asr/tasks/${taskId}`, { key });
    expect(balances(server, userId).credits).toBe(1_000_000);
  });

  it.skipIf(!HAS_FFMPEG)('lip-sync accepts a public host that does not resolve right now, as the other media routes do; the task then fails with an errorCode, refunded once (needs ffmpeg)', async () => {
    const { key, userId } = newAccount(server);
    const created = [
      await call('POST', `${server.baseUrl}/media/lip-sync/jobs`, { key, body: { video_url: 'http://no-such-host.invalid/v.mp4', audio_url: 'http://no-such-host.invalid/a.wav' } }),
      await call('POST', `${server.baseUrl}/lip-sync/tasks`, { key, body: { inputMode: 'image', imageUrl: 'https://no-such-host.invalid/f.png', audioUrl: 'https://no-such-host.invalid/a.wav', durationSeconds: 2 } }),
    ];
    expect(created.map((r) => r.status)).toEqual([202, 202]);
    expect(balances(server, userId).quota).toBeLessThan(1_000_000);
    const reads = [`${server.baseUrl}/media/lip-sync/jobs/${created[0]!.json.data.id as string}`, `${server.baseUrl}/lip-sync/tasks/${created[1]!.json.taskId as string}`];
    const failed = async (url: string) => {
      for (let i = 0; i < 400; i++) {
        const res = await call('GET', url, { key });
        const status = (res.json.data?.status ?? res.json.status) as string;
        if (status === 'failed') return res.json.data ?? res.json;
        if (status === 'completed' || status === 'succeeded') throw new Error(`${url} succeeded`);
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`${url} never failed`);
    };
    for (const url of reads) {
      const task = (await failed(url)) as { errorCode?: string | null; error_code?: string | null };
      expect(task.errorCode ?? task.error_code, url).toBe('media_fetch_failed');
    }
    expect(balances(server, userId).quota).toBe(1_000_000);
    for (const url of reads) await call('GET', url, { key });
    expect(balances(server, userId).quota).toBe(1_000_000);
  });

  it('image jobs and tasks refuse private image_url and reference URLs with 400', async () => {
    const { key, userId } = newAccount(server);
    const local = inputs.url('/a.png');
    const cases: [string, unknown, Record<string, string>][] = [
      [`${server.baseUrl}/media/images/jobs`, { prompt: 'x', generation_type: 'edit', image_url: local }, { 'idempotency-key': 'p1' }],
      [`${server.baseUrl}/media/images/jobs`, { prompt: 'x', reference_image_urls: ['http://192.168.0.1/r.png'] }, { 'idempotency-key': 'p2' }],
      [`${server.baseUrl}/images/tasks`, { prompt: 'x', referenceImageUrls: ['https://example.com/ok.png', 'http://[::1]/r.png'] }, {}],
    ];
    for (const [route, body, headers] of cases) {
      const res = await call('POST', route, { key, body, headers });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.reason).toMatch(/private_address|unresolvable/);
    }
    expect(balances(server, userId).quota).toBe(1_000_000);
  });

  it.skipIf(!HAS_FFMPEG)('video and lip-sync creates refuse private URLs with 400 (needs ffmpeg)', async () => {
    const { key } = newAccount(server);
    const local = inputs.url('/a.wav');
    const cases: [string, unknown, Record<string, string>][] = [
      [`${server.baseUrl}/media/videos/jobs`, { prompt: 'x', references: [{ role: 'start_frame', url: local }] }, { 'idempotency-key': 'v1' }],
      [`${server.baseUrl}/videos/tasks`, { prompt: 'x', firstFrameUrl: 'http://10.0.0.8/f.png' }, {}],
      [`${server.baseUrl}/media/lip-sync/jobs`, { video_url: local, audio_url: local }, {}],
      [`${server.baseUrl}/lip-sync/tasks`, { inputMode: 'image', imageUrl: local, audioUrl: local }, {}],
    ];
    for (const [route, body, headers] of cases) {
      const res = await call('POST', route, { key, body, headers });
      expect(res.status, route).toBe(400);
      expect(res.json.error.reason).toBe('private_address');
    }
    expect(inputs.requests).toEqual([]);
  });
});
