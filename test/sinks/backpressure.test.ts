import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { pcmDurationMs } from '../../src/protocol/audio.js';
import { ManualClock } from '../../src/sinks/clock.js';
import { DecodingSink } from '../../src/sinks/compose.js';
import { NullClockSink } from '../../src/sinks/null-clock.js';
import type { AudioInfo } from '../../src/sinks/types.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../../src/sinks/wav-header.js';
import { chunksOf, encodeMp3, sinePcm } from './audio-fixtures.js';

const MONO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
const HWM = 8 * 1024;
const CHUNK = 4800;

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A source that counts what has been read from it. */
function countingSource(bytes: Buffer): { stream: Readable; read: () => number } {
  let read = 0;
  const chunks = chunksOf(bytes, CHUNK);
  const stream = new Readable({
    highWaterMark: CHUNK,
    read() {
      const chunk = chunks.shift();
      if (chunk) read += chunk.length;
      this.push(chunk ?? null);
    },
  });
  return { stream, read: () => read };
}

/** A decoding sink in front of a clocked null sink that stalls while the clock stands still. */
function stalledSink(info: AudioInfo, clock: ManualClock) {
  let inner: NullClockSink | undefined;
  const sink = new DecodingSink(info, 'null-clock', (pcm) => (inner = new NullClockSink(pcm, { clock, highWaterMark: HWM })), { highWaterMark: HWM });
  return { sink, inner: () => inner };
}

describe.each([
  ['wav', Buffer.concat([buildWavHeader(MONO_24K, WAV_UNKNOWN_SIZE), sinePcm(24_000, 3_000)]), 3_000],
  ['mp3', encodeMp3(sinePcm(24_000, 10_000), 24_000), 10_000],
] as const)('a stalled %s sink', (format, bytes, audioMs) => {
  it('stops taking input, buffers no more than its bounds, then completes with nothing lost', async () => {
    const clock = new ManualClock();
    const { sink, inner } = stalledSink({ format, ...MONO_24K }, clock);
    const source = countingSource(bytes);
    source.stream.pipe(sink);
    // The mp3 decoder compiles its WebAssembly in real time: wait for its first output, then let the chain fill.
    await once(sink.decoder, 'info');
    await ticks(50); // the device stands still: nothing plays

    const readWhileStalled = source.read();
    expect(readWhileStalled).toBeLessThan(bytes.length);
    expect(sink.writableNeedDrain).toBe(true);
    expect(sink.writableLength).toBeLessThanOrEqual(HWM + CHUNK);
    // Every buffer along the chain is bounded: decoder sides and the PCM sink, in PCM bytes for mp3.
    const held = sink.decoder.writableLength + sink.decoder.readableLength + (inner()?.writableLength ?? 0);
    expect(held).toBeLessThanOrEqual(4 * HWM + 16 * CHUNK);
    await ticks(50);
    expect(source.read()).toBe(readWhileStalled); // still stalled: no creeping growth

    for (let i = 0; i < 1000 && !sink.writableFinished; i++) {
      clock.advance(100);
      await ticks(5);
    }
    const result = await sink.done;
    expect(result.bytesIn).toBe(bytes.length);
    const decodedMs = pcmDurationMs(sink.decoder.pcmBytesOut, MONO_24K);
    expect(result.durationMs).toBeCloseTo(decodedMs, 6);
    expect(decodedMs).toBeGreaterThanOrEqual(audioMs); // mp3 adds encoder delay and padding
  });
});
