/**
 * `--out -` carries only audio, in a self-describing
 * stream; a text past the realtime session limit (spec 8: 100,000 units) is
 * spoken whole on as many requests as it needs, with nothing lost or spoken
 * twice at a seam. Real reference server (tone engine) on port 0.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { LIMITS } from '../../src/protocol/limits.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-test-cli-long';
const env = (extra: Record<string, string> = {}) => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY, ...extra });

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u-long', credits: 10_000_000, apiQuota: 10_000_000 }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-long-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** One paragraph, repeated to make a text of any length. */
const PARAGRAPH = 'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! How vexingly quick daft zebras jump? ';

describe('say --out -', () => {
  it('--json: standard output is a WAV stream (streaming header) and nothing else; the summary and the layout go to standard error', async () => {
    const text = 'Standard output only. Two sentences.';
    const io = fakeIo(env());
    expect(await main(['say', text, '--out', '-', '--json'], io)).toBe(0);
    const out = io.outBytes();
    expect(out.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(out.subarray(8, 12).toString('latin1')).toBe('WAVE');
    expect(out.readUInt32LE(24)).toBe(24_000);
    expect(out.readUInt32LE(40)).toBe(0xffff_ffff);
    const pcm = join(dir, 'ref.pcm');
    expect(await main(['say', text, '--out', pcm], fakeIo(env()))).toBe(0);
    expect(out.subarray(44).equals(await readFile(pcm))).toBe(true);
    const summary = JSON.parse(io.err().split('\n').find((l) => l.startsWith('{'))!);
    expect(summary).toMatchObject({ out: '-', format: 'pcm', sampleRate: 24_000, audioBytes: out.length - 44 });
    expect(io.err()).toMatch(/standard output: WAV \(24000 Hz, mono, 16-bit/);
  });

  it('--format pcm asks for raw PCM: no header, and standard error says the layout', async () => {
    const io = fakeIo(env());
    expect(await main(['say', 'Raw please.', '--out', '-', '--format', 'pcm'], io)).toBe(0);
    expect(io.outBytes().subarray(0, 4).toString('latin1')).not.toBe('RIFF');
    expect(io.err()).toMatch(/standard output: raw 24000 Hz, mono, 16-bit signed little-endian PCM/);
  });
});

describe('say: a text of any length', () => {
  it('a 100 KB text on standard input becomes one complete WAV of the right duration, over several requests', async () => {
    const single = join(dir, 'one.pcm');
    const one = fakeIo(env());
    expect(await main(['say', PARAGRAPH.trim(), '--out', single, '--json', '--speed', '2'], one)).toBe(0);
    const perParagraph = (await stat(single)).size;
    const repeats = Math.ceil(100_000 / PARAGRAPH.length) + 1;
    const text = PARAGRAPH.repeat(repeats).trim();
    expect(text.length).toBeGreaterThan(LIMITS.sessionMaxUnits);
    const out = join(dir, 'long.wav');
    const io = fakeIo(env({ VOXPIPE_PROGRESS_MS: '1000' }), text);
    const code = await main(['say', '--out', out, '--json', '--speed', '2'], io);
    expect(io.err()).not.toMatch(/error/);
    // Off a terminal: a progress line now and then.
    expect(io.err()).toMatch(/^voxpipe: \d+ segments, .*\d+ s of audio received, of about \d+ s, ETA \d+ s$/m);
    expect(code).toBe(0);
    const summary = JSON.parse(io.out());
    expect(summary.requestIds.length).toBeGreaterThanOrEqual(2);
    expect(new Set(summary.requestIds).size).toBe(summary.requestIds.length);
    // Every character once: the units of all requests are the text's characters (spaces at seams aside).
    expect(summary.units).toBeLessThanOrEqual(text.length);
    expect(summary.units).toBeGreaterThanOrEqual(text.length - summary.requestIds.length);
    const wav = await readFile(out);
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
    expect(wav.length - 44).toBe(summary.audioBytes);
    // The right duration: each paragraph lasts what it lasts alone; the spaces between them 40 ms / 2 each at most.
    const spaceBytes = (40 / 2) * 24 * 2;
    const expected = repeats * perParagraph;
    expect(wav.length - 44).toBeGreaterThanOrEqual(expected);
    expect(wav.length - 44).toBeLessThanOrEqual(expected + (repeats - 1) * spaceBytes);
    expect(summary.durationMs).toBeGreaterThan(20 * 60_000);
  }, 120_000);

  it('small parts (--part-units): every sentence spoken once, in order, on several requests', async () => {
    const text = PARAGRAPH.repeat(6).trim();
    const whole = join(dir, 'whole.pcm');
    const parts = join(dir, 'parts.pcm');
    expect(await main(['say', text, '--out', whole], fakeIo(env()))).toBe(0);
    const io = fakeIo(env());
    expect(await main(['say', text, '--out', parts, '--json', '--part-units', '300'], io)).toBe(0);
    const summary = JSON.parse(io.out());
    expect(summary.requestIds.length).toBeGreaterThanOrEqual(3);
    const a = await readFile(whole);
    const b = await readFile(parts);
    expect(b.length).toBeGreaterThan(0);
    // The same audio, but for the silence of a space at a seam.
    expect(Math.abs(a.length - b.length)).toBeLessThanOrEqual(summary.requestIds.length * 40 * 48);
  });
});

describe('jobs create: a text over the 5,000 characters of one job', () => {
  it('says up front how it splits, runs one job per part and joins their audio in order into one file', async () => {
    const text = PARAGRAPH.repeat(Math.ceil(6_000 / PARAGRAPH.length)).trim();
    const out = join(dir, 'jobs.wav');
    const io = fakeIo(env(), undefined);
    expect(await main(['jobs', 'create', text, '--out', out, '--interval-ms', '20', '--json', '--speed', '2'], io)).toBe(0);
    expect(io.err()).toMatch(/over the 5000 of one job: 2 jobs, cut between sentences, their audio joined in order/);
    const { items } = JSON.parse(io.out()) as { items: { taskId: string; status: string; characters?: number }[] };
    expect(items).toHaveLength(2);
    expect(items.every((j) => j.status === 'succeeded')).toBe(true);
    const said = join(dir, 'jobs-said.pcm');
    expect(await main(['say', text, '--out', said, '--speed', '2'], fakeIo(env()))).toBe(0);
    const wav = await readFile(out);
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
    // The same audio as the text spoken whole, but for the space at the cut.
    const realtime = (await stat(said)).size;
    expect(Math.abs(wav.length - 44 - realtime)).toBeLessThanOrEqual(20 * 48);
  }, 60_000);
});

describe('speak: standard input past a request\'s budget', () => {
  it('goes on to a new request between sentences, and says nothing is lost (same audio as say)', async () => {
    const text = PARAGRAPH.repeat(5).trim();
    const whole = join(dir, 'speak-whole.pcm');
    expect(await main(['say', text, '--out', whole], fakeIo(env()))).toBe(0);
    const stdin = new PassThrough();
    const io = fakeIo(env(), stdin);
    const out = join(dir, 'speak-parts.pcm');
    const done = main(['speak', '--out', out, '--json', '--part-units', '250'], io);
    // In small pieces, cut anywhere, as an LLM streams.
    for (let i = 0; i < text.length; i += 37) stdin.write(text.slice(i, i + 37));
    stdin.end();
    expect(await done).toBe(0);
    const summary = JSON.parse(io.out());
    expect(summary.requestIds.length).toBeGreaterThanOrEqual(2);
    const a = (await stat(whole)).size;
    const b = (await stat(out)).size;
    expect(Math.abs(a - b)).toBeLessThanOrEqual(summary.requestIds.length * 40 * 48);
  });
});

describe('a run that fails part-way', () => {
  it('says what the file kept', async () => {
    const out = join(dir, 'part.wav');
    server.faults.set({ engineFailure: { match: 'doomed', times: 50 } });
    try {
      const io = fakeIo(env());
      const code = await main(['say', 'A first sentence that is fine. Then a doomed sentence that fails.', '--out', out, '--transport', 'realtime'], io);
      expect(code).toBe(1);
      const size = (await stat(out)).size;
      const kept = io.err().match(/stopped part-way: kept .*part\.wav \((\d+) bytes; ([\d.]+) s of audio/);
      expect(kept).not.toBeNull();
      expect(Number(kept![1])).toBe(size);
      expect(size).toBeGreaterThan(44);
    } finally {
      server.faults.clear();
    }
  }, 60_000);
});
