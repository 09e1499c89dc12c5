import { afterEach, describe, expect, it, vi } from 'vitest';
import { UnavailableError } from '../../src/errors.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../../src/sinks/wav-header.js';
import { createTranscodeSink, ffmpegAvailable, requireFfmpeg } from '../../src/sinks/transcode.js';
import type { AudioInfo, Sink } from '../../src/sinks/types.js';
import { chunksOf, encodeMp3, ffprobe, hasFfmpeg, hasFfprobe, sinePcm } from './audio-fixtures.js';
import { useTmpDir } from './tmpdir.js';

const tmp = useTmpDir('transcode');
const PCM_24K: AudioInfo = { format: 'pcm', sampleRate: 24_000, channels: 1, bitDepth: 16 };

async function feed(sink: Sink, bytes: Buffer) {
  for (const chunk of chunksOf(bytes, 4096)) sink.write(chunk);
  sink.end();
  return sink.done;
}

describe.skipIf(!hasFfmpeg || !hasFfprobe)('transcode sink (needs ffmpeg and ffprobe)', () => {
  const pcm = sinePcm(24_000, 1_500);

  it('writes FLAC for .flac', async () => {
    const path = tmp('talk.flac');
    const result = await feed(createTranscodeSink(path, PCM_24K), pcm);
    expect(result).toMatchObject({ kind: 'transcode', path, bytesIn: pcm.length });
    const probe = ffprobe(path);
    expect(probe).toMatchObject({ codec: 'flac', container: 'flac', sampleRate: 24_000, channels: 1 });
    expect(Math.abs(probe.durationMs - 1_500)).toBeLessThan(50);
  });

  it('writes an Ogg container for .ogg', async () => {
    const path = tmp('talk.ogg');
    await feed(createTranscodeSink(path, PCM_24K), pcm);
    const probe = ffprobe(path);
    expect(probe.container).toBe('ogg');
    expect(Math.abs(probe.durationMs - 1_500)).toBeLessThan(100);
  });

  it('resamples to the requested rate', async () => {
    const path = tmp('resampled.flac');
    const result = await feed(createTranscodeSink(path, PCM_24K, { sampleRate: 16_000 }), pcm);
    expect(result.pcm?.sampleRate).toBe(16_000);
    const probe = ffprobe(path);
    expect(probe.sampleRate).toBe(16_000);
    expect(Math.abs(probe.durationMs - 1_500)).toBeLessThan(50);
  });

  it('reads mp3 and streaming-wav input itself', async () => {
    const fromMp3 = tmp('from-mp3.flac');
    await feed(createTranscodeSink(fromMp3, { ...PCM_24K, format: 'mp3' }), encodeMp3(pcm, 24_000));
    expect(ffprobe(fromMp3)).toMatchObject({ codec: 'flac', sampleRate: 24_000 });

    const fromWav = tmp('from-wav.flac');
    const wav = Buffer.concat([buildWavHeader(PCM_24K, WAV_UNKNOWN_SIZE), pcm]);
    await feed(createTranscodeSink(fromWav, { ...PCM_24K, format: 'wav' }), wav);
    const probe = ffprobe(fromWav);
    expect(Math.abs(probe.durationMs - 1_500)).toBeLessThan(50);
  });

  it('fails with ffmpeg\'s reason when ffmpeg rejects the output', async () => {
    const sink = createTranscodeSink(tmp('talk.unknownext'), PCM_24K);
    const error: unknown = await feed(sink, pcm).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'sink_failed' });
    expect((error as Error).message).toMatch(/ffmpeg/);
    expect((error as Error).message).toMatch(/output format/i);
  });
});

describe('without ffmpeg', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    // Re-detect with the real PATH so later tests see ffmpeg again.
    ffmpegAvailable({ refresh: true });
  });

  it('reports ffmpeg unavailable and refuses with a message naming it and how to install it', () => {
    vi.stubEnv('PATH', '/nonexistent');
    expect(ffmpegAvailable({ refresh: true })).toBe(false);
    expect(() => requireFfmpeg('writing .flac', { refresh: true })).toThrow(UnavailableError);
    let error: unknown;
    try {
      createTranscodeSink(tmp('never.flac'), PCM_24K, { refresh: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).code).toBe('unavailable');
    expect((error as Error).message).toMatch(/writing \.flac needs ffmpeg/);
    expect((error as Error).message).toMatch(/apt-get install ffmpeg/);
  });
});
