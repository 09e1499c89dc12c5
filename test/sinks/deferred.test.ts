/**
 * DeferredSink on a failure upstream (a run that stops part-way, `say`'s
 * pipeline destroying every stage at once): a file keeps every byte already
 * handed to it, its WAV header patched to what it holds; found by
 * test/cli/long-text.test.ts ("says what the file kept") under load, where
 * the chunks queued for the file's writes were dropped.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { DeferredSink } from '../../src/sinks/deferred.js';
import { RawFileSink } from '../../src/sinks/raw-file.js';
import { WavFileSink } from '../../src/sinks/wav-file.js';
import { chunksOf, sinePcm } from './audio-fixtures.js';
import { useTmpDir } from './tmpdir.js';

const tmp = useTmpDir('deferred');
const MONO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 } as const;

/** Write `pcm` in small chunks, wait until the deferred sink handed them all to the file (queued there, most not written yet), then fail upstream. */
async function failAfterHandingOver(sink: DeferredSink, pcm: Buffer): Promise<void> {
  for (const chunk of chunksOf(pcm, 512)) sink.write(chunk);
  while (sink.writableLength > 0) await new Promise((resolve) => setImmediate(resolve));
  const errors: Error[] = [];
  sink.on('error', (err: Error) => errors.push(err));
  const closed = new Promise((resolve) => sink.once('close', resolve));
  sink.destroy(new Error('upstream failed'));
  await closed;
  expect(errors.map((e) => e.message)).toEqual(['upstream failed']); // the failure still says itself
  await sink.done.catch(() => undefined);
}

describe('DeferredSink: a failure upstream', () => {
  it('a raw file keeps every byte handed to it', async () => {
    const pcm = sinePcm(24_000, 2_000);
    const path = tmp('kept.pcm');
    const sink = new DeferredSink(async () => new RawFileSink(path, { pcm: MONO_24K }));
    await failAfterHandingOver(sink, pcm);
    expect(readFileSync(path).equals(pcm)).toBe(true);
  });

  it('a WAV file keeps every byte, its header patched to them', async () => {
    const pcm = sinePcm(24_000, 2_000);
    const path = tmp('kept.wav');
    const sink = new DeferredSink(async () => new WavFileSink(path, MONO_24K));
    await failAfterHandingOver(sink, pcm);
    const file = readFileSync(path);
    expect(file.length).toBe(44 + pcm.length);
    expect(file.readUInt32LE(40)).toBe(pcm.length);
    expect(file.subarray(44).equals(pcm)).toBe(true);
  });
});
