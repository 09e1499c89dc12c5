/**
 * Progress of a long `say` is measured in audio: seconds received against
 * an estimate of the total, with an ETA that moves (the text is handed to
 * the service at once, so the text sent says nothing). Real reference
 * server (tone engine) on port 0, and the line itself as a pure function.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { progressLine } from '../../src/cli/progress.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-test-cli-progress';

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u-progress', credits: 10_000_000, apiQuota: 10_000_000 }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-progress-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const PARAGRAPH = 'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! How vexingly quick daft zebras jump? ';

describe('say: progress in audio', () => {
  it('a long text: the seconds received grow, the estimate is the audio to come, the ETA is not 0 before the end', async () => {
    const text = PARAGRAPH.repeat(150).trim();
    const out = join(dir, 'long.wav');
    const io = fakeIo({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY, VOXPIPE_PROGRESS_MS: '50' }, text);
    expect(await main(['say', '--out', out], io)).toBe(0);
    const totalS = ((await stat(out)).size - 44) / 48_000;
    const lines = io
      .err()
      .split('\n')
      .map((l) => l.match(/^voxpipe: \d+ segments, (\d+) s of audio received(?:, of about (\d+) s, ETA (\d+) s)?$/))
      .filter((m) => m !== null);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    const received = lines.map((m) => Number(m[1]));
    for (let i = 1; i < received.length; i++) expect(received[i]!).toBeGreaterThanOrEqual(received[i - 1]!);
    expect(received.at(-1)!).toBeGreaterThan(received[0]!);
    const estimated = lines.filter((m) => m[2] !== undefined);
    expect(estimated.length).toBeGreaterThanOrEqual(2);
    // The estimate is of the audio (within 15 % once a few segments are done), not of the text sent.
    expect(Number(estimated.at(-1)![2])).toBeGreaterThan(totalS * 0.85);
    expect(Number(estimated.at(-1)![2])).toBeLessThan(totalS * 1.15);
    // Before the last fifth of the audio has arrived, something is still to come.
    for (const m of estimated.filter((x) => Number(x[1]) < totalS * 0.8)) expect(Number(m[3]), m[0]).toBeGreaterThan(0);
    const etas = estimated.map((m) => Number(m[3]));
    expect(new Set(etas).size).toBeGreaterThan(1);
  }, 120_000);
});

describe('progressLine', () => {
  const sample = { segments: 10, parts: 1, receivedS: 30, doneUnits: 500, doneS: 30, playing: false };

  it('a file: the total from the seconds per character so far, the ETA from the rate audio arrives at', () => {
    // 30 s of audio in 3 s: 10x real time; 2,000 characters make about 120 s, 90 s to come, 9 s.
    expect(progressLine(sample, { sinceFirstAudioS: 3 }, 2_000)).toBe('10 segments, 30 s of audio received, of about 120 s, ETA 9 s');
  });

  it('the speakers: what was played, and an ETA in real time', () => {
    expect(progressLine({ ...sample, playing: true }, { sinceFirstAudioS: 3 }, 2_000)).toBe('10 segments, 30 s of audio received, 3 s played, of about 120 s, ETA 117 s');
  });

  it('speak (no total): the seconds received only; mp3 (no seconds): the text spoken', () => {
    expect(progressLine(sample, { sinceFirstAudioS: 3 }, undefined)).toBe('10 segments, 30 s of audio received');
    expect(progressLine({ ...sample, receivedS: undefined, doneS: undefined }, { sinceFirstAudioS: 3 }, 2_000)).toBe('10 segments, 25 % of the text spoken');
  });
});
