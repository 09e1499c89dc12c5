import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sinks/clock.js';
import { NullClockSink } from '../../src/sinks/null-clock.js';
import { PlayHead } from '../../src/sinks/play-head.js';
import { SpeakerSink } from '../../src/sinks/speaker.js';

// 8 kHz mono s16: 16 bytes a millisecond.
const PCM = { sampleRate: 8_000, channels: 1, bitDepth: 16 } as const;

describe('played position', () => {
  it('the play head runs at the PCM rate from the first write, waits through an underrun and never passes what was written', () => {
    const clock = new ManualClock();
    const head = new PlayHead(PCM, clock);
    expect(head.playedBytes).toBe(0);
    head.wrote(16 * 100); // 100 ms
    clock.advance(40);
    expect(head.playedBytes).toBe(16 * 40);
    clock.advance(100); // ran dry at 100 ms
    expect(head.playedBytes).toBe(16 * 100);
    head.wrote(16 * 50); // resumes now, at 140 ms
    clock.advance(25);
    expect(head.playedBytes).toBe(16 * 125);
    head.stop();
    clock.advance(1000);
    expect(head.playedBytes).toBe(16 * 125);
  });

  it('counts whole frames only', () => {
    const clock = new ManualClock();
    const head = new PlayHead({ sampleRate: 1_000, channels: 2, bitDepth: 16 }, clock); // 4 bytes a ms
    head.wrote(400);
    clock.advance(10.5);
    expect(head.playedBytes).toBe(40);
  });

  it('the clock sink reports what left its device buffer', async () => {
    const clock = new ManualClock();
    const sink = new NullClockSink(PCM, { clock, deviceBufferMs: 100 });
    sink.write(Buffer.alloc(16 * 300)); // 300 ms
    expect(sink.playedBytes).toBe(0);
    clock.advance(120);
    expect(sink.playedBytes).toBe(16 * 120);
    clock.advance(500);
    expect(sink.playedBytes).toBe(16 * 300);
    sink.end();
    await sink.done;
  });

  it('the speaker sink reports what its device played by the clock, and stops where it was aborted', () => {
    const clock = new ManualClock();
    const device = Object.assign(
      new Writable({
        highWaterMark: 1 << 20,
        write: (_chunk, _encoding, callback) => callback(),
      }),
      { close: () => undefined },
    );
    const sink = new SpeakerSink(PCM, device, { clock });
    sink.write(Buffer.alloc(16 * 200));
    clock.advance(50);
    expect(sink.playedBytes).toBe(16 * 50);
    sink.destroy(new Error('barge-in'));
    sink.done.catch(() => undefined);
    clock.advance(100);
    expect(sink.playedBytes).toBe(16 * 50);
  });
});
