import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { VoxpipeError } from '../../src/errors.js';
import { pcmDurationMs, type PcmInfo } from '../../src/protocol/audio.js';
import { createDecoder, mp3ChannelCount, type Decoder } from '../../src/codecs/decoder.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../../src/sinks/wav-header.js';
import type { AudioInfo } from '../../src/sinks/types.js';
import { chunksOf, collect, encodeMp3, encodeOpus, hasFfmpeg, sinePcm } from '../sinks/audio-fixtures.js';

const MONO_24K: PcmInfo = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

function write(decoder: Decoder, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => decoder.write(chunk, (error) => (error ? reject(error) : resolve())));
}

/** Feed chunks, ending the input; resolve with the decoded PCM and the 'info' payloads seen. */
async function decodeAll(info: AudioInfo, chunks: Buffer[], options = {}): Promise<{ pcm: Buffer; infos: PcmInfo[]; decoder: Decoder }> {
  const decoder = createDecoder(info, options);
  const infos: PcmInfo[] = [];
  decoder.on('info', (pcm: PcmInfo) => infos.push(pcm));
  const output = collect(decoder);
  for (const chunk of chunks) decoder.write(chunk);
  decoder.end();
  return { pcm: await output, infos, decoder };
}

/** Write the first half of the chunks (each fully processed) and report the PCM out so far, before end(). */
async function pcmBeforeEnd(info: AudioInfo, chunks: Buffer[]): Promise<{ early: number; total: number }> {
  const decoder = createDecoder(info);
  let received = 0;
  decoder.on('data', (part: Buffer) => (received += part.length));
  const half = Math.floor(chunks.length / 2);
  for (const chunk of chunks.slice(0, half)) await write(decoder, chunk);
  await new Promise((resolve) => setImmediate(resolve));
  const early = received;
  for (const chunk of chunks.slice(half)) decoder.write(chunk);
  decoder.end();
  await once(decoder, 'end');
  return { early, total: received };
}

async function decodeFailure(info: AudioInfo, chunks: Buffer[]): Promise<unknown> {
  try {
    await decodeAll(info, chunks);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('pcm passthrough', () => {
  it('passes every byte and only ever emits whole sample frames', async () => {
    const pcm = sinePcm(24_000, 100, 2);
    const decoder = createDecoder({ format: 'pcm', sampleRate: 24_000, channels: 2, bitDepth: 16 });
    const sizes: number[] = [];
    decoder.on('data', (part: Buffer) => sizes.push(part.length));
    const output = collect(decoder);
    for (const chunk of chunksOf(pcm, 7)) decoder.write(chunk);
    decoder.end();
    expect((await output).equals(pcm)).toBe(true);
    expect(sizes.every((size) => size % 4 === 0)).toBe(true);
  });
});

describe('wav decoder', () => {
  const pcm = sinePcm(24_000, 200);
  const streaming = Buffer.concat([buildWavHeader(MONO_24K, WAV_UNKNOWN_SIZE), pcm]);
  const wavInfo: AudioInfo = { format: 'wav', ...MONO_24K };

  it.each([1, 3, 7, 43, 44, 45, 1000])('strips a streaming header split into %i-byte chunks', async (size) => {
    const { pcm: out, infos } = await decodeAll(wavInfo, chunksOf(streaming, size));
    expect(out.equals(pcm)).toBe(true);
    expect(infos).toEqual([MONO_24K]);
  });

  it('takes the layout from the fmt chunk, not from the announcement', async () => {
    const stereo: PcmInfo = { sampleRate: 16_000, channels: 2, bitDepth: 16 };
    const body = sinePcm(16_000, 50, 2);
    const { pcm: out, decoder } = await decodeAll(wavInfo, [buildWavHeader(stereo, body.length), body]);
    expect(out.equals(body)).toBe(true);
    expect(decoder.pcmInfo).toEqual(stereo);
  });

  it('skips chunks before data and stops at the data size of a real file', async () => {
    const header = buildWavHeader(MONO_24K, pcm.length);
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([5, 0, 0, 0]), Buffer.from('INFOx'), Buffer.from([0])]);
    const trailer = Buffer.concat([Buffer.from('id3 '), Buffer.from([4, 0, 0, 0]), Buffer.from('junk')]);
    // Insert LIST between fmt (ends at 36) and data.
    const file = Buffer.concat([header.subarray(0, 36), list, header.subarray(36), pcm, trailer]);
    const { pcm: out } = await decodeAll(wavInfo, chunksOf(file, 5));
    expect(out.equals(pcm)).toBe(true);
  });

  it('rejects bytes that are not RIFF WAV', async () => {
    const error = await decodeFailure(wavInfo, [Buffer.from('OggS and more bytes')]);
    expect(error).toBeInstanceOf(VoxpipeError);
    expect((error as VoxpipeError).code).toBe('decode_failed');
  });

  it('rejects samples that are not 16-bit', async () => {
    const header = buildWavHeader(MONO_24K, 100);
    header.writeUInt16LE(24, 34);
    const error = await decodeFailure(wavInfo, [header, Buffer.alloc(100)]);
    expect((error as VoxpipeError).code).toBe('decode_failed');
    expect((error as Error).message).toMatch(/24-bit/);
  });

  it('fails when the stream ends inside its header', async () => {
    const error = await decodeFailure(wavInfo, [streaming.subarray(0, 30)]);
    expect((error as VoxpipeError).code).toBe('decode_failed');
  });
});

