import { describe, expect, it } from 'vitest';
import { buildWavHeader, parseWavHeader, WAV_MAX_HEADER_BYTES, WAV_UNKNOWN_SIZE } from '../../src/sinks/wav-header.js';

const MONO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

/** A header with a WAVE_FORMAT_EXTENSIBLE fmt chunk (40 bytes) whose sub-format is `subFormat`. */
function extensibleHeader(subFormat: number): Buffer {
  const fmt = Buffer.alloc(40);
  fmt.writeUInt16LE(0xfffe, 0);
  fmt.writeUInt16LE(2, 2);
  fmt.writeUInt32LE(44_100, 4);
  fmt.writeUInt32LE(44_100 * 4, 8);
  fmt.writeUInt16LE(4, 12);
  fmt.writeUInt16LE(16, 14);
  fmt.writeUInt16LE(22, 16);
  fmt.writeUInt16LE(subFormat, 24);
  const chunkHeader = (id: string, size: number) => Buffer.concat([Buffer.from(id, 'ascii'), Buffer.from(Uint32Array.of(size).buffer)]);
  return Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), chunkHeader('fmt ', 40), fmt, chunkHeader('data', 8)]);
}

describe('parseWavHeader', () => {
  it('round-trips the header it builds, streaming or sized', () => {
    expect(parseWavHeader(buildWavHeader(MONO_24K, 1000))).toEqual({ pcm: MONO_24K, dataOffset: 44, dataBytes: 1000 });
    expect(parseWavHeader(buildWavHeader(MONO_24K, WAV_UNKNOWN_SIZE))?.dataBytes).toBeUndefined();
  });

  it('needs more bytes until the data chunk starts', () => {
    const header = buildWavHeader(MONO_24K, 1000);
    for (let n = 0; n < 44; n++) expect(parseWavHeader(header.subarray(0, n))).toBeUndefined();
  });

  it('reads WAVE_FORMAT_EXTENSIBLE with a PCM sub-format and rejects float', () => {
    expect(parseWavHeader(extensibleHeader(1))).toEqual({ pcm: { sampleRate: 44_100, channels: 2, bitDepth: 16 }, dataOffset: 68, dataBytes: 8 });
    expect(() => parseWavHeader(extensibleHeader(3))).toThrow(/format tag 3/);
  });

  it('gives up on a header with no data chunk in the first MiB', () => {
    const junk = Buffer.concat([Buffer.from('JUNK'), Buffer.from(Uint32Array.of(WAV_MAX_HEADER_BYTES).buffer), Buffer.alloc(WAV_MAX_HEADER_BYTES)]);
    const bytes = Buffer.concat([buildWavHeader(MONO_24K, 0).subarray(0, 36), junk]);
    expect(() => parseWavHeader(bytes)).toThrow(/no data chunk/);
  });
});
