import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseWavHeader, WAV_HEADER_BYTES, WAV_STREAMING_SIZE, wavHeader } from '../../../src/server/audio/wav.js';
import { hasCommand } from './helpers.js';

const INFO = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

describe('wavHeader', () => {
  it('writes the canonical 44-byte PCM header with exact sizes', () => {
    const header = wavHeader(INFO, 48_000);
    expect(header.length).toBe(WAV_HEADER_BYTES);
    expect(header.toString('ascii', 0, 4)).toBe('RIFF');
    expect(header.readUInt32LE(4)).toBe(36 + 48_000);
    expect(header.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(header.readUInt32LE(16)).toBe(16);
    expect(header.readUInt16LE(20)).toBe(1); // PCM
    expect(header.readUInt16LE(22)).toBe(1);
    expect(header.readUInt32LE(24)).toBe(24_000);
    expect(header.readUInt32LE(28)).toBe(48_000); // byte rate
    expect(header.readUInt16LE(32)).toBe(2); // block align
    expect(header.readUInt16LE(34)).toBe(16);
    expect(header.toString('ascii', 36, 40)).toBe('data');
    expect(header.readUInt32LE(40)).toBe(48_000);
  });

  it('writes 0xFFFFFFFF sizes for a stream', () => {
    const header = wavHeader({ sampleRate: 22_050, channels: 2, bitDepth: 16 });
    expect(header.readUInt32LE(4)).toBe(WAV_STREAMING_SIZE);
    expect(header.readUInt32LE(40)).toBe(WAV_STREAMING_SIZE);
    expect(header.readUInt32LE(28)).toBe(22_050 * 4);
  });
});

describe('parseWavHeader', () => {
  it('reads back what wavHeader wrote, streaming or not', () => {
    expect(parseWavHeader(wavHeader(INFO, 1000))).toEqual({ info: INFO, dataOffset: 44, dataBytes: 1000 });
    expect(parseWavHeader(wavHeader(INFO))).toEqual({ info: INFO, dataOffset: 44, dataBytes: undefined });
  });

  it('rejects what is not a complete PCM WAV header', () => {
    expect(parseWavHeader(Buffer.from('RIFF'))).toBeUndefined();
    expect(parseWavHeader(wavHeader(INFO).subarray(0, 40))).toBeUndefined();
    const float = wavHeader(INFO, 4);
    float.writeUInt16LE(3, 20); // IEEE float
    expect(parseWavHeader(float)).toBeUndefined();
  });

  it.skipIf(!hasCommand('ffmpeg'))('walks the extra chunks ffmpeg writes (needs ffmpeg)', () => {
    const result = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.5:sample_rate=16000', '-ac', '1', '-c:a', 'pcm_s16le', '-f', 'wav', '-'], { maxBuffer: 1 << 22 });
    const file = result.stdout;
    const parsed = parseWavHeader(file);
    expect(parsed?.info).toEqual({ sampleRate: 16_000, channels: 1, bitDepth: 16 });
    expect(parsed?.dataOffset).toBeGreaterThan(44); // a LIST chunk sits before data
    expect(file.length - (parsed?.dataOffset ?? 0)).toBe(16_000); // 0.5 s of 16-bit mono
  });
});
