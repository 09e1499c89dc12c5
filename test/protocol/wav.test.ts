/**
 * The one WAV module: the header every layer writes and the chunk
 * walker every layer reads with.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildWavHeader, readWavHeader, scanWav, unsupportedFmt, WAV_HEADER_BYTES, WAV_MAX_HEADER_BYTES, WAV_UNKNOWN_SIZE, wavHeaderLength } from '../../src/protocol/wav.js';
import { has } from '../helpers/needs.js';

const PCM = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

function chunk(id: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'ascii');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

describe('buildWavHeader', () => {
  it('writes exact sizes for a file, counting the data pad byte in RIFF', () => {
    const even = Buffer.from(buildWavHeader(PCM, 1000));
    expect(even.length).toBe(WAV_HEADER_BYTES);
    expect(even.readUInt32LE(4)).toBe(36 + 1000);
    expect(even.readUInt32LE(40)).toBe(1000);
    expect(even.readUInt32LE(28)).toBe(48_000); // byte rate
    const odd = Buffer.from(buildWavHeader({ ...PCM, bitDepth: 8 }, 1001));
    expect(odd.readUInt32LE(4)).toBe(36 + 1001 + 1);
  });

  it('writes the canonical 44-byte integer PCM header', () => {
    const h = Buffer.from(buildWavHeader(PCM, 48_000));
    expect(h.toString('ascii', 0, 4)).toBe('RIFF');
    expect(h.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(h.readUInt32LE(16)).toBe(16);
    expect(h.readUInt16LE(20)).toBe(1); // PCM
    expect(h.readUInt16LE(22)).toBe(1);
    expect(h.readUInt32LE(24)).toBe(24_000);
    expect(h.readUInt16LE(32)).toBe(2); // block align
    expect(h.readUInt16LE(34)).toBe(16);
    expect(h.toString('ascii', 36, 40)).toBe('data');
  });

  it('writes 0xFFFFFFFF sizes for a stream (no length given)', () => {
    const h = Buffer.from(buildWavHeader(PCM));
    expect(h.readUInt32LE(4)).toBe(WAV_UNKNOWN_SIZE);
    expect(h.readUInt32LE(40)).toBe(WAV_UNKNOWN_SIZE);
  });
});

describe('scanWav', () => {
  it('reads back what buildWavHeader wrote', () => {
    const scan = scanWav(buildWavHeader({ sampleRate: 22_050, channels: 2, bitDepth: 16 }, 400));
    expect(scan).toEqual({ status: 'header', dataOffset: 44, dataBytes: 400, fmt: { format: 1, channels: 2, sampleRate: 22_050, bitDepth: 16 } });
  });

  it('walks LIST and odd-sized chunks before data, as ffmpeg and sox write them', () => {
    const fmt = Buffer.from(buildWavHeader(PCM, 10)).subarray(12, 36);
    const riff = Buffer.from('RIFF\0\0\0\0WAVE', 'latin1');
    const bytes = Buffer.concat([riff, fmt, chunk('LIST', Buffer.from('INFOabc')), chunk('data', Buffer.alloc(10))]);
    const scan = scanWav(bytes);
    expect(scan.status).toBe('header');
    if (scan.status === 'header') expect(scan.dataOffset).toBe(12 + 24 + 8 + 8 + 8);
    expect(wavHeaderLength(bytes)).toBe(12 + 24 + 16 + 8);
  });

  it('takes the sub-format of WAVE_FORMAT_EXTENSIBLE', () => {
    const body = Buffer.alloc(40);
    body.writeUInt16LE(0xfffe, 0);
    body.writeUInt16LE(1, 2);
    body.writeUInt32LE(16_000, 4);
    body.writeUInt16LE(16, 14);
    body.writeUInt16LE(3, 24); // IEEE float sub-format
    const bytes = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), chunk('fmt ', body), chunk('data', Buffer.alloc(4))]);
    const scan = scanWav(bytes);
    expect(scan.status === 'header' && scan.fmt?.format).toBe(3);
    expect(scan.status === 'header' && unsupportedFmt(scan.fmt)).toMatch(/format tag 3 is not integer PCM/);
  });

  it('says incomplete before the data chunk, invalid for what is not WAV', () => {
    const h = buildWavHeader(PCM, 10);
    expect(scanWav(h.subarray(0, 30)).status).toBe('incomplete');
    expect(scanWav(Buffer.from('ID3\x04 mp3 bytes here', 'latin1'))).toEqual({ status: 'invalid', reason: 'missing RIFF' });
    expect(scanWav(Buffer.from('RIFF\0\0\0\0AVI LIST', 'latin1'))).toEqual({ status: 'invalid', reason: 'missing WAVE' });
    // A chunk claiming to run past the bound: no reader waits for a megabyte of header.
    const huge = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), Buffer.from('JUNK', 'latin1'), Buffer.from([0xff, 0xff, 0xff, 0x7f])]);
    expect(scanWav(huge).status).toBe('invalid');
    expect(WAV_MAX_HEADER_BYTES).toBe(1024 * 1024);
  });

  it('a 0 data size (other streaming writers) is unknown, as 0xFFFFFFFF is', () => {
    const h = Buffer.from(buildWavHeader(PCM, 0));
    const scan = scanWav(h);
    expect(scan.status === 'header' && scan.dataBytes).toBeUndefined();
  });
});

describe('wavHeaderLength', () => {
  it('is the header length of a frame that starts with one, undefined for plain audio', () => {
    const frame = Buffer.concat([buildWavHeader(PCM), Buffer.alloc(480)]);
    expect(wavHeaderLength(frame)).toBe(44);
    expect(wavHeaderLength(Buffer.alloc(480))).toBeUndefined();
    expect(wavHeaderLength(new Uint8Array(10))).toBeUndefined();
  });
});

describe('readWavHeader', () => {
  it('reads back what buildWavHeader wrote, streaming or not', () => {
    expect(readWavHeader(buildWavHeader(PCM, 1000))).toEqual({ status: 'header', header: { pcm: PCM, dataOffset: 44, dataBytes: 1000 } });
    expect(readWavHeader(buildWavHeader(PCM))).toEqual({ status: 'header', header: { pcm: PCM, dataOffset: 44, dataBytes: undefined } });
  });

  it('says incomplete before the data chunk; invalid, with the reason, for float or what is not WAV', () => {
    expect(readWavHeader(buildWavHeader(PCM).subarray(0, 40))).toEqual({ status: 'incomplete' });
    expect(readWavHeader(Buffer.from('RIFF\0\0\0\0AVI LIST', 'latin1'))).toEqual({ status: 'invalid', reason: 'missing WAVE' });
    const float = Buffer.from(buildWavHeader(PCM, 4));
    float.writeUInt16LE(3, 20); // IEEE float
    expect(readWavHeader(float)).toEqual({ status: 'invalid', reason: 'format tag 3 is not integer PCM' });
    expect(readWavHeader(float, { anyBitDepth: true }).status).toBe('invalid');
  });

  it('takes 16-bit only, unless told any integer depth will do (the server reads uploads of 8 to 32 bits)', () => {
    const pcm24 = { ...PCM, bitDepth: 24 };
    expect(readWavHeader(buildWavHeader(pcm24, 6))).toEqual({ status: 'invalid', reason: '24-bit samples are not supported (16-bit only)' });
    expect(readWavHeader(buildWavHeader(pcm24, 6), { anyBitDepth: true })).toEqual({ status: 'header', header: { pcm: pcm24, dataOffset: 44, dataBytes: 6 } });
  });

  it.skipIf(!has('ffmpeg'))('walks the extra chunks ffmpeg writes (needs ffmpeg)', () => {
    const result = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.5:sample_rate=16000', '-ac', '1', '-c:a', 'pcm_s16le', '-f', 'wav', '-'], { maxBuffer: 1 << 22 });
    const file = result.stdout;
    const read = readWavHeader(file);
    if (read.status !== 'header') throw new Error(`ffmpeg's WAV read as ${read.status}`);
    expect(read.header.pcm).toEqual({ sampleRate: 16_000, channels: 1, bitDepth: 16 });
    expect(read.header.dataOffset).toBeGreaterThan(44); // a LIST chunk sits before data
    expect(file.length - read.header.dataOffset).toBe(16_000); // 0.5 s of 16-bit mono
  });
});
