/**
 * Seams: the measure reads the silence on each side of a
 * join and the jump at it; the playback policy trims a long pause to a
 * natural one and fades a click away, leaves audio away from seams alone,
 * and gives the same output however the input is chunked.
 */
import { describe, expect, it } from 'vitest';
import { measureSeams, SeamSmoother, smoothSeamChunks, smoothSeams } from '../../src/sinks/seams.js';

const RATE = 8000;
const ms = (n: number) => Math.round((n * RATE) / 1000);

function tone(samples: number, amplitude = 8000, phase = 0): number[] {
  return Array.from({ length: samples }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 200 * i) / RATE + phase)));
}
const silence = (samples: number) => new Array<number>(samples).fill(0);

/** Segment A ends in 600 ms of silence; B starts with 400 ms of it. C joins B mid-waveform (a click). */
function fixture(): { pcm: Int16Array; boundaries: number[] } {
  const a = [...tone(ms(300)), ...silence(ms(600))];
  const b = [...silence(ms(400)), ...tone(ms(300))];
  const c = tone(ms(300), 8000, Math.PI / 2); // starts at its peak
  return { pcm: Int16Array.from([...a, ...b, ...c]), boundaries: [a.length, a.length + b.length] };
}

describe('measureSeams', () => {
  it('reads the silence on each side of every seam and the jump at it', () => {
    const { pcm, boundaries } = fixture();
    const [first, second] = measureSeams(pcm, boundaries, RATE);
    expect(first!.silenceBeforeMs).toBeCloseTo(600, 0);
    expect(first!.silenceAfterMs).toBeCloseTo(400, 0);
    expect(first!.gapMs).toBeCloseTo(1000, 0);
    expect(first!.click).toBe(false);
    expect(second!.silenceBeforeMs).toBeLessThan(1);
    expect(second!.silenceAfterMs).toBe(0);
    expect(second!.jump).toBeGreaterThan(4000);
    expect(second!.click).toBe(true);
    expect(second!.atMs).toBeCloseTo(300 + 600 + 400 + 300, 3);
  });
});

describe('SeamSmoother', () => {
  it('trims a 1 s pause to 250 ms and fades the click, leaving the rest of the audio as it was', () => {
    const { pcm, boundaries } = fixture();
    const out = smoothSeams(pcm, boundaries, RATE);
    const seams = measureSeams(out.pcm, out.boundaries, RATE);
    expect(seams).toHaveLength(2);
    expect(seams[0]!.gapMs).toBeCloseTo(250, 0);
    expect(seams[0]!.silenceBeforeMs).toBeCloseTo(250, 0); // the start of the trailing silence is kept
    expect(seams.every((s) => !s.click)).toBe(true);
    // Two fades: C's click, and the onset of B that trimming its leading silence laid bare.
    expect(out.fades).toBe(2);
    expect(out.trimmedMs).toBeCloseTo(750, 0);
    expect(out.pcm.length).toBe(pcm.length - Math.round((out.trimmedMs * RATE) / 1000));
    // The first 300 ms of speech are untouched, and so is C past its fade.
    expect(Array.from(out.pcm.subarray(0, ms(300)))).toEqual(Array.from(pcm.subarray(0, ms(300))));
    const fade = ms(5);
    expect(Array.from(out.pcm.subarray(out.boundaries[1]! + fade))).toEqual(Array.from(pcm.subarray(boundaries[1]! + fade)));
  });

  it('leaves a natural pause and a smooth join alone', () => {
    const a = [...tone(ms(200)), ...silence(ms(100))];
    const b = [...silence(ms(100)), ...tone(ms(200))];
    const pcm = Int16Array.from([...a, ...b]);
    const out = smoothSeams(pcm, [a.length], RATE);
    expect(Array.from(out.pcm)).toEqual(Array.from(pcm));
    expect(out.boundaries).toEqual([a.length]);
  });

  it('gives the same output however the chunks fall', () => {
    const { pcm, boundaries } = fixture();
    const whole = smoothSeams(pcm, boundaries, RATE).pcm;
    const smoother = new SeamSmoother(RATE);
    const starts = [0, ...boundaries, pcm.length];
    const parts: number[] = [];
    for (let k = 0; k < starts.length - 1; k++) {
      for (let i = starts[k]!; i < starts[k + 1]!; i += 37) parts.push(...smoother.push(`seg-${k}`, pcm.subarray(i, Math.min(i + 37, starts[k + 1]!))));
    }
    parts.push(...smoother.end());
    expect(parts).toEqual(Array.from(whole));
  });
});

describe('smoothSeamChunks (between speech.chunks() and a playback sink)', () => {
  it('yields the smoothed PCM of a chunk stream, the same as over the whole buffer', async () => {
    const { pcm, boundaries } = fixture();
    const starts = [0, ...boundaries, pcm.length];
    async function* chunks() {
      for (let k = 0; k < starts.length - 1; k++) {
        for (let i = starts[k]!; i < starts[k + 1]!; i += 501) {
          const piece = pcm.subarray(i, Math.min(i + 501, starts[k + 1]!));
          const data = Buffer.alloc(piece.length * 2);
          piece.forEach((v, j) => data.writeInt16LE(v, j * 2));
          yield { data, segmentId: `seg-${k}`, sampleRate: RATE, channels: 1, format: 'pcm' };
        }
      }
    }
    const out: Buffer[] = [];
    for await (const b of smoothSeamChunks(chunks())) out.push(b);
    const bytes = Buffer.concat(out);
    const expected = smoothSeams(pcm, boundaries, RATE).pcm;
    expect(Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2))).toEqual(Array.from(expected));
  });
});
