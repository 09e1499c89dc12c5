/**
 * Human output by default (short lines and tables, no
 * pretty-printed JSON), one JSON vocabulary with --json (`items` for every
 * list), and `--voice` taking a voice's name. Real reference server on port 0.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-cli-output-test';
const BEN = '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a02';

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'out-user' }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-output-'));
});
afterAll(() => server.close());
const env = () => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY });

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIo(env());
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe('human output by default', () => {
  it.each([['profile'], ['usage'], ['voices'], ['jobs', 'list'], ['design', 'create', 'a calm narrator']])('%s prints short lines, not JSON', async (...argv) => {
    if (argv[0] === 'jobs') expect((await run('jobs', 'create', 'One small job.', '--wait', '--interval-ms', '20')).code).toBe(0);
    const r = await run(...argv);
    expect(r.code).toBe(0);
    expect(r.out.trimStart()).not.toMatch(/^[{[]/);
    expect(r.out).not.toMatch(/^\s+"/m);
    expect(r.out.trim().split('\n').length).toBeLessThanOrEqual(12);
  });

  it('design create names the next commands and no preview URL', async () => {
    const r = await run('design', 'create', 'a bright voice');
    expect(r.out).toMatch(/voxpipe design preview vdesign_\S+ CANDIDATE --out/);
    expect(r.out).not.toContain('http');
  });
});

describe('one JSON vocabulary', () => {
  it('every list is { items } with --json', async () => {
    const voices = JSON.parse((await run('voices', '--json')).out) as { items: { voiceId: string }[] };
    expect(voices.items.map((v) => v.voiceId)).toContain(BEN);
    const jobs = JSON.parse((await run('jobs', 'list', '--json')).out) as { items: unknown[] };
    expect(Array.isArray(jobs.items)).toBe(true);
  });
});

describe('--voice by name', () => {
  it('say --voice Ben speaks with the voice named Ben', async () => {
    const r = await run('say', 'Hello Ben.', '--voice', 'Ben', '--out', join(dir, 'ben.pcm'), '--json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).segments).toBe(1);
  });

  it('an ambiguous name is a usage error listing the candidates', async () => {
    const created = JSON.parse((await run('design', 'create', 'a deep voice', '--json')).out) as { designId: string; candidates: { candidateId: string }[] };
    expect((await run('design', 'save', created.designId, created.candidates[0]!.candidateId, '--name', 'Ben')).code).toBe(0);
    const r = await run('say', 'Which Ben?', '--voice', 'ben', '--out', join(dir, 'which.pcm'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/invalid_arguments: --voice "ben" names 2 voices: .*6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a02/);
  });
});
