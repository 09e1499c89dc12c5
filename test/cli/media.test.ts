import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, type Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { decodePng, encodePng } from '../../src/server/media-engines/png.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';
import { correlation, decodeAudioTrack, envelope, ffprobe, HAS_FFMPEG, HAS_RECOGNIZER, silenceWav, startInputServer, testVideo, toneWav, type InputServer } from '../server/media-engines/helpers.js';

/** Run a subcommand through the CLI's parser, as `voxpipe NAME ...argv` does: errors become one stderr line and an exit code. */
const cli = (name: string, argv: string[], io: Io): Promise<number> => main([name, ...argv], io);

let dir: string;
const path = (name: string) => join(dir, name);
/** No VOXPIPE_BASE_URL: every command starts the embedded reference server. */
const EMBEDDED = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-cli-media-'));
  await writeFile(path('voice.wav'), toneWav(2, 300));
  await writeFile(path('silence.wav'), silenceWav(1));
  await writeFile(path('face.png'), encodePng({ width: 64, height: 80, channels: 3, pixels: new Uint8Array(64 * 80 * 3).fill(90) }));
  if (HAS_FFMPEG) await writeFile(path('face.mp4'), testVideo(1, 96, 72));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!HAS_FFMPEG)('voxpipe lipsync on the embedded default (needs ffmpeg)', () => {
  it('syncs a local image and a local audio file into an MP4 that carries the audio track', async () => {
    const io = fakeIo(EMBEDDED);
    expect(await cli('lipsync', ['--audio', path('voice.wav'), '--image', path('face.png'), '--out', path('out-image.mp4'), '--json'], io)).toBe(0);
    const lines = io.out().trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]!) as { id: string; status: string; file: string; bytes: number; contentType: string; creditsCharged: number };
    expect(summary).toMatchObject({ status: 'succeeded', file: path('out-image.mp4'), contentType: 'video/mp4', creditsCharged: 10 });
    const mp4 = await readFile(path('out-image.mp4'));
    expect(mp4.length).toBe(summary.bytes);
    const probe = ffprobe(mp4);
    expect(probe.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 64, height: 80 });
    expect(probe.streams.find((s) => s.codec_type === 'audio')?.codec_name).toBe('aac');
    expect(Number(probe.format.duration)).toBeCloseTo(2, 0);
    const given = envelope(decodeAudioTrack(await readFile(path('voice.wav'))), 400);
    expect(correlation(given, envelope(decodeAudioTrack(mp4), 400))).toBeGreaterThan(0.9);
  });

  it('syncs a local video, writes the MP4 to standard output with --out -, and notes nothing on stdout', async () => {
    const io = fakeIo(EMBEDDED);
    expect(await cli('lipsync', ['--audio', path('voice.wav'), '--video', path('face.mp4'), '--duration', '1', '--out', '-'], io)).toBe(0);
    const probe = ffprobe(io.outBytes());
    expect(probe.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Number(probe.format.duration)).toBeCloseTo(1, 0);
  });

  it('fails with one stderr line naming the code: 422 for an audio file without audio, usage errors for bad arguments', async () => {
    const bad = fakeIo(EMBEDDED);
    expect(await cli('lipsync', ['--audio', path('face.png'), '--image', path('face.png')], bad)).toBe(ExitCode.error);
    expect(bad.err().trim().split('\n').at(-1)).toMatch(/^voxpipe: error unprocessable_media: audioUrl holds no audio track/);
    expect(bad.out()).toBe('');
    for (const argv of [['--image', path('face.png')], ['--audio', path('voice.wav')], ['--audio', 'a.wav', '--video', 'v.mp4', '--image', 'i.png'], ['--audio', path('voice.wav'), '--image', path('face.png'), '--json', '--out', '-']]) {
      const io = fakeIo(EMBEDDED);
      expect(await cli('lipsync', argv, io), argv.join(' ')).toBe(ExitCode.usage);
      expect(io.err()).toMatch(/^voxpipe: error invalid_arguments: /);
    }
    const missing = fakeIo(EMBEDDED);
    expect(await cli('lipsync', ['--audio', path('nope.wav'), '--image', path('face.png')], missing)).toBe(ExitCode.usage);
    expect(missing.err()).toMatch(/--audio: .*nope\.wav does not exist/);
  });
});

