import { describe, expect, it } from 'vitest';
import { createStreamEncoder, encodeWhole, supportedFormats } from '../../../src/server/audio/encoder.js';
import { OggFlag } from '../../../src/server/audio/ogg.js';
import { loadOpusScript } from '../../../src/server/audio/opus.js';
import { readWavHeader, WAV_UNKNOWN_SIZE } from '../../../src/protocol/wav.js';
import { decodeMp3, decodeOggOpus, durationSeconds, ffmpegSampleCount, ffprobeDuration, mp3FrameLengths, oggPages, sineHz, sinePcm } from './helpers.js';
import { has } from '../../helpers/needs.js';

const INFO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
const INFO_22K = { sampleRate: 22_050, channels: 1, bitDepth: 16 };
const opusAvailable = loadOpusScript() !== undefined;
const ffprobeAvailable = has('ffprobe');
const ffmpegAvailable = has('ffmpeg');

/** Feeds `pcm` in uneven chunks (odd byte counts included), collecting every output. */
function encodeSegments(format: 'mp3' | 'opus', info: typeof INFO_24K, segments: Buffer[]): Buffer[] {
  const encoder = createStreamEncoder(format, info);
  const outputs: Buffer[] = [];
  segments.forEach((pcm, index) => {
    const parts: Buffer[] = [];
    for (let i = 0; i < pcm.length; i += 1001) parts.push(encoder.write(pcm.subarray(i, i + 1001)));
    parts.push(index === segments.length - 1 ? encoder.end() : encoder.endSegment());
    outputs.push(Buffer.concat(parts));
  });
  return outputs;
}

describe('supportedFormats', () => {
  it('lists pcm, wav and mp3, and opus exactly when opusscript loads', () => {
    const formats = supportedFormats();
    expect(formats).toEqual(expect.arrayContaining(['pcm', 'wav', 'mp3']));
    expect(formats.includes('opus')).toBe(opusAvailable);
  });
});

describe('pcm and wav', () => {
  it('passes pcm through', () => {
    const pcm = sinePcm(24_000, 0.1);
    const encoder = createStreamEncoder('pcm', INFO_24K);
    expect(Buffer.concat([encoder.write(pcm), encoder.endSegment(), encoder.end()]).equals(pcm)).toBe(true);
    expect(encodeWhole('pcm', pcm, INFO_24K)).toBe(pcm);
  });

  it('puts a streaming header on the first wav output only', () => {
    const pcm = sinePcm(24_000, 0.1);
    const encoder = createStreamEncoder('wav', INFO_24K);
    const first = encoder.write(pcm);
    const second = encoder.write(pcm);
    expect(readWavHeader(first)).toEqual({ status: 'header', header: { pcm: INFO_24K, dataOffset: 44, dataBytes: undefined } });
    expect(first.readUInt32LE(4)).toBe(WAV_UNKNOWN_SIZE);
    expect(first.subarray(44).equals(pcm)).toBe(true);
    expect(second.equals(pcm)).toBe(true);
    expect(encoder.endSegment().length).toBe(0);
  });

  it('writes the header even when a request ends without audio, and none when the stream started elsewhere', () => {
    expect(readWavHeader(createStreamEncoder('wav', INFO_24K).end()).status).toBe('header');
    const continuation = createStreamEncoder('wav', INFO_24K, { streamStart: false });
    expect(continuation.write(Buffer.from([1, 2])).equals(Buffer.from([1, 2]))).toBe(true);
  });

  it('encodes a whole wav file with exact sizes', () => {
    const pcm = sinePcm(22_050, 0.2);
    const file = encodeWhole('wav', pcm, INFO_22K);
    expect(readWavHeader(file)).toEqual({ status: 'header', header: { pcm: INFO_22K, dataOffset: 44, dataBytes: pcm.length } });
    expect(file.readUInt32LE(4)).toBe(file.length - 8);
  });
});

describe('mp3', () => {
  it.each([INFO_24K, INFO_22K])('round-trips through mpg123 with the right duration and pitch at $sampleRate Hz', async (info) => {
    const file = encodeWhole('mp3', sinePcm(info.sampleRate, 2, 440), info);
    mp3FrameLengths(file);
    const decoded = await decodeMp3(file);
    expect(decoded.errors).toBe(0);
    expect(decoded.sampleRate).toBe(info.sampleRate);
    expect(durationSeconds(decoded)).toBeGreaterThan(1.8);
    expect(durationSeconds(decoded)).toBeLessThan(2.2);
    expect(sineHz(decoded)).toBeCloseTo(440, -1);
  });

  it('ends every segment on a frame boundary; each segment and the whole stream decode', async () => {
    const segments = [sinePcm(24_000, 1, 300), sinePcm(24_000, 0.5, 500), sinePcm(24_000, 1.5, 700)];
    const outputs = encodeSegments('mp3', INFO_24K, segments);
    let total = 0;
    for (const [index, output] of outputs.entries()) {
      expect(() => mp3FrameLengths(output)).not.toThrow();
      const decoded = await decodeMp3(output);
      expect(decoded.errors).toBe(0);
      const expected = (segments[index]?.length ?? 0) / 2 / 24_000;
      expect(Math.abs(durationSeconds(decoded) - expected) / expected).toBeLessThan(0.15);
      total += durationSeconds(decoded);
    }
    const whole = await decodeMp3(Buffer.concat(outputs));
    expect(whole.errors).toBe(0);
    expect(durationSeconds(whole)).toBeCloseTo(total, 2);
    expect(total / 3).toBeGreaterThan(0.9);
    expect(total / 3).toBeLessThan(1.1);
  });

  it.skipIf(!ffprobeAvailable)('is read by ffprobe with the right duration (needs ffprobe)', () => {
    const duration = ffprobeDuration(encodeWhole('mp3', sinePcm(24_000, 3), INFO_24K), 'mp3') ?? 0;
    expect(duration).toBeGreaterThan(2.7);
    expect(duration).toBeLessThan(3.3);
  });
});

