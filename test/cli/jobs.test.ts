import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parseWavHeader } from '../../src/sinks/wav-header.js';
import { dialectOf, startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

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
