/**
 * The usual mistakes get a line that says what to do: a misspelt voice, a
 * wrong key, a missing file, a port fetch refuses, a clone clip too short.
 * Real reference server (tone engine) on port 0.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';
import { referenceWav } from '../server/rest/account/helpers.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-test-cli-clear-errors';
const env = (extra: Record<string, string> = {}) => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY, ...extra });

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u-clear', credits: 1_000_000, apiQuota: 1_000_000 }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-clear-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the usual mistakes', () => {
  it('a misspelt --voice: the near name and a pointer to voxpipe voices, before any audio', async () => {
    const list = (await (await fetch(`${server.baseUrl}/voices`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { data?: { name?: string }[] };
    const name = list.data?.map((v) => v.name).find((n): n is string => typeof n === 'string' && n.length >= 5);
    expect(name).toBeDefined();
    const typo = `${name!.slice(0, -1)}${name!.at(-1) === 'x' ? 'y' : 'x'}`;
    const io = fakeIo(env());
    expect(await main(['say', 'Hello.', '--voice', typo, '--out', join(dir, 'typo.wav')], io)).toBe(1);
    expect(io.err()).toContain(`did you mean ${JSON.stringify(name)}?`);
    expect(io.err()).toContain('voxpipe voices lists the voices');
  });

  it('a wrong key: the line names VOXPIPE_API_KEY (and not the key)', async () => {
    const io = fakeIo(env({ VOXPIPE_API_KEY: 'sk-not-the-right-one' }));
    expect(await main(['usage'], io)).toBe(1);
    expect(io.err()).toContain('check VOXPIPE_API_KEY');
    expect(io.err()).not.toContain('sk-not-the-right-one');
  });

  it('a missing input file: it does not exist, and where it was looked for; no ENOENT', async () => {
    for (const args of [['transcribe', join(dir, 'nope.wav')], ['voices', 'clone', 'Me', join(dir, 'nope.wav')]]) {
      const io = fakeIo(env());
      expect(await main(args, io)).toBe(2);
      expect(io.err()).toMatch(/nope\.wav does not exist \(in .+\); check the name/);
      expect(io.err()).not.toContain('ENOENT');
    }
  });

  it('port 9: a port fetch refuses, said plainly; not "bad port"', async () => {
    const io = fakeIo({ VOXPIPE_BASE_URL: 'http://127.0.0.1:9/api/open/v1', VOXPIPE_API_KEY: KEY });
    expect(await main(['say', 'Hello.', '--out', join(dir, 'port.wav')], io)).toBe(1);
    expect(io.err()).toMatch(/^voxpipe: error connection_failed: port 9 is one that fetch refuses to use .*give VOXPIPE_BASE_URL another port$/m);
    expect(io.err()).not.toContain('bad port');
  });

  it('voices clone of a 3 s clip: refused before any request, nothing charged', async () => {
    const clip = join(dir, 'short.wav');
    await writeFile(clip, await referenceWav(120, 'Three seconds only, please.'));
    const before = server.ctx.ledger.entriesOf('u-clear').length;
    const io = fakeIo(env());
    expect(await main(['voices', 'clone', 'Short', clip], io)).toBe(2);
    expect(io.err()).toMatch(/short\.wav lasts \d\.\d s; a clone takes 10 s to 5 min of speech/);
    expect(server.ctx.ledger.entriesOf('u-clear').length).toBe(before);
  });
});
