import { access, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parseWavHeader } from '../../src/sinks/wav-header.js';
import { dialectOf, startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';
import { json, startFakeServer } from '../http/fake-server.js';

const exists = (path: string) => access(path).then(() => true, () => false);

let server: ReferenceServer;
let dir: string;
beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-jobs-'));
});
afterAll(() => server.close());
const env = () => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: 'sk-local-dev' });

describe('voxpipe jobs', () => {
  it('create --out waits, downloads a WAV (format from the extension), and get/list/download agree', async () => {
    const out = join(dir, 'job.wav');
    const io = fakeIo(env());
    expect(await main(['jobs', 'create', 'An asynchronous job. It has two sentences.', '--out', out, '--interval-ms', '20', '--json'], io)).toBe(0);
    const job = JSON.parse(io.out());
    expect(job).toMatchObject({ status: 'succeeded' });
    // Fields of the envelope shape, which the jobs route answers in our dialect (others answer flat or minimal, spec 4.3).
    if (dialectOf().jobShape === 'envelope') expect(job).toMatchObject({ characters: 42, creditsCharged: 42, downloadReady: true });
    const wav = await readFile(out);
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.subarray(8, 12).toString()).toBe('WAVE');

    const get = fakeIo(env());
    expect(await main(['jobs', 'get', job.taskId, '--json'], get)).toBe(0);
    expect(JSON.parse(get.out())).toMatchObject({ taskId: job.taskId, status: 'succeeded' });

    const list = fakeIo(env());
    expect(await main(['jobs', 'list', '--json', '--limit', '5'], list)).toBe(0);
    expect(JSON.parse(list.out()).items.map((j: { taskId: string }) => j.taskId)).toContain(job.taskId);

    const again = join(dir, 'again.wav');
    expect(await main(['jobs', 'download', job.taskId, '--out', again], fakeIo(env()))).toBe(0);
    expect((await readFile(again)).equals(wav)).toBe(true);
  });

  it('download --out x.wav of an mp3 job writes a WAV (the file holds what its name says)', async () => {
    const io = fakeIo(env());
    expect(await main(['jobs', 'create', 'An mp3 job for a WAV file.', '--format', 'mp3', '--wait', '--interval-ms', '20', '--json'], io)).toBe(0);
    const job = JSON.parse(io.out());
    const out = join(dir, 'converted.wav');
    const dl = fakeIo(env());
    expect(await main(['jobs', 'download', job.taskId, '--out', out], dl)).toBe(0);
    expect(dl.err()).toMatch(/converted from the job's mp3/);
    const wav = await readFile(out);
    const header = parseWavHeader(wav);
    expect(header?.pcm.sampleRate).toBeGreaterThan(0);
    expect(header?.dataBytes).toBeGreaterThan(1_000);
    expect(wav.length).toBe(header!.dataOffset + header!.dataBytes! + (header!.dataBytes! % 2));
  });

  it('create --out on a job that ends failed reports the error code the job gives and writes nothing', async () => {
    server.faults.set({ engineFailure: { match: 'This job is made to fail', times: 5 } });
    try {
      const out = join(dir, 'failed.wav');
      const io = fakeIo(env());
      expect(await main(['jobs', 'create', 'This job is made to fail.', '--out', out, '--interval-ms', '20', '--json'], io)).toBe(1);
      expect(io.err()).toMatch(/^voxpipe: error generation_failed: task \S+ fail(ed)?/m);
      expect(io.err()).not.toMatch(/not_found/);
      expect(JSON.parse(io.out())).toMatchObject({ status: 'failed', errorCode: 'generation_failed' });
      expect(await exists(out)).toBe(false);
    } finally {
      server.faults.clear();
    }
  });

  it("a deployment's own failure code, in any spelling, is the error; the audio is never asked for", async () => {
    for (const failure of [{ error_code: 'voice_retired', error_message: 'the voice was retired' }, { error: { code: 'provider_quota', message: 'upstream quota' } }]) {
      const fake = await startFakeServer((req, res) => {
        if (req.method === 'POST') return json(res, 202, { taskId: 'job-1', status: 'queued' });
        if (req.url.startsWith('/api/open/v1/speech/tts/jobs/job-1')) return json(res, 200, { taskId: 'job-1', status: 'failed', ...failure });
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.alloc(100));
      });
      try {
        const out = join(dir, 'foreign-failed.wav');
        const io = fakeIo({ VOXPIPE_BASE_URL: fake.baseUrl, VOXPIPE_API_KEY: 'sk-fake-jobs-key' });
        expect(await main(['jobs', 'create', 'Text.', '--voice', 'v1', '--out', out, '--interval-ms', '10'], io)).toBe(1);
        const code = 'error_code' in failure ? failure.error_code : failure.error.code;
        expect(io.err()).toMatch(new RegExp(`^voxpipe: error ${code}: task job-1 failed: `, 'm'));
        // The job's routes, and the voice list `--voice v1` is looked up in (a name or an id): never an audio route.
        expect(fake.requests.map((r) => r.url).filter((u) => !u.startsWith('/api/open/v1/speech/tts/jobs') && !u.startsWith('/api/open/v1/voices'))).toEqual([]);
        expect(await exists(out)).toBe(false);

        const dl = fakeIo({ VOXPIPE_BASE_URL: fake.baseUrl, VOXPIPE_API_KEY: 'sk-fake-jobs-key' });
        expect(await main(['jobs', 'download', 'job-1', '--out', out], dl)).toBe(1);
        expect(dl.err()).toMatch(new RegExp(`^voxpipe: error ${code}:`, 'm'));
        expect(await exists(out)).toBe(false);
      } finally {
        await fake.close();
      }
    }
  });

  it('an unknown job is a not_found error line', async () => {
    const io = fakeIo(env());
    expect(await main(['jobs', 'get', 'tts_nope'], io)).toBe(1);
    expect(io.err()).toMatch(/^voxpipe: error not_found/);
  });

  it('a missing action is a usage error', async () => {
    const io = fakeIo(env());
    expect(await main(['jobs'], io)).toBe(2);
  });
});
