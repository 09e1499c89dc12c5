import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';
import { TONE_RATE, withoutDeploymentNotes } from '../helpers/dialect.js';
import { has } from '../helpers/needs.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-test-cli-say';
const hasEspeak = has('espeak');

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u1' }, { apiKey: 'sk-test-empty', userId: 'u2', apiQuota: 0, credits: 0 }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-say-'));
});
afterAll(async () => {
  await server.close();
});

const env = (key = KEY) => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: key });

describe('voxpipe say', () => {
  it('--format pcm --out x.pcm --json: one summary line whose bytes equals the file size', async () => {
    const out = join(dir, 'x.pcm');
    const io = fakeIo(env());
    const code = await main(['say', 'Hello from voxpipe. A second sentence follows here.', '--format', 'pcm', '--out', out, '--json'], io);
    expect(withoutDeploymentNotes(io.err())).toBe('');
    expect(code).toBe(0);
    const lines = io.out().trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]!);
    const size = (await stat(out)).size;
    expect(summary.bytes).toBe(size);
    expect(size).toBeGreaterThan(0);
    expect(summary).toMatchObject({ transport: 'realtime', mode: 'reliable', format: 'pcm', sampleRate: TONE_RATE, retries: 0, resumed: 0 });
    expect(summary.segments).toBeGreaterThanOrEqual(1);
    expect(summary.units).toBe('Hello from voxpipe. A second sentence follows here.'.length);
    for (const k of ['requestId', 'ttfaMs', 'totalMs']) expect(summary).toHaveProperty(k);
  });

  it('--out x.wav from pcm audio: bytes is the WAV file size (header included), audioBytes the audio received', async () => {
    const out = join(dir, 'container.wav');
    const io = fakeIo(env());
    expect(await main(['say', 'A short line for a WAV file.', '--format', 'pcm', '--out', out, '--json'], io)).toBe(0);
    const summary = JSON.parse(io.out());
    const size = (await stat(out)).size;
    expect(summary.bytes).toBe(size);
    expect(summary.audioBytes).toBeGreaterThan(0);
    expect(size).toBe(44 + summary.audioBytes + (summary.audioBytes % 2));
  });

  it('resumes after close 1012 mid-stream: same bytes as the fault-free run, and the summary counts it', async () => {
    const text = 'A sentence before the fault. Another one while it happens. And a last one after it.';
    const clean = join(dir, 'clean.pcm');
    const cut = join(dir, 'cut.pcm');
    expect(await main(['say', text, '--out', clean], fakeIo(env()))).toBe(0);
    server.faults.set({ realtimeClose: { afterAudioFrames: 4, code: 1012 } });
    const io = fakeIo(env());
    const code = await main(['say', text, '--out', cut, '--json'], io);
    server.faults.clear();
    expect(code).toBe(0);
    const summary = JSON.parse(io.out());
    expect(summary.retries).toBeGreaterThanOrEqual(1);
    expect(summary.resumed).toBeGreaterThanOrEqual(1);
    expect(summary.transport).toBe('realtime');
    expect((await readFile(cut)).equals(await readFile(clean))).toBe(true);
  });

  it('writes a valid WAV with --out file.wav, and the same audio as pcm', async () => {
    const wav = join(dir, 'a.wav');
    const pcm = join(dir, 'a.pcm');
    expect(await main(['say', 'Same text both times.', '--out', wav], fakeIo(env()))).toBe(0);
    expect(await main(['say', 'Same text both times.', '--out', pcm], fakeIo(env()))).toBe(0);
    const w = await readFile(wav);
    const p = await readFile(pcm);
    expect(w.subarray(0, 4).toString()).toBe('RIFF');
    expect(w.readUInt32LE(40)).toBe(p.length);
    expect(w.readUInt32LE(24)).toBe(TONE_RATE);
    expect(w.subarray(44).equals(p)).toBe(true);
  });

  it('--out - writes the audio to stdout (a streaming WAV header, then the PCM) and nothing else', async () => {
    const io = fakeIo(env());
    expect(await main(['say', 'Standard output only.', '--out', '-'], io)).toBe(0);
    const pcm = join(dir, 'b.pcm');
    await main(['say', 'Standard output only.', '--out', pcm], fakeIo(env()));
    expect(io.outBytes().subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(io.outBytes().subarray(44).equals(await readFile(pcm))).toBe(true);
  });

  it('reads the text from standard input', async () => {
    const io = fakeIo(env(), 'Text from a pipe.');
    expect(await main(['say', '--out', join(dir, 'c.pcm'), '--json'], io)).toBe(0);
    expect(JSON.parse(io.out()).units).toBe('Text from a pipe.'.length);
  });

  it.each([
    [['--voice', '00000000-0000-0000-0000-000000000000'], 'voice_not_found'],
    [['--model', 'no-such-model'], 'model_not_found'],
  ])('exits non-zero with one line naming the code for %j', async (args, code) => {
    const io = fakeIo(env());
    const exit = await main(['say', 'Hello.', '--out', join(dir, 'e.pcm'), ...args], io);
    expect(exit).not.toBe(0);
    const lines = withoutDeploymentNotes(io.err()).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(code);
    expect(io.out()).toBe('');
  });

  it('quota_exceeded surfaces as its code without failing over or retrying', async () => {
    const io = fakeIo(env('sk-test-empty'));
    const exit = await main(['say', 'Hello.', '--out', join(dir, 'q.pcm')], io);
    expect(exit).toBe(1);
    expect(withoutDeploymentNotes(io.err())).toMatch(/^voxpipe: error quota_exceeded/);
  });

  it('an invalid key is a 401 at the handshake: one line, no key in it', async () => {
    const io = fakeIo(env('sk-wrong-key-123456'));
    const exit = await main(['say', 'Hello.', '--out', join(dir, 'k.pcm'), '--transport', 'realtime'], io);
    expect(exit).toBe(1);
    expect(withoutDeploymentNotes(io.err()).trim().split('\n')).toHaveLength(1);
    expect(io.err()).toMatch(/unauthorized|authentication_failed|401/);
    expect(io.err()).not.toContain('sk-wrong-key-123456');
  });

  it('usage errors exit 2', async () => {
    const io = fakeIo(env());
    expect(await main(['say', '--format', 'flac', 'x'], io)).toBe(2);
    expect(io.err()).toContain('invalid_arguments');
  });
});

