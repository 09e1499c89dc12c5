import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { UnavailableError } from '../../src/errors.js';
import { pcmDurationMs } from '../../src/protocol/audio.js';
import { openFileSink, openPlaybackSink } from '../../src/sinks/index.js';
import type { AudioInfo, Sink } from '../../src/sinks/types.js';
import { buildWavHeader, parseWavHeader, WAV_UNKNOWN_SIZE } from '../../src/sinks/wav-header.js';
import { chunksOf, encodeMp3, encodeOpus, ffprobe, hasFfmpeg, hasFfprobe, sinePcm } from './audio-fixtures.js';
import { useTmpDir } from './tmpdir.js';

const tmp = useTmpDir('index');
const MONO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
const info = (format: AudioInfo['format']): AudioInfo => ({ format, ...MONO_24K });
const pcm = sinePcm(24_000, 1_000);
const FAKE_SPEAKER = fileURLToPath(new URL('./fixtures/fake-speaker.cjs', import.meta.url));
const FakeSpeaker = createRequire(import.meta.url)(FAKE_SPEAKER) as { instances: { options: Record<string, unknown>; chunks: Buffer[] }[] };

async function feed(sink: Sink, bytes: Buffer) {
  for (const chunk of chunksOf(bytes, 1500)) sink.write(chunk);
  sink.end();
  return sink.done;
}

describe('openFileSink', () => {
  it('writes pcm to .wav directly', async () => {
    const path = tmp('pcm.wav');
    const sink = openFileSink(path, info('pcm'));
    expect(sink.kind).toBe('wav-file');
    await feed(sink, pcm);
    const file = readFileSync(path);
    expect(parseWavHeader(file)).toEqual({ pcm: MONO_24K, dataOffset: 44, dataBytes: pcm.length });
  });

  it('turns a streaming wav into a wav file with real sizes', async () => {
    const path = tmp('stream.wav');
    const stream = Buffer.concat([buildWavHeader(MONO_24K, WAV_UNKNOWN_SIZE), pcm]);
    const result = await feed(openFileSink(path, info('wav')), stream);
    const file = readFileSync(path);
    expect(parseWavHeader(file)?.dataBytes).toBe(pcm.length);
    expect(file.subarray(44).equals(pcm)).toBe(true);
    expect(result).toMatchObject({ kind: 'wav-file', bytesIn: stream.length, durationMs: 1_000 });
  });

  it('decodes mp3 into a .wav with the decoded layout', async () => {
    const path = tmp('mp3.wav');
    const result = await feed(openFileSink(path, { ...info('mp3'), sampleRate: 44_100 }), encodeMp3(pcm, 24_000));
    const header = parseWavHeader(readFileSync(path));
    expect(header?.pcm).toEqual(MONO_24K); // the bitstream's rate, not the announced one
    expect(pcmDurationMs(header?.dataBytes ?? 0, MONO_24K)).toBeGreaterThan(900);
    expect(pcmDurationMs(header?.dataBytes ?? 0, MONO_24K)).toBeLessThan(1_100);
    expect(result.pcm).toEqual(MONO_24K);
  });

  it('writes an empty but valid .wav when an mp3 stream carries no audio', async () => {
    const path = tmp('empty.wav');
    const result = await feed(openFileSink(path, info('mp3')), Buffer.alloc(0));
    expect(parseWavHeader(readFileSync(path))).toEqual({ pcm: MONO_24K, dataOffset: 44, dataBytes: undefined });
    expect(result.durationMs).toBe(0);
  });

  it('writes raw PCM for .pcm and .raw, decoding first', async () => {
    const path = tmp('stream.raw');
    const stream = Buffer.concat([buildWavHeader(MONO_24K, WAV_UNKNOWN_SIZE), pcm]);
    await feed(openFileSink(path, info('wav')), stream);
    expect(readFileSync(path).equals(pcm)).toBe(true);
    const direct = tmp('direct.pcm');
    await feed(openFileSink(direct, info('pcm')), pcm);
    expect(readFileSync(direct).equals(pcm)).toBe(true);
  });

  it('copies mp3 into .mp3 unchanged', async () => {
    const mp3 = encodeMp3(pcm, 24_000);
    const path = tmp('copy.mp3');
    const sink = openFileSink(path, info('mp3'));
    expect(sink.kind).toBe('raw-file');
    await feed(sink, mp3);
    expect(readFileSync(path).equals(mp3)).toBe(true);
  });

  it.skipIf(!hasFfmpeg)('copies opus into .ogg unchanged (needs ffmpeg to make the opus)', async () => {
    const ogg = encodeOpus(pcm, 24_000);
    const path = tmp('copy.ogg');
    const sink = openFileSink(path, info('opus'));
    expect(sink.kind).toBe('raw-file');
    await feed(sink, ogg);
    expect(readFileSync(path).equals(ogg)).toBe(true);
  });

  it('sends "-" to standard output', () => {
    const sink = openFileSink('-', info('mp3'));
    expect(sink.kind).toBe('stdout');
    sink.destroy();
  });

  it.skipIf(!hasFfmpeg || !hasFfprobe)('transcodes other extensions, and any resampling, through ffmpeg (needs ffmpeg)', async () => {
    const flac = tmp('talk.flac');
    const sink = openFileSink(flac, info('pcm'));
    expect(sink.kind).toBe('transcode');
    await feed(sink, pcm);
    expect(ffprobe(flac)).toMatchObject({ codec: 'flac', sampleRate: 24_000 });

    const wav16k = tmp('talk-16k.wav');
    const resampling = openFileSink(wav16k, info('mp3'), { sampleRate: 16_000 });
    expect(resampling.kind).toBe('transcode');
    await feed(resampling, encodeMp3(pcm, 24_000));
    expect(ffprobe(wav16k)).toMatchObject({ codec: 'pcm_s16le', sampleRate: 16_000 });
  });
});

describe('openPlaybackSink', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('throws UnavailableError naming each reason when nothing can play', async () => {
    vi.stubEnv('PATH', '/nonexistent');
    const error: unknown = await openPlaybackSink(info('pcm'), { module: 'voxpipe-no-such-speaker-module', refresh: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/speaker: voxpipe-no-such-speaker-module is not installed/);
    expect((error as Error).message).toMatch(/ffplay: ffplay not found on PATH/);
  });

  it('plays through speaker when it can, decoding mp3 first', async () => {
    const sink = await openPlaybackSink(info('mp3'), { module: FAKE_SPEAKER, refresh: true });
    expect(sink.kind).toBe('speaker');
    const mp3 = encodeMp3(pcm, 24_000);
    const result = await feed(sink, mp3);
    expect(result).toMatchObject({ kind: 'speaker', pcm: MONO_24K, bytesIn: mp3.length });
    const device = FakeSpeaker.instances.at(-1);
    expect(device?.options).toMatchObject({ sampleRate: 24_000, channels: 1 });
    const playedMs = pcmDurationMs(Buffer.concat(device?.chunks ?? []).length, MONO_24K);
    expect(playedMs).toBeGreaterThan(900);
    expect(playedMs).toBeLessThan(1_100);
  });
});
