/**
 * The property of drawn dialects: for the same engine
 * and text, the audio `voxpipe say` and `voxpipe speak` write against a
 * drawn deployment is byte-identical to what they write against ours.
 *
 * A drawn deployment may choose another PCM rate (8 to 48 kHz, the engine's
 * output resampled). Audio at another rate cannot be byte-identical, so the
 * comparison is with our dialect at the rate the drawn one declares:
 * `random:SEED:only=rate`, the reference dialect with only that point drawn
 * (the draw of each point is independent of the others). The rate the file
 * says must be that rate too. WAV files are compared by their PCM data and
 * layout (the header is the client's to write).
 *
 * Seeds: `VOXPIPE_DIALECT_SEEDS` (vitest.config.ts draws new ones each run),
 * else three fixed ones. Every failure names the seed and the whole draw.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { describeDialect, dialectOf, startServer, type DialectName, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

const KEY = 'sk-test-drawn-audio';
const SEEDS = (process.env['VOXPIPE_DIALECT_SEEDS'] || 'a1,b2,c3').split(',').filter(Boolean);
const TEXT = 'A first sentence for the drawn deployment. A second one, a little longer, follows it. And a short third.';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-drawn-'));
});

/** The PCM data and layout of a WAV file (the first `data` chunk, whatever chunks come before it). */
function wavData(file: Buffer): { rate: number; channels: number; bits: number; data: Buffer } {
  expect(file.toString('latin1', 0, 4)).toBe('RIFF');
  let at = 12;
  let fmt: { rate: number; channels: number; bits: number } | undefined;
  while (at + 8 <= file.length) {
    const id = file.toString('latin1', at, at + 4);
    const size = file.readUInt32LE(at + 4);
    if (id === 'fmt ') fmt = { channels: file.readUInt16LE(at + 10), rate: file.readUInt32LE(at + 12), bits: file.readUInt16LE(at + 22) };
    if (id === 'data') return { ...fmt!, data: file.subarray(at + 8, at + 8 + Math.min(size, file.length - at - 8)) };
    at += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

interface Run {
  code: number;
  err: string;
  summary: Record<string, unknown>;
  file: Buffer;
}

async function say(server: ReferenceServer, args: string[], name: string): Promise<Run> {
  const out = join(dir, name);
  const io = fakeIo({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY });
  const code = await main(['say', TEXT, ...args, '--out', out, '--json'], io);
  return { code, err: io.err(), summary: code === 0 ? JSON.parse(io.out()) : {}, file: code === 0 ? await readFile(out) : Buffer.alloc(0) };
}

async function speak(server: ReferenceServer, name: string): Promise<Run> {
  const out = join(dir, name);
  const stdin = new PassThrough();
  const io = fakeIo({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY }, stdin);
  const done = main(['speak', '--format', 'pcm', '--out', out, '--json'], io);
  // Text arriving in pieces, as from an LLM.
  for (const piece of TEXT.match(/.{1,17}/g)!) stdin.write(piece);
  stdin.end();
  const code = await done;
  return { code, err: io.err(), summary: code === 0 ? JSON.parse(io.out()) : {}, file: code === 0 ? await readFile(out) : Buffer.alloc(0) };
}

describe.each(SEEDS)('drawn dialect random:%s', (seed) => {
  const drawn = `random:${seed}` as DialectName;
  const ours = `random:${seed}:only=rate` as DialectName;
  const rate = dialectOf(drawn).sampleRate ?? 24_000; // the tone engine's own
  // Every message names the seed and what was drawn, so the failure replays.
  const draw = `\n  ${describeDialect(drawn)}\n`;
  const servers: Partial<Record<'drawn' | 'ours', ReferenceServer>> = {};

  beforeAll(async () => {
    servers.drawn = await startServer({ engine: 'tone', dialect: drawn, accounts: [{ apiKey: KEY, userId: 'u1' }] });
    servers.ours = await startServer({ engine: 'tone', dialect: ours, accounts: [{ apiKey: KEY, userId: 'u1' }] });
  });
  afterAll(async () => {
    await servers.drawn?.close();
    await servers.ours?.close();
  });

  it.each(['realtime', 'sync', 'compat'])('say --transport %s --format pcm: the same bytes at the declared rate', async (transport) => {
    const args = ['--transport', transport, '--format', 'pcm'];
    const expected = await say(servers.ours!, args, `${seed}-${transport}-ours.pcm`);
    expect(expected.code, `our dialect at ${rate} Hz: ${expected.err}`).toBe(0);
    const got = await say(servers.drawn!, args, `${seed}-${transport}-drawn.pcm`);
    expect(got.code, `exit code, stderr: ${got.err}${draw}`).toBe(0);
    expect(got.summary['sampleRate'], `declared rate${draw}`).toBe(rate);
    expect(got.file.length, `bytes written${draw}`).toBe(expected.file.length);
    expect(got.file.equals(expected.file), `the audio differs from our dialect's at ${rate} Hz${draw}`).toBe(true);
  });

  it('say --format wav (realtime): the same PCM data and layout', async () => {
    const expected = wavData((await say(servers.ours!, ['--format', 'wav'], `${seed}-ours.wav`)).file);
    const got = await say(servers.drawn!, ['--format', 'wav'], `${seed}-drawn.wav`);
    expect(got.code, `exit code, stderr: ${got.err}${draw}`).toBe(0);
    const wav = wavData(got.file);
    expect({ rate: wav.rate, channels: wav.channels, bits: wav.bits }, `WAV layout${draw}`).toEqual({ rate, channels: 1, bits: 16 });
    expect(wav.data.equals(expected.data), `the PCM data differs (${wav.data.length} vs ${expected.data.length} bytes)${draw}`).toBe(true);
  });

  it('speak (text in pieces on stdin): the same bytes', async () => {
    const expected = await speak(servers.ours!, `${seed}-speak-ours.pcm`);
    expect(expected.code, `our dialect: ${expected.err}`).toBe(0);
    const got = await speak(servers.drawn!, `${seed}-speak-drawn.pcm`);
    expect(got.code, `exit code, stderr: ${got.err}${draw}`).toBe(0);
    expect(got.file.equals(expected.file), `the audio differs (${got.file.length} vs ${expected.file.length} bytes)${draw}`).toBe(true);
  });
});

describe('the generator', () => {
  it('replays: the same name draws the same deployment, another seed another one', () => {
    expect(describeDialect('random:replay-1')).toBe(describeDialect('random:replay-1'));
    expect(describeDialect('random:replay-1')).not.toBe(describeDialect('random:replay-2'));
  });

  it('switches points: only=rate draws the rate alone, off= keeps a point ours, the others drawn the same', () => {
    const all = dialectOf('random:s42');
    const rateOnly = dialectOf('random:s42:only=rate');
    expect(rateOnly.sampleRate).toBe(all.sampleRate);
    expect(rateOnly.wire.seed).toBe('s42');
    expect({ jobShape: rateOnly.jobShape, capabilities: rateOnly.capabilities, paging: rateOnly.voicesPaging }).toEqual({ jobShape: 'envelope', capabilities: 'reference', paging: 'offset' });
    const noRate = dialectOf('random:s42:off=rate');
    expect(noRate.sampleRate).toBeUndefined();
    expect({ jobShape: noRate.jobShape, capabilities: noRate.capabilities }).toEqual({ jobShape: all.jobShape, capabilities: all.capabilities });
  });

  it('refuses a bad spelling or an unknown point, naming it', () => {
    expect(() => dialectOf('random:')).toThrow(/random:SEED/);
    expect(() => dialectOf('random:x:off=nope')).toThrow(/unknown dialect point "nope"/);
  });
});
