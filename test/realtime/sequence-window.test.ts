/**
 * `SequenceWindow`: audio in `sequence` order (spec 6, rule 2), repeats
 * dropped, gaps given up once the window is full or the segment ends.
 */
import { describe, expect, it } from 'vitest';
import { AudioOrder, describeGaps, SequenceWindow } from '../../src/realtime/sequence-window.js';

function feed(window: SequenceWindow<string>, sequences: number[]): { out: number[]; gaps: string[]; dupes: number[] } {
  const out: number[] = [];
  const gaps: string[] = [];
  const dupes: number[] = [];
  for (const s of sequences) {
    const v = window.push(s, `f${s}`);
    out.push(...v.release.map((f) => Number(f.slice(1))));
    if (v.gaps.length > 0) gaps.push(describeGaps(v.gaps));
    if (v.duplicate) dupes.push(s);
  }
  return { out, gaps, dupes };
}

describe('SequenceWindow', () => {
  it('releases in-order frames at once', () => {
    expect(feed(new SequenceWindow(4), [1, 2, 3])).toEqual({ out: [1, 2, 3], gaps: [], dupes: [] });
  });

  it('holds a frame that arrives early and releases the run once the missing one comes', () => {
    const w = new SequenceWindow<string>(4);
    expect(feed(w, [2, 4, 3])).toEqual({ out: [], gaps: [], dupes: [] });
    expect(w.held).toBe(3);
    expect(feed(w, [1]).out).toEqual([1, 2, 3, 4]);
    expect(w.held).toBe(0);
    expect(w.next).toBe(5);
  });

  it('drops an exact repeat, released or held', () => {
    expect(feed(new SequenceWindow(4), [1, 2, 2, 1, 4, 4, 3])).toEqual({ out: [1, 2, 3, 4], gaps: [], dupes: [2, 1, 4] });
  });

  it('drops sequences that are not positive safe integers as repeats', () => {
    expect(feed(new SequenceWindow(4), [0, -1, 1.5, 1]).dupes).toEqual([0, -1, 1.5]);
  });

  it('gives up a missing sequence once the window overflows, releasing in order', () => {
    const w = new SequenceWindow<string>(2);
    expect(feed(w, [1, 3, 4, 5, 2])).toEqual({ out: [1, 3, 4, 5], gaps: ['2'], dupes: [2] });
  });

  it('drain releases everything held and names each gap', () => {
    const w = new SequenceWindow<string>(8);
    feed(w, [1, 4, 7, 8]);
    const v = w.drain();
    expect(v.release).toEqual(['f4', 'f7', 'f8']);
    expect(describeGaps(v.gaps)).toBe('2-3, 5-6');
  });

  it('window 0 never holds: every gap is reported at once', () => {
    expect(feed(new SequenceWindow(0), [1, 3, 2, 4])).toEqual({ out: [1, 3, 4], gaps: ['2'], dupes: [2] });
  });
});

describe('AudioOrder', () => {
  it('counts the frames held over all segments, through pushes and drains', () => {
    const order = new AudioOrder<string>(8);
    order.push('a', 1, 'a1');
    order.push('a', 3, 'a3');
    order.push('b', 6, 'b6');
    expect(order.held).toBe(2); // a3 waits for a2, b6 for b5 (per-connection count: b starts after 3)
    order.drainSegment('a');
    expect(order.held).toBe(1);
    order.drainAll();
    expect(order.held).toBe(0);
  });
});
