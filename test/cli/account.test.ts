import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { DESIGN_CANDIDATES, DESIGN_CREDITS_PER_CANDIDATE } from '../../src/server/rest/account/settings.js';
import { fakeIo } from '../helpers/fake-io.js';
import { localServer, pitchOfWav, referenceWav } from '../server/rest/account/helpers.js';
import { ffprobe, HAS_FFMPEG } from '../server/media-engines/helpers.js';

/** Run a subcommand through the CLI's parser, as `voxpipe NAME ...argv` does: errors become one stderr line and an exit code. */
const cli = (name: string, argv: string[], io: Io): Promise<number> => main([name, ...argv], io);

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-cli-account-test';

beforeAll(async () => {
  server = await startServer({ engine: 'tone', allowPrivateUrls: true, accounts: [{ apiKey: KEY, userId: 'cli-user' }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-account-'));
});
afterAll(() => server.close());
const env = () => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY });

describe('voxpipe design → save → say → voices delete (one server)', () => {
  it('designs a voice from a prompt, previews it, saves it, speaks with it, and deletes it', async () => {
    const created = fakeIo(env());
    expect(await cli('design', ['create', 'a', 'very', 'deep', 'calm', 'male', 'voice', '--preview-text', 'Testing the preview.', '--json'], created)).toBe(0);
    const d = JSON.parse(created.out()) as { designId: string; candidates: { candidateId: string; parameters: { basePitchHz: number } }[]; billing: { creditsCharged: number } };
    expect(d.candidates).toHaveLength(DESIGN_CANDIDATES);
    expect(d.billing.creditsCharged).toBe(DESIGN_CANDIDATES * DESIGN_CREDITS_PER_CANDIDATE);
    const candidate = d.candidates[0]!;

    const previewPath = join(dir, 'preview.wav');
    const preview = fakeIo(env());
    expect(await cli('design', ['preview', d.designId, candidate.candidateId, '--out', previewPath], preview)).toBe(0);
    expect(preview.err()).toMatch(/wrote .*preview\.wav/);
    expect((await readFile(previewPath)).subarray(0, 4).toString()).toBe('RIFF');
    const mp3 = fakeIo(env());
    expect(await cli('design', ['preview', d.designId, candidate.candidateId, '--out', '-', '--format', 'mp3'], mp3)).toBe(0);
    expect(mp3.outBytes().length).toBeGreaterThan(1000);

    // The file holds what its name says: a .flac preview is FLAC (the WAV through ffmpeg), not WAV bytes.
    if (HAS_FFMPEG) {
      const flacPath = join(dir, 'preview.flac');
      const flac = fakeIo(env());
      expect(await cli('design', ['preview', d.designId, candidate.candidateId, '--out', flacPath], flac)).toBe(0);
      expect(flac.err()).toMatch(/converted from the preview's wav/);
      expect(ffprobe(await readFile(flacPath)).format.format_name).toBe('flac');
    }
    // A folder that does not exist: refused before any request.
    const nowhere = fakeIo(env());
    expect(await cli('design', ['preview', d.designId, candidate.candidateId, '--out', join(dir, 'no-such-dir', 'p.wav')], nowhere)).toBe(1);
    expect(nowhere.err()).toMatch(/output_unwritable/);

    const saved = fakeIo(env());
    expect(await cli('design', ['save', d.designId, candidate.candidateId, '--name', 'Narrator'], saved)).toBe(0);
    const voiceId = saved.out().trim();
    expect(voiceId).toMatch(/^voice_/);

    const listed = fakeIo(env());
    expect(await cli('voices', ['list', '--type', 'personal'], listed)).toBe(0);
    expect(listed.out()).toMatch(new RegExp(`^${voiceId}\\s+personal\\s+en-US\\s+\\S+\\s+Narrator$`, 'm'));

    const spoken = join(dir, 'said.wav');
    const said = fakeIo(env());
    expect(await cli('say', ['Spoken by a designed voice.', '--voice', voiceId, '--transport', 'sync', '--format', 'wav', '--out', spoken, '--json'], said)).toBe(0);
    const hz = pitchOfWav(await readFile(spoken));
    expect(Math.abs(Math.log2(hz / candidate.parameters.basePitchHz))).toBeLessThan(0.4);

    const deleted = fakeIo(env());
    expect(await cli('voices', ['delete', voiceId, '--json'], deleted)).toBe(0);
    expect(JSON.parse(deleted.out())).toMatchObject({ voiceId, deleted: true });
    const after = fakeIo(env());
    expect(await cli('voices', ['list', '--json'], after)).toBe(0);
    expect((JSON.parse(after.out()) as { items: { voiceId: string }[] }).items.map((v) => v.voiceId)).not.toContain(voiceId);
    const gone = fakeIo(env());
    expect(await cli('say', ['Still there?', '--voice', voiceId, '--transport', 'sync', '--format', 'wav', '--out', join(dir, 'gone.wav')], gone)).toBe(1);
    expect(gone.err()).toMatch(/voxpipe: error invalid_request/);
  });

  it('replays design create and save with the same --idempotency-key', async () => {
    const one = fakeIo(env());
    expect(await cli('design', ['create', 'bright female', '--idempotency-key', 'cli-design', '--json'], one)).toBe(0);
    const two = fakeIo(env());
    expect(await cli('design', ['create', 'bright female', '--idempotency-key', 'cli-design', '--json'], two)).toBe(0);
    const first = JSON.parse(one.out()) as { designId: string; candidates: { candidateId: string }[] };
    expect((JSON.parse(two.out()) as { designId: string }).designId).toBe(first.designId);
    const changed = fakeIo(env());
    expect(await cli('design', ['create', 'deep male', '--idempotency-key', 'cli-design'], changed)).toBe(1);
    expect(changed.err()).toMatch(/error idempotency_key_reused/);
    const args = ['save', first.designId, first.candidates[1]!.candidateId, '--name', 'Bright', '--idempotency-key', 'cli-save', '--json'];
    const s1 = fakeIo(env());
    const s2 = fakeIo(env());
    expect(await cli('design', args, s1)).toBe(0);
    expect(await cli('design', args, s2)).toBe(0);
    expect(JSON.parse(s2.out()).voiceId).toBe(JSON.parse(s1.out()).voiceId);
  });
});

describe('voxpipe voices', () => {
  it('lists public voices as a table by default and as one JSON line with --json', async () => {
    const table = fakeIo(env());
    expect(await cli('voices', [], table)).toBe(0);
    expect(table.out()).toMatch(/^6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01\s+public\s+en-US\s+svc-s21pro-flash\s+Ava$/m);
    const json = fakeIo(env());
    expect(await cli('voices', ['list', '--json', '--model', 'lyra-v2', '--type', 'public'], json)).toBe(0);
    expect(json.out().trim().split('\n')).toHaveLength(1);
    expect((JSON.parse(json.out()) as { items: { name: string }[] }).items.map((v) => v.name)).toEqual(['Ava', 'Ben', 'Dev', 'Elena']);
  });

  it('clones from a local file (multipart) and from a URL; a high reference gives a higher voice', async () => {
    const file = join(dir, 'high.wav');
    await writeFile(file, await referenceWav(250));
    const fromFile = fakeIo(env());
    expect(await cli('voices', ['clone', 'High', file, '--json'], fromFile)).toBe(0);
    const high = JSON.parse(fromFile.out()) as { voiceId: string; basePitchHz: number; gender: string };
    expect(high.gender).toBe('female');

    const ref = await referenceWav(100);
    const files = await localServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(ref));
    try {
      const url = `${files.url}/low.wav`;
      const fromUrl = fakeIo(env());
      expect(await cli('voices', ['clone', 'Low', url, '--language', 'en-GB'], fromUrl)).toBe(0);
      const lowId = fromUrl.out().trim();
      expect(lowId).toMatch(/^voice_/);
      expect(fromUrl.err()).toMatch(/cloned voice "Low": male/);
      const list = fakeIo(env());
      await cli('voices', ['list', '--json', '--type', 'personal'], list);
      const low = (JSON.parse(list.out()) as { items: { voiceId: string; basePitchHz: number; language: string }[] }).items.find((v) => v.voiceId === lowId)!;
      expect(low.language).toBe('en-GB');
      expect(high.basePitchHz).toBeGreaterThan(low.basePitchHz * 2);
    } finally {
      await files.close();
    }
  });

  it('usage errors exit 2, service errors exit 1 with the code first', async () => {
    expect(await cli('voices', ['clone', 'OnlyName'], fakeIo(env()))).toBe(2);
    expect(await cli('voices', ['delete'], fakeIo(env()))).toBe(2);
    expect(await cli('voices', ['rename'], fakeIo(env()))).toBe(2);
    expect(await cli('voices', ['clone', 'x', join(dir, 'missing.wav')], fakeIo(env()))).toBe(2);
    const publicDelete = fakeIo(env());
    expect(await cli('voices', ['delete', '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01'], publicDelete)).toBe(1);
    expect(publicDelete.err()).toMatch(/^voxpipe: error forbidden/);
    const unknown = fakeIo(env());
    expect(await cli('voices', ['delete', 'voice_nope'], unknown)).toBe(1);
    expect(unknown.err()).toMatch(/^voxpipe: error not_found/);
    expect(await cli('design', ['save', 'a', 'b'], fakeIo(env()))).toBe(2);
    expect(await cli('design', ['preview', 'a', 'b'], fakeIo(env()))).toBe(2);
    expect(await cli('design', ['create'], fakeIo(env()))).toBe(2);
  });
});

describe('voxpipe profile and usage', () => {
  it('profile shows the account; --webhook-url sets the webhook and prints the secret once', async () => {
    const shown = fakeIo(env());
    expect(await cli('profile', ['--json'], shown)).toBe(0);
    expect(JSON.parse(shown.out())).toMatchObject({ user_id: 'cli-user', tier: 'developer', webhookUrl: null });
    const set = fakeIo(env());
    expect(await cli('profile', ['--webhook-url', 'https://hooks.example.com/voxpipe', '--json'], set)).toBe(0);
    const body = JSON.parse(set.out()) as Record<string, string>;
    expect(body['webhookUrl']).toBe('https://hooks.example.com/voxpipe');
    expect(body['webhookSecret']).toBe(server.ctx.store.accounts.get('cli-user')!.webhookSecret);
    expect(set.err()).toMatch(/shown only now/);
    const bad = fakeIo(env());
    expect(await cli('profile', ['--webhook-url', 'ftp://nope'], bad)).toBe(1);
    expect(bad.err()).toMatch(/^voxpipe: error invalid_request/);
  });

  it('usage reports totals equal to what the account was charged, and the recent ledger', async () => {
    const io = fakeIo(env());
    expect(await cli('usage', ['--json', '--limit', '3'], io)).toBe(0);
    const summary = JSON.parse(io.out()) as { balance: { credits: number }; apiUsage: { totalCreditsCharged: number }; ledger: unknown[] };
    expect(summary.apiUsage.totalCreditsCharged).toBe(1_000_000 - summary.balance.credits);
    expect(summary.apiUsage.totalCreditsCharged).toBeGreaterThan(0);
    expect(summary.ledger).toHaveLength(3);
    expect(await cli('usage', ['--limit', '0'], fakeIo(env()))).toBe(2);
  });
});