describe('voxpipe say without --out', () => {
  it('plays, or with no audio device writes a WAV file and says where', async () => {
    const { readdir } = await import('node:fs/promises');
    const { probeSpeaker, findExternalPlayer } = await import('../../src/sinks/index.js');
    const cwd = process.cwd();
    const here = await mkdtemp(join(tmpdir(), 'voxpipe-play-'));
    process.chdir(here);
    try {
      const io = fakeIo(env());
      expect(await main(['say', 'Where did it go?'], io)).toBe(0);
      const canPlay = (await probeSpeaker()).available || (await findExternalPlayer()).player !== undefined;
      const files = (await readdir(here)).filter((f) => f.endsWith('.wav'));
      if (canPlay) {
        expect(files).toHaveLength(0);
      } else {
        expect(files).toHaveLength(1);
        expect(io.err()).toContain(`writing ${files[0]}`);
        const wav = await readFile(join(here, files[0]!));
        expect(wav.subarray(0, 4).toString()).toBe('RIFF');
        expect(wav.readUInt32LE(40)).toBeGreaterThan(0);
      }
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('voxpipe speak', () => {
  it('speaks segments while standard input is still open', async () => {
    const stdin = new PassThrough();
    const io = fakeIo(env(), stdin);
    const out = join(dir, 's.pcm');
    const done = main(['speak', '--out', out, '--json'], io);
    stdin.write('The first sentence is complete. ');
    stdin.write('And the second one');
    // The first segment is spoken before the input ends.
    const deadline = Date.now() + 10_000;
    let size = 0;
    while (Date.now() < deadline) {
      size = await stat(out).then((s) => s.size, () => 0);
      if (size > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(size).toBeGreaterThan(0);
    stdin.end(' ends here.');
    expect(await done).toBe(0);
    const summary = JSON.parse(io.out());
    expect(summary.segments).toBeGreaterThanOrEqual(2);
    expect(summary.bytes).toBe((await stat(out)).size);
  });
});

describe('embedded default', () => {
  // Real speech needs the optional espeak package; without it there is nothing to check.
  it.skipIf(!hasEspeak)('with nothing configured, say writes a WAV of real speech (espeak)', async () => {
    const out = join(dir, 'hello.wav');
    const io = fakeIo({});
    expect(await main(['say', 'Hello from voxpipe', '--out', out], io)).toBe(0);
    const wav = await readFile(out);
    const data = wav.subarray(44);
    const samples = new Int16Array(data.buffer, data.byteOffset, Math.floor(data.length / 2));
    let sum = 0;
    for (const v of samples) sum += v * v;
    const rms = Math.sqrt(sum / samples.length) / 32768;
    const seconds = samples.length / wav.readUInt32LE(24);
    expect(rms).toBeGreaterThan(0.01);
    expect(seconds).toBeGreaterThan(0.5);
    expect(seconds).toBeLessThan(4);
  });
});

describe('the layout is what the audio says', () => {
  // espeak speaks at 22,050 Hz; the HTTP transports can know it only from the audio (its WAV header or Content-Type).
  it.skipIf(!hasEspeak).each(['sync', 'compat', 'async'])('--transport %s --format pcm --out x.wav on the minimal dialect: the file header carries the audio\'s rate', async (transport) => {
    const espeak = await startServer({ engine: 'espeak', dialect: 'minimal', accounts: [{ apiKey: KEY, userId: 'u1' }] });
    try {
      const out = join(dir, `layout-${transport}.wav`);
      const io = fakeIo({ VOXPIPE_BASE_URL: espeak.baseUrl, VOXPIPE_API_KEY: KEY });
      expect(await main(['say', 'What rate is this?', '--format', 'pcm', '--transport', transport, '--out', out, '--json'], io)).toBe(0);
      expect(io.err()).not.toContain('pcm_layout');
      const summary = JSON.parse(io.out());
      const file = await readFile(out);
      expect(file.readUInt32LE(24)).toBe(22_050);
      expect(summary).toMatchObject({ sampleRate: 22_050, transport });
      expect(summary.receivedBytes).toBe(summary.audioBytes);
      if (summary.expectedBytes !== null) expect(summary.expectedBytes).toBe(summary.receivedBytes);
    } finally {
      await espeak.close();
    }
  });
});
