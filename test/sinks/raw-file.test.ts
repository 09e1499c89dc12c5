import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { RawFileSink } from '../../src/sinks/raw-file.js';
import { chunksOf, sinePcm } from './audio-fixtures.js';
import { useTmpDir } from './tmpdir.js';

const tmp = useTmpDir('raw');

describe('RawFileSink', () => {
  it('writes the bytes exactly and reports the PCM duration', async () => {
    const pcm = sinePcm(16_000, 250);
    const path = tmp('tone.pcm');
    const sink = new RawFileSink(path, { pcm: { sampleRate: 16_000, channels: 1, bitDepth: 16 } });
    for (const chunk of chunksOf(pcm, 333)) sink.write(chunk);
    sink.end();
    const result = await sink.done;
    expect(readFileSync(path).equals(pcm)).toBe(true);
    expect(result).toMatchObject({ kind: 'raw-file', path, bytesIn: pcm.length, durationMs: 250 });
  });

  it('copies compressed bytes without claiming a duration', async () => {
    const bytes = Buffer.from('not pcm, any bytes at all');
    const path = tmp('copy.mp3');
    const sink = new RawFileSink(path);
    sink.end(bytes);
    const result = await sink.done;
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(result.durationMs).toBeUndefined();
  });
});
