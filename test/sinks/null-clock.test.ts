import { describe, expect, it } from 'vitest';
import type { PcmInfo } from '../../src/protocol/audio.js';
import { ManualClock } from '../../src/sinks/clock.js';
import { NullClockSink, type Underrun } from '../../src/sinks/null-clock.js';

const MONO_24K: PcmInfo = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
/** Bytes of `ms` of 24 kHz mono s16. */
const ms = (n: number) => Buffer.alloc(n * 48);

/** Write one chunk; report whether its callback has fired, without waiting for it. */
function writeTracked(sink: NullClockSink, chunk: Buffer): { done: () => boolean } {
  let fired = false;
  sink.write(chunk, () => (fired = true));
  return { done: () => fired };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('NullClockSink', () => {
  it('accepts writes at once while the device buffer has room, then paces them at the sample rate', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(MONO_24K, { clock, deviceBufferMs: 100 });
    const first = writeTracked(sink, ms(50));
    const second = writeTracked(sink, ms(50));
    await tick();
    expect(first.done() && second.done()).toBe(true); // 100 ms queued: the buffer is exactly full
    const third = writeTracked(sink, ms(50));
    await tick();
    expect(third.done()).toBe(false); // 150 ms queued: waits until 50 ms have played
    clock.advance(49);
    await tick();
    expect(third.done()).toBe(false);
    clock.advance(1);
    await tick();
    expect(third.done()).toBe(true);
    expect(sink.bufferedMs).toBe(100);
    expect(sink.underruns).toBe(0);
  });

  it('counts an underrun when audio arrives after the buffer ran dry, with the silence it caused', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(MONO_24K, { clock });
    const seen: Underrun[] = [];
    sink.on('underrun', (underrun: Underrun) => seen.push(underrun));
    sink.write(ms(100));
    clock.advance(100); // played out exactly: no gap yet
    sink.write(ms(100));
    clock.advance(250); // dry since t=200
    sink.write(ms(40));
    clock.advance(30);
    sink.write(ms(40)); // still 10 ms queued: no underrun
    sink.end();
    clock.advance(100);
    const result = await sink.done;
    expect(seen).toEqual([{ atMs: 350, gapMs: 150, playedMs: 200 }]);
    expect(result).toMatchObject({ kind: 'null-clock', underruns: 1, underrunMs: 150, durationMs: 280, bytesIn: 280 * 48 });
  });

  it('drains the device buffer before finishing', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(MONO_24K, { clock });
    let finished = false;
    sink.on('finish', () => (finished = true));
    sink.end(ms(80));
    await tick();
    expect(finished).toBe(false);
    clock.advance(80);
    await sink.done;
    expect(finished).toBe(true);
  });

  it('finishes at once with drainOnEnd false, and ignores empty writes', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(MONO_24K, { clock, drainOnEnd: false });
    sink.write(Buffer.alloc(0));
    sink.end(ms(80));
    const result = await sink.done;
    expect(result.durationMs).toBe(80);
    expect(clock.pendingTimers).toBe(0);
  });

  it('paces a writer honouring backpressure to real time on the clock', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(MONO_24K, { clock, highWaterMark: 4800 }); // 100 ms
    let written = 0;
    const total = 2000; // ms of audio, in 20 ms chunks
    const writer = (async () => {
      while (written < total) {
        written += 20;
        if (!sink.write(ms(20))) await new Promise((resolve) => sink.once('drain', resolve));
      }
      sink.end();
    })();
    // Let the writer run freely, then advance the clock 100 ms at a time.
    await tick();
    const acceptedAtStart = written;
    let acceptedAfter1s = 0;
    for (let t = 100; t <= 2200; t += 100) {
      clock.advance(100);
      for (let i = 0; i < 5; i++) await tick();
      if (t === 1000) acceptedAfter1s = written;
    }
    await writer;
    const result = await sink.done;
    // Before the clock moved: 100 ms device buffer + 100 ms writable buffer + the write that overflowed it.
    expect(acceptedAtStart).toBeLessThanOrEqual(220);
    // After 1 s of clock: 1 s played plus the same buffers, no more.
    expect(acceptedAfter1s).toBeGreaterThanOrEqual(1000);
    expect(acceptedAfter1s).toBeLessThanOrEqual(1220);
    expect(result.durationMs).toBe(total);
    expect(result.underruns).toBe(0);
  });

  it('cancels its timer when destroyed', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(MONO_24K, { clock });
    sink.write(ms(500));
    sink.write(ms(500));
    await tick();
    expect(clock.pendingTimers).toBe(1);
    sink.destroy();
    await expect(sink.done).rejects.toMatchObject({ code: 'aborted' });
    expect(clock.pendingTimers).toBe(0);
  });
});
