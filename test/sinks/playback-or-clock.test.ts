import { describe, expect, it } from 'vitest';
import { openPlaybackOrClock } from '../../src/sinks/index.js';

describe('openPlaybackOrClock', () => {
  it('falls back to a clock-paced null sink when nothing can play, and plays the audio out', async () => {
    const info = { format: 'pcm' as const, sampleRate: 8_000, channels: 1, bitDepth: 16 };
    // No playback backend to try: the fallback is certain on any machine.
    const { sink, playing } = await openPlaybackOrClock(info, { backends: [] });
    expect(playing).toBe(false);
    expect(sink.kind).toBe('null-clock');
    sink.end(Buffer.alloc(8_000 * 2 * 0.2)); // 200 ms of silence
    const result = await sink.done;
    expect(result.bytesIn).toBe(3_200);
    expect(result.durationMs).toBeCloseTo(200, 0);
  });
});
