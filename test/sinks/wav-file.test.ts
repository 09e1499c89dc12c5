import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { AbortError, VoxpipeError } from '../../src/errors.js';
import type { PcmInfo } from '../../src/protocol/audio.js';
import { WavFileSink } from '../../src/sinks/wav-file.js';
import { chunksOf, sinePcm } from './audio-fixtures.js';
import { useTmpDir } from './tmpdir.js';

const tmp = useTmpDir('wav');
const MONO_24K: PcmInfo = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

/** Every field of a canonical 44-byte header. */
function headerFields(file: Buffer) {
  return {
    riff: file.toString('ascii', 0, 4),
    riffSize: file.readUInt32LE(4),
    wave: file.toString('ascii', 8, 12),
    fmt: file.toString('ascii', 12, 16),
    fmtSize: file.readUInt32LE(16),
    formatTag: file.readUInt16LE(20),
    channels: file.readUInt16LE(22),
    sampleRate: file.readUInt32LE(24),
    byteRate: file.readUInt32LE(28),
    blockAlign: file.readUInt16LE(32),
    bitDepth: file.readUInt16LE(34),
    data: file.toString('ascii', 36, 40),
    dataSize: file.readUInt32LE(40),
  };
}

async function writeAll(sink: WavFileSink, chunks: Buffer[]) {
  for (const chunk of chunks) sink.write(chunk);
  sink.end();
  return sink.done;
}

describe('WavFileSink', () => {
  it('writes a header whose sizes are patched on finish', async () => {
    const pcm = sinePcm(24_000, 500);
    const path = tmp('tone.wav');
    const result = await writeAll(new WavFileSink(path, MONO_24K), chunksOf(pcm, 999));
    const file = readFileSync(path);
    expect(headerFields(file)).toEqual({
      riff: 'RIFF', riffSize: 36 + pcm.length, wave: 'WAVE', fmt: 'fmt ', fmtSize: 16, formatTag: 1,
      channels: 1, sampleRate: 24_000, byteRate: 48_000, blockAlign: 2, bitDepth: 16, data: 'data', dataSize: pcm.length,
    });
    expect(file.subarray(44).equals(pcm)).toBe(true);
    expect(result).toMatchObject({ kind: 'wav-file', path, bytesIn: pcm.length, durationMs: 500, pcm: MONO_24K });
  });

  it('writes stereo layout fields', async () => {
    const stereo: PcmInfo = { sampleRate: 48_000, channels: 2, bitDepth: 16 };
    const path = tmp('stereo.wav');
    await writeAll(new WavFileSink(path, stereo), [sinePcm(48_000, 100, 2)]);
    expect(headerFields(readFileSync(path))).toMatchObject({ channels: 2, sampleRate: 48_000, byteRate: 192_000, blockAlign: 4, dataSize: 19_200 });
  });

  it('is a valid empty WAV when no audio arrives', async () => {
    const path = tmp('empty.wav');
    const result = await writeAll(new WavFileSink(path, MONO_24K), []);
    const file = readFileSync(path);
    expect(file.length).toBe(44);
    expect(headerFields(file)).toMatchObject({ riffSize: 36, dataSize: 0 });
    expect(result.durationMs).toBe(0);
  });

  it('pads odd data to a word boundary without counting the pad byte', async () => {
    const path = tmp('odd.wav');
    await writeAll(new WavFileSink(path, MONO_24K), [Buffer.alloc(101, 1)]);
    const file = readFileSync(path);
    expect(file.length).toBe(44 + 102);
    expect(headerFields(file)).toMatchObject({ riffSize: 36 + 102, dataSize: 101 });
  });

  it('keeps a streaming header while writing, so a file cut short still plays', async () => {
    const path = tmp('partial.wav');
    const sink = new WavFileSink(path, MONO_24K);
    await new Promise<void>((resolve) => sink.write(Buffer.alloc(480), () => resolve()));
    expect(headerFields(readFileSync(path))).toMatchObject({ riffSize: 0xffffffff, dataSize: 0xffffffff });
    sink.end();
    await sink.done;
    expect(headerFields(readFileSync(path)).dataSize).toBe(480);
  });

  it('rejects done with a typed error when the file cannot be opened', async () => {
    const sink = new WavFileSink(tmp('missing-dir/x.wav'), MONO_24K);
    sink.end(Buffer.alloc(10));
    const error: unknown = await sink.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoxpipeError);
    expect((error as VoxpipeError).code).toBe('sink_failed');
    expect((error as Error).message).toMatch(/ENOENT/);
  });

  it('rejects done with AbortError when destroyed before end()', async () => {
    const sink = new WavFileSink(tmp('aborted.wav'), MONO_24K);
    sink.write(Buffer.alloc(10));
    sink.destroy();
    await expect(sink.done).rejects.toBeInstanceOf(AbortError);
  });
});
