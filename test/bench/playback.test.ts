import { describe, expect, it } from 'vitest';
import { replayPlayback } from '../../src/bench/playback.js';

const PCM = { sampleRate: 1000, channels: 1, bitDepth: 16 }; // 2 bytes per ms
const ms = (n: number) => n * 2;

describe('replayPlayback', () => {
  it('no underrun when all audio arrives at once', async () => {
    const arrivals = Array.from({ length: 50 }, () => ({ atMs: 10, bytes: ms(20) }));
    expect(await replayPlayback(arrivals, PCM)).toEqual({ underruns: 0, underrunMs: 0, audioMs: 1000 });
  });

  it('no underrun when audio arrives exactly as fast as it plays', async () => {
    const arrivals = Array.from({ length: 20 }, (_, i) => ({ atMs: i * 50, bytes: ms(50) }));
    expect((await replayPlayback(arrivals, PCM)).underruns).toBe(0);
  });

  it('counts each gap after the buffer ran dry, and the silence heard', async () => {
    // 100 ms of audio at 0, then 100 ms at 150 (50 ms of silence), then 100 ms at 400 (150 ms of silence).
    const arrivals = [
      { atMs: 0, bytes: ms(100) },
      { atMs: 150, bytes: ms(100) },
      { atMs: 400, bytes: ms(100) },
    ];
    const result = await replayPlayback(arrivals, PCM);
    expect(result.underruns).toBe(2);
    expect(result.underrunMs).toBeCloseTo(200, 6);
    expect(result.audioMs).toBe(300);
  });

  it('a late chunk after a long lead is no underrun while the buffered audio still plays', async () => {
    const arrivals = [
      { atMs: 0, bytes: ms(500) },
      { atMs: 450, bytes: ms(100) },
    ];
    expect((await replayPlayback(arrivals, PCM)).underruns).toBe(0);
  });

  it('nothing to play, nothing measured', async () => {
    expect(await replayPlayback([], PCM)).toEqual({ underruns: 0, underrunMs: 0, audioMs: 0 });
  });
});
