import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { UnavailableError } from '../../src/errors.js';
import { ExternalPlayerSink, findExternalPlayer, openExternalPlayer, probePlayer } from '../../src/sinks/external-player.js';
import { chunksOf, sinePcm } from './audio-fixtures.js';
import { useTmpDir } from './tmpdir.js';
import { has } from '../helpers/needs.js';

const tmp = useTmpDir('player');
const MONO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
const hasFfplay = has('ffplay');

/** Whether this ffplay's SDL has the `disk` audio driver (Debian's does), checked without voxpipe's code. */
function sdlHasDiskDriver(): boolean {
  if (!hasFfplay) return false;
  const file = tmp('sdl-check.raw');
  spawnSync('ffplay', ['-hide_banner', '-loglevel', 'error', '-nodisp', '-autoexit', '-f', 'lavfi', '-i', 'anullsrc=d=0.05'], {
    env: { ...process.env, SDL_AUDIODRIVER: 'disk', SDL_DISKAUDIOFILE: file },
    timeout: 10_000,
  });
  return existsSync(file);
}

afterEach(() => vi.unstubAllEnvs());

describe('external player discovery', () => {
  it('reports players missing from PATH without running anything', async () => {
    vi.stubEnv('PATH', '/nonexistent');
    const { player, probes } = await findExternalPlayer(['ffplay', 'aplay', 'paplay'], { refresh: true });
    expect(player).toBeUndefined();
    expect(probes.map((probe) => probe.reason)).toEqual(['ffplay not found on PATH', 'aplay not found on PATH', 'paplay not found on PATH']);
    await expect(openExternalPlayer(MONO_24K, { refresh: true })).rejects.toBeInstanceOf(UnavailableError);
  });
});

// ffplay plays through SDL, whose audio driver an environment variable chooses: a driver that does not
// exist stands for a machine without sound, and SDL's `disk` driver for one with a device (it writes the
// samples it would play to a file, in real time).
describe.skipIf(!hasFfplay)('ffplay (needs ffplay on PATH)', () => {
  it('is unavailable, with a typed error, where it cannot open audio', async () => {
    vi.stubEnv('SDL_AUDIODRIVER', 'voxpipe-no-such-driver');
    const probe = await probePlayer('ffplay', { refresh: true });
    expect(probe.available).toBe(false);
    expect(probe.reason).toMatch(/could not open an audio device/);
    const error: unknown = await openExternalPlayer(MONO_24K, { player: 'ffplay', refresh: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
  });

  it('fails a running sink with UnavailableError when the player gives up on the device', async () => {
    vi.stubEnv('SDL_AUDIODRIVER', 'voxpipe-no-such-driver');
    const sink = new ExternalPlayerSink('ffplay', MONO_24K);
    for (const chunk of chunksOf(sinePcm(24_000, 2_000), 4800)) sink.write(chunk);
    sink.end();
    await expect(sink.done).rejects.toBeInstanceOf(UnavailableError);
  });

  it.skipIf(!sdlHasDiskDriver())('plays PCM through ffplay where a device opens (needs SDL\'s disk audio driver)', async () => {
    const deviceFile = tmp('sdl-disk.raw');
    vi.stubEnv('SDL_AUDIODRIVER', 'disk');
    vi.stubEnv('SDL_DISKAUDIOFILE', deviceFile);
    const probe = await probePlayer('ffplay', { refresh: true });
    expect(probe).toEqual({ player: 'ffplay', available: true });
    const sink = await openExternalPlayer(MONO_24K, { player: 'ffplay' });
    const pcm = sinePcm(24_000, 300);
    for (const chunk of chunksOf(pcm, 2400)) sink.write(chunk);
    sink.end();
    const result = await sink.done;
    expect(result).toMatchObject({ kind: 'external-player', player: 'ffplay', bytesIn: pcm.length });
    // The device got at least the audio (SDL pads its last buffer).
    expect(statSync(deviceFile).size).toBeGreaterThanOrEqual(pcm.length);
  });
});
