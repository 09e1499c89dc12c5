/**
 * mp3 and opus metadata is what the stream holds, not a default.
 * The probe reads the first frame; with espeak (22.05 kHz) the summary's
 * `ready.sampleRate` of an mp3 stream matches what ffprobe reads.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeEncodedLayout } from '../../src/protocol/audio-probe.js';
import { buildWavHeader } from '../../src/protocol/wav.js';
import { startServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { has } from '../helpers/needs.js';

const hasEspeak = has('espeak');

/** An MPEG audio frame header: version (3 MPEG-1, 2 MPEG-2), sample-rate index, mono or not. */
function mpegHeader(version: number, rateIndex: number, mono: boolean): Uint8Array {
  return Uint8Array.from([0xff, 0xe0 | (version << 3) | (1 << 1) | 1, (9 << 4) | (rateIndex << 2), mono ? 0xc0 : 0x00]);
}

describe('probeEncodedLayout', () => {
  it.each([
    [3, 0, true, 44_100, 1],
    [2, 0, true, 22_050, 1],
    [2, 1, false, 24_000, 2],
    [0, 2, true, 8_000, 1],
  ])('mp3 version %i rate index %i mono %s: %i Hz, %i channel(s)', (version, rate, mono, sampleRate, channels) => {
    expect(probeEncodedLayout('mp3', mpegHeader(version, rate, mono))).toEqual({ sampleRate, channels });
  });

  it('skips an ID3v2 tag and junk before the first frame', () => {
    const id3 = Uint8Array.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 3, 1, 2, 3]);
    const bytes = Uint8Array.from([...id3, 0x00, 0x12, ...mpegHeader(2, 0, true)]);
    expect(probeEncodedLayout('mp3', bytes)).toEqual({ sampleRate: 22_050, channels: 1 });
  });

  it('opus decodes at 48 kHz; channels from OpusHead', () => {
    const head = Buffer.concat([Buffer.from('OggS....'), Buffer.from('OpusHead'), Buffer.from([1, 2, 0, 0, 0x22, 0x56, 0, 0])]);
    expect(probeEncodedLayout('opus', head)).toEqual({ sampleRate: 48_000, channels: 2 });
  });

  it('wav: the layout of its fmt chunk, once the header is whole', () => {
    const header = buildWavHeader({ sampleRate: 22_050, channels: 2, bitDepth: 16 });
    expect(probeEncodedLayout('wav', header)).toEqual({ sampleRate: 22_050, channels: 2 });
    expect(probeEncodedLayout('wav', header.subarray(0, 30))).toBeUndefined();
  });

  it('says nothing for pcm or bytes that announce nothing', () => {
    expect(probeEncodedLayout('pcm', Uint8Array.from([1, 2, 3]))).toBeUndefined();
    expect(probeEncodedLayout('mp3', Uint8Array.from([1, 2, 3, 4, 5]))).toBeUndefined();
  });
});

describe.skipIf(!hasEspeak)('an mp3 stream from espeak (22.05 kHz)', () => {
  it("summary().ready.sampleRate is the stream's rate, and ffprobe agrees", async () => {
    const server = await startServer({ engine: 'espeak' });
    const dir = mkdtempSync(join(tmpdir(), 'voxpipe-layout-'));
    try {
      const speech = await createSpeechStream(serviceConfigOf(server), { format: 'mp3' });
      speech.end('What rate is this?');
      const chunks: Buffer[] = [];
      for await (const c of speech) chunks.push(c as Buffer);
      expect(speech.summary().ready?.sampleRate).toBe(22_050);
      if (has('ffprobe')) {
        const file = join(dir, 'x.mp3');
        writeFileSync(file, Buffer.concat(chunks));
        const probed = execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=sample_rate', '-of', 'csv=p=0', file], { encoding: 'utf8' });
        expect(Number(probed.trim())).toBe(22_050);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    }
  });
});
