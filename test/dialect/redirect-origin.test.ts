/**
 * A drawn deployment whose downloads redirect to another origin (a
 * deployment may redirect to another path or host): the signed file is served
 * by a second listener on another port, as a CDN or a storage bucket would
 * serve it. The spec (4.3) says to follow the signed redirect; the key goes
 * to the service alone (spec 5; src/http/client.ts sends it only to the
 * service's origins), and that listener refuses a request that brings it.
 * So a client that leaked the key there would fail these tests, not pass
 * silently.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { describeDialect, dialectOf, startServer, type DialectName, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

const KEY = 'sk-test-redirect-origin';
const TEXT = 'An asynchronous job. Its audio is kept on another host.';

/** Seeds whose redirects draw another origin (the first test checks they still do), with two statuses: 308 keeps the method, 301 may not. */
const OTHER_HOST = ['redir7', 'redir2'] as const;

let dir: string;
let ours: ReferenceServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-redirect-'));
  ours = await startServer({ engine: 'tone', dialect: 'reference', accounts: [{ apiKey: KEY, userId: 'u1' }] });
});
afterAll(() => ours.close());

async function createJob(server: ReferenceServer, out: string): Promise<{ code: number; err: string; job: Record<string, unknown> }> {
  const io = fakeIo({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY });
  const code = await main(['jobs', 'create', TEXT, '--out', out, '--interval-ms', '20', '--json'], io);
  return { code, err: io.err(), job: code === 0 ? (JSON.parse(io.out()) as Record<string, unknown>) : {} };
}

describe.each(OTHER_HOST)('redirects to another origin (random:%s:only=redirects)', (seed) => {
  const name = `random:${seed}:only=redirects` as DialectName;
  const draw = `\n  ${describeDialect(name)}\n`;
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startServer({ engine: 'tone', dialect: name, accounts: [{ apiKey: KEY, userId: 'u1' }] });
  });
  afterAll(() => server.close());

  it('the seed draws it: Location is absolute on another origin; the file is there without the key, refused with it', async () => {
    expect(dialectOf(name).wire.redirectHost, draw).toBe('other');
    const io = fakeIo({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY });
    expect(await main(['jobs', 'create', TEXT, '--format', 'wav', '--wait', '--interval-ms', '20', '--json'], io), io.err()).toBe(0);
    const taskId = String((JSON.parse(io.out()) as Record<string, unknown>)['taskId']);
    const hop = await fetch(`${server.rootUrl}/api/open/tts/jobs/${taskId}/audio`, { headers: { authorization: `Bearer ${KEY}` }, redirect: 'manual' });
    expect(hop.status, draw).toBe(dialectOf(name).wire.redirectStatus);
    const location = new URL(hop.headers.get('location')!);
    expect(location.origin, draw).not.toBe(new URL(server.rootUrl).origin);
    expect(location.hostname).toBe('127.0.0.1');
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).subarray(0, 4).toString('latin1')).toBe('RIFF');
    const withKey = await fetch(location, { headers: { authorization: `Bearer ${KEY}` } });
    expect(withKey.status).toBe(403);
    expect(await withKey.text()).not.toContain(KEY);
  });

  it('jobs create --out follows it and writes the same audio as our dialect, the key kept at home', async () => {
    const expected = await createJob(ours, join(dir, `${seed}-ours.wav`));
    expect(expected.code, expected.err).toBe(0);
    const got = await createJob(server, join(dir, `${seed}-drawn.wav`));
    expect(got.code, `exit code, stderr: ${got.err}${draw}`).toBe(0);
    expect(got.job['status']).toBe('succeeded');
    const [a, b] = await Promise.all([readFile(join(dir, `${seed}-ours.wav`)), readFile(join(dir, `${seed}-drawn.wav`))]);
    expect(b.length, `bytes written${draw}`).toBe(a.length);
    expect(b.equals(a), `the audio differs from our dialect's${draw}`).toBe(true);
  });
});