// opusscript is an optional dependency: without it opus is not offered at all.
describe.skipIf(!opusAvailable)('opus (needs opusscript)', () => {
  it.each([INFO_24K, INFO_22K])('round-trips through libopus with the right duration and pitch at $sampleRate Hz', async (info) => {
    const file = encodeWhole('opus', sinePcm(info.sampleRate, 2, 440), info);
    const decoded = await decodeOggOpus(file);
    expect(decoded.errors).toBe(0);
    // The EOS granule trims padding: the length is exact to the 48 kHz sample.
    expect(durationSeconds(decoded)).toBeCloseTo(2, 3);
    expect(sineHz(decoded)).toBeCloseTo(440, -1);
  });

  it('writes OpusHead and OpusTags pages, then audio pages, then EOS', () => {
    const pages = oggPages(encodeWhole('opus', sinePcm(22_050, 0.5), INFO_22K));
    expect(pages[0]?.flags).toBe(OggFlag.beginOfStream);
    expect(pages[0]?.body.toString('ascii', 0, 8)).toBe('OpusHead');
    expect(pages[0]?.body.readUInt16LE(10)).toBe(312); // pre-skip
    expect(pages[0]?.body.readUInt32LE(12)).toBe(22_050);
    expect(pages[1]?.body.toString('ascii', 0, 8)).toBe('OpusTags');
    expect(pages[1]?.granule).toBe(0n);
    const last = pages.at(-1);
    expect(last?.flags).toBe(OggFlag.endOfStream);
    expect(last?.granule).toBe(312n + 24_000n); // pre-skip + 0.5 s at 48 kHz
    expect(new Set(pages.map((p) => p.serial)).size).toBe(1);
    expect(pages.map((p) => p.sequence)).toEqual(pages.map((_, i) => i));
  });

  it('ends every segment on a page boundary; the stream decodes to the sum of the segments', async () => {
    const segments = [sinePcm(22_050, 1, 300), sinePcm(22_050, 0.5, 500), sinePcm(22_050, 1.5, 700)];
    const outputs = encodeSegments('opus', INFO_22K, segments);
    for (const output of outputs) expect(() => oggPages(output)).not.toThrow();
    // A stream cut at a segment boundary (a client that stops there) decodes.
    const firstOnly = await decodeOggOpus(outputs[0] ?? Buffer.alloc(0));
    expect(firstOnly.errors).toBe(0);
    expect(Math.abs(durationSeconds(firstOnly) - 1)).toBeLessThan(0.03);
    const whole = await decodeOggOpus(Buffer.concat(outputs));
    expect(whole.errors).toBe(0);
    // Each segment boundary adds at most one 20 ms frame of padding.
    expect(durationSeconds(whole)).toBeGreaterThanOrEqual(3);
    expect(durationSeconds(whole)).toBeLessThan(3 + 2 * 0.02 + 0.001);
  });

  it('streams: audio pages come out while writing, before the segment ends', () => {
    const encoder = createStreamEncoder('opus', INFO_24K);
    const first = encoder.write(sinePcm(24_000, 0.1));
    const pages = oggPages(first);
    expect(pages.length).toBeGreaterThan(2); // the two header pages and audio
    expect(pages.at(-1)?.granule).toBe(BigInt(5 * 960));
  });

  // ffmpeg (libavformat's Ogg demuxer) applies the pre-skip and the end trimming of
  // a stream whose only audio page is also its last; ogg-opus-decoder skips the trimming then.
  it.skipIf(!ffmpegAvailable)('is decoded by ffmpeg to the exact length, short and empty streams too (needs ffmpeg)', () => {
    expect(ffmpegSampleCount(encodeWhole('opus', sinePcm(24_000, 3), INFO_24K), 'opus', 48_000)).toBe(144_000);
    expect(ffmpegSampleCount(encodeWhole('opus', sinePcm(24_000, 0.01), INFO_24K), 'opus', 48_000)).toBe(480);
    const empty = createStreamEncoder('opus', INFO_24K).end();
    expect(oggPages(empty).at(-1)?.flags).toBe(OggFlag.endOfStream);
    expect(ffmpegSampleCount(empty, 'opus', 48_000)).toBe(0);
  });
});