describe('voxpipe image and video on the embedded default', () => {
  it('writes a PNG derived from the prompt and prints one JSON line', async () => {
    const io = fakeIo(EMBEDDED);
    expect(await cli('image', ['a', 'green', 'forest', '--aspect-ratio', '16:9', '--out', path('forest.png'), '--json'], io)).toBe(0);
    const summary = JSON.parse(io.out()) as { status: string; model: string; file: string; resultUrl: string };
    expect(summary).toMatchObject({ status: 'succeeded', model: 'svc-image-v1', file: path('forest.png') });
    expect(summary.resultUrl).toMatch(/\/api\/open\/media\/files\//);
    const png = decodePng(await readFile(path('forest.png')));
    expect([png.width, png.height]).toEqual([1024, 576]);
    const edit = fakeIo(EMBEDDED);
    expect(await cli('image', ['soft', 'light', '--edit', path('face.png'), '--out', '-'], edit)).toBe(0);
    expect(decodePng(edit.outBytes()).width).toBe(1024);
    expect(edit.err()).not.toMatch(/wrote/);
  });

  it('answers a usage error without a prompt', async () => {
    const io = fakeIo(EMBEDDED);
    expect(await cli('image', [], io)).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/^voxpipe: error invalid_arguments: missing required argument 'PROMPT'/);
  });

  it.skipIf(!HAS_FFMPEG)('writes an MP4 video of the asked size (needs ffmpeg)', async () => {
    const io = fakeIo(EMBEDDED);
    expect(await cli('video', ['waves', '--seconds', '1', '--size', '64x36', '--start-frame', path('face.png'), '--out', path('waves.mp4')], io)).toBe(0);
    expect(io.out()).toBe('');
    expect(io.err()).toMatch(/wrote video \(\d+ bytes\) to .*waves\.mp4/);
    expect(ffprobe(await readFile(path('waves.mp4'))).streams[0]).toMatchObject({ codec_type: 'video', width: 64, height: 36 });
  });
});

describe('voxpipe transcribe', () => {
  it.skipIf(!HAS_RECOGNIZER)('prints an empty transcript for a local silent file on the embedded default (needs pocketsphinx)', async () => {
    const io = fakeIo(EMBEDDED);
    expect(await cli('transcribe', [path('silence.wav'), '--json'], io)).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({ status: 'succeeded', model: 'svc-asr-v1', transcript: '', durationSeconds: 1, creditsCharged: 1 });
  });

  describe('against a configured service', () => {
    let server: ReferenceServer;
    let inputs: InputServer;
    const KEY = 'sk-cli-media-test';
    beforeAll(async () => {
      server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'cli-media' }] });
      inputs = await startInputServer();
    });
    afterAll(async () => {
      await server.close();
      await inputs.close();
    });
    const env = () => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY });

    it.skipIf(!HAS_RECOGNIZER)('names the 400 of a service that fetches public URLs only (needs pocketsphinx)', async () => {
      const io = fakeIo(env());
      expect(await cli('transcribe', [path('silence.wav')], io)).toBe(ExitCode.error);
      expect(io.err()).toMatch(/^voxpipe: error invalid_request: audioUrl .*public URLs only/);
      expect(io.err()).not.toContain(KEY);
    });

    it('answers a usage error for a missing argument', async () => {
      const io = fakeIo(env());
      expect(await cli('transcribe', [], io)).toBe(ExitCode.usage);
      expect(io.err()).toMatch(/missing required argument 'AUDIO_URL\|FILE'/);
    });
  });
});