describe('mp3 decoder', () => {
  const pcm = sinePcm(24_000, 2_000);
  const mp3 = encodeMp3(pcm, 24_000);
  const mp3Info: AudioInfo = { format: 'mp3', ...MONO_24K };

  it('decodes to PCM of the same duration (within 10%) and reports the layout', async () => {
    const { pcm: out, infos } = await decodeAll(mp3Info, chunksOf(mp3, 1000));
    expect(infos).toEqual([MONO_24K]);
    expect(pcmDurationMs(out.length, MONO_24K)).toBeGreaterThan(1800);
    expect(pcmDurationMs(out.length, MONO_24K)).toBeLessThan(2200);
  });

  it('learns the sample rate from the bitstream when the announcement differs', async () => {
    const { infos, pcm: out } = await decodeAll({ format: 'mp3', sampleRate: 44_100, channels: 1, bitDepth: 16 }, [mp3]);
    expect(infos).toEqual([MONO_24K]);
    expect(out.length).toBeGreaterThan(0);
  });

  it('decodes incrementally: PCM comes out before the input ends', async () => {
    const { early, total } = await pcmBeforeEnd(mp3Info, chunksOf(mp3, 500));
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(total);
  });

  it('fails on input with no mp3 frames', async () => {
    const error = await decodeFailure(mp3Info, [Buffer.alloc(4096, 0x11)]);
    expect((error as VoxpipeError).code).toBe('decode_failed');
  });

  it('reads the channel count from the first frame header, past an ID3v2 tag', () => {
    const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 4, 0xff, 0xfb, 0x90, 0x00]);
    expect(mp3ChannelCount(Buffer.concat([id3, mp3]))).toBe(1);
    const stereoHeader = Buffer.from([0xff, 0xfb, 0x90, 0x00]);
    expect(mp3ChannelCount(stereoHeader)).toBe(2);
    expect(mp3ChannelCount(Buffer.from([0xff, 0xfb]))).toBeUndefined();
  });
});

describe.skipIf(!hasFfmpeg)('opus decoder (needs ffmpeg to make test audio)', () => {
  const pcm = sinePcm(24_000, 3_000);
  const ogg = hasFfmpeg ? encodeOpus(pcm, 24_000) : Buffer.alloc(0);
  const opusInfo: AudioInfo = { format: 'opus', ...MONO_24K };

  it('decodes to 48 kHz PCM of the same duration (within 10%)', async () => {
    const { pcm: out, infos } = await decodeAll(opusInfo, chunksOf(ogg, 700));
    const layout: PcmInfo = { sampleRate: 48_000, channels: 1, bitDepth: 16 };
    expect(infos).toEqual([layout]);
    expect(pcmDurationMs(out.length, layout)).toBeGreaterThan(2700);
    expect(pcmDurationMs(out.length, layout)).toBeLessThan(3300);
  });

  it('decodes at another Opus rate on request', async () => {
    const { pcm: out, decoder } = await decodeAll(opusInfo, [ogg], { opusSampleRate: 24_000 });
    expect(decoder.pcmInfo.sampleRate).toBe(24_000);
    expect(pcmDurationMs(out.length, MONO_24K)).toBeGreaterThan(2700);
    expect(pcmDurationMs(out.length, MONO_24K)).toBeLessThan(3300);
  });

  it('decodes incrementally: PCM comes out before the input ends', async () => {
    const { early, total } = await pcmBeforeEnd(opusInfo, chunksOf(ogg, 500));
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(total);
  });

  it('fails on input that is not Ogg Opus', async () => {
    const error = await decodeFailure(opusInfo, [Buffer.alloc(4096, 0x11)]);
    expect((error as VoxpipeError).code).toBe('decode_failed');
  });
});

describe('decoder backpressure', () => {
  it('stops accepting input once its buffers are full and nobody reads', async () => {
    const decoder = createDecoder({ format: 'pcm', ...MONO_24K }, { highWaterMark: 4096 });
    let accepted = true;
    let writes = 0;
    while (accepted && writes < 1000) {
      accepted = decoder.write(Buffer.alloc(1024));
      writes++;
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(accepted).toBe(false);
    // Readable side full (4 KiB) plus writable side full (4 KiB): nothing unbounded.
    expect(decoder.readableLength + decoder.writableLength).toBeLessThanOrEqual(4096 * 2 + 1024);
    decoder.destroy();
  });
});
