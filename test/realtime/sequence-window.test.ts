/**
 * `SequenceWindow`: audio in `sequence` order (spec 6, rule 2), repeats
 * dropped, gaps given up once the window is full or the segment ends.
 */
import { describe, expect, it } from 'vitest';
import { AudioOrder, describeGaps, SequenceWindow, type SequenceGap } from '../../src/realtime/sequence-window.js';

function feed(window: SequenceWindow<string>, sequences: number[]): { out: number[]; gaps: string[]; dupes: number[]; late?: number[] } {
  const out: number[] = [];
  const gaps: string[] = [];
  const dupes: number[] = [];
  const late: number[] = [];
  for (const s of sequences) {
    const v = window.push(s, `f${s}`);
    out.push(...v.release.map((f) => Number(f.slice(1))));
    if (v.gaps.length > 0) gaps.push(describeGaps(v.gaps));
    if (v.duplicate) dupes.push(s);
    if (v.late) late.push(s);
  }
  return late.length > 0 ? { out, gaps, dupes, late } : { out, gaps, dupes };
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

  it('a numbering that starts below the expected start is followed, not dropped as repeats', () => {
    expect(feed(new SequenceWindow(4), [0, 1, 2])).toEqual({ out: [0, 1, 2], gaps: [], dupes: [] });
    expect(feed(new SequenceWindow(4, 7), [1, 2, 3])).toEqual({ out: [1, 2, 3], gaps: [], dupes: [] });
  });

  it('a numbering that starts further ahead than any reordering starts there, held for nothing', () => {
    expect(feed(new SequenceWindow(4), [1000, 1001, 1002])).toEqual({ out: [1000, 1001, 1002], gaps: [], dupes: [] });
  });

  it('a numbering that starts a little later than guessed (from 7, within the window) starts there: no gap named (drawn seed b885e767)', () => {
    const w = new SequenceWindow<string>(4);
    expect(feed(w, [7, 8, 9, 10, 11, 12])).toEqual({ out: [7, 8, 9, 10, 11, 12], gaps: [], dupes: [] });
    const short = new SequenceWindow<string>(16);
    feed(short, [5, 6, 7]);
    expect(short.drain()).toEqual({ release: ['f5', 'f6', 'f7'], duplicate: false, gaps: [] });
    // Once the start is known, a sequence skipped after it is a gap.
    expect(feed(new SequenceWindow<string>(2), [7, 8, 9, 10, 12, 13, 14])).toEqual({ out: [7, 8, 9, 10, 12, 13, 14], gaps: ['11'], dupes: [] });
  });

  it('a frame never seen that comes after a later one was released is late, not a repeat', () => {
    const w = new SequenceWindow<string>(2);
    expect(feed(w, [1, 3, 4, 5, 2])).toEqual({ out: [1, 3, 4, 5], gaps: ['2'], dupes: [], late: [2] });
  });

  it('once a gap was skipped, the window holds nothing more (numbering with gaps is legal)', () => {
    const w = new SequenceWindow<string>(1);
    expect(feed(w, [1, 3, 6, 8, 11])).toEqual({ out: [1, 3, 6, 8, 11], gaps: ['2, 4-5', '7', '9-10'], dupes: [] });
    expect(w.held).toBe(0);
  });

  it('drain releases everything held and names each gap', () => {
    const w = new SequenceWindow<string>(8);
    feed(w, [1, 4, 8, 9]);
    const v = w.drain();
    expect(v.release).toEqual(['f4', 'f8', 'f9']);
    expect(describeGaps(v.gaps)).toBe('2-3, 5-7');
  });

  it('a numbering with a constant step (2, 10) is learnt: one frame held once, no gap, nothing lost', () => {
    const w = new SequenceWindow<string>(16);
    expect(feed(w, [7, 9, 11, 13, 15])).toEqual({ out: [7, 9, 11, 13, 15], gaps: [], dupes: [] });
    expect(w.held).toBe(0);
    expect(w.step).toBe(2);
    expect(feed(new SequenceWindow(16, 4294967303), [4294967303, 4294967313, 4294967323, 4294967333]).gaps).toEqual([]);
  });

  it('a segment of two frames in a step of 2 ends: the step is learnt at the drain, no gap', () => {
    const w = new SequenceWindow<string>(16, 4294967303);
    expect(feed(w, [4294967303, 4294967305]).out).toEqual([4294967303]);
    const v = w.drain();
    expect(v.release).toEqual(['f4294967305']);
    expect(v.gaps).toEqual([]);
    expect(w.step).toBe(2);
  });

  it('a step learnt by chance and then broken: the frame between two steps is released in order, never late', () => {
    const w = new SequenceWindow<string>(16);
    expect(feed(w, [10, 12, 14, 15, 17, 18])).toEqual({ out: [10, 12, 14, 15, 17, 18], gaps: ['16'], dupes: [] });
  });

  it('a step learnt and then broken by a frame held between two steps: released in its place, never after a higher one (drawn seed bb8c3f1d)', () => {
    // 1, 3, 5 teach a step of 2; 8 comes before 7 (held); releasing 7 must not go on to 9 past the 8 it holds.
    const w = new SequenceWindow<string>(16);
    const fed = feed(w, [1, 3, 5, 8, 7, 9, 10]);
    fed.out.push(...w.drain().release.map((f) => Number(f.slice(1))));
    expect(fed).toEqual({ out: [1, 3, 5, 7, 8, 9, 10], gaps: [], dupes: [] });
  });

  it('numbering that goes up by a random step of 1 to 4, a frame now and then one place early: every frame once, in sequence order, no gap named backwards', () => {
    // What drawn dialects with `step random` send (src/server/dialect-realtime.ts), plus a local swap.
    let state = 7;
    const random = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
    for (let run = 0; run < 200; run++) {
      const sequences: number[] = [];
      let n = 1 + Math.floor(random() * 1000);
      for (let i = 0; i < 60; i++) sequences.push((n += 1 + Math.floor(random() * 4)));
      for (let i = 1; i < sequences.length; i++) {
        if (random() < 0.05) [sequences[i - 1], sequences[i]] = [sequences[i]!, sequences[i - 1]!];
      }
      const w = new SequenceWindow<string>(16);
      const fed = feed(w, sequences);
      const drained = w.drain();
      fed.out.push(...drained.release.map((f) => Number(f.slice(1))));
      const released = fed.out;
      // Every frame once: released, or left out as late (arrived after a higher one was emitted).
      expect([...released, ...(fed.late ?? [])].sort((a, b) => a - b)).toEqual([...sequences].sort((a, b) => a - b));
      expect(released, `run ${run}: ${sequences.join(',')}`).toEqual([...released].sort((a, b) => a - b));
      for (const g of [...fed.gaps, describeGaps(drained.gaps)].join(', ').split(', ').filter(Boolean)) {
        const [from, to = from] = g.split('-').map(Number);
        expect(from! <= to!, `run ${run}: gap ${g} in ${sequences.join(',')}`).toBe(true);
      }
    }
  });

  it('window 0 never holds: every gap is reported at once, a frame behind is late', () => {
    expect(feed(new SequenceWindow(0), [1, 3, 2, 4])).toEqual({ out: [1, 3, 4], gaps: ['2'], dupes: [], late: [2] });
  });
});

describe('AudioOrder', () => {
  it('numbering per segment from 7 in steps of 10: every segment starts again at 7, nothing held, no gap', () => {
    const o = new AudioOrder<string>(16);
    const out: string[] = [];
    const gaps: SequenceGap[] = [];
    for (const [seg, seq] of [['a', 7], ['a', 17], ['a', 27], ['a', 37], ['b', 7], ['b', 17], ['c', 7]] as const) {
      const v = o.push(seg, seq, `${seg}${seq}`);
      out.push(...v.release);
      gaps.push(...v.gaps);
    }
    expect(out).toEqual(['a7', 'a17', 'a27', 'a37', 'b7', 'b17', 'c7']);
    expect(gaps).toEqual([]);
    expect(o.held).toBe(0);
  });

  it('a step learnt on one segment carries to the next (numbering per request, step 2): nothing held, no gap', () => {
    const o = new AudioOrder<string>(16);
    const out: string[] = [];
    const gaps: SequenceGap[] = [];
    for (const [seg, seq] of [['a', 7], ['a', 9], ['a', 11], ['b', 13], ['b', 15], ['c', 17]] as const) {
      const v = o.push(seg, seq, `${seg}${seq}`);
      out.push(...v.release);
      gaps.push(...v.gaps);
    }
    expect(out).toEqual(['a7', 'a9', 'a11', 'b13', 'b15', 'c17']);
    expect(gaps).toEqual([]);
    expect(o.held).toBe(0);
  });

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

  /** Push (segment, sequence) pairs; the items released, in order, and the repeats counted. */
  function order(frames: [string, number][], first?: number): { out: string[]; repeats: number } {
    const o = new AudioOrder<string>(16, first);
    const out: string[] = [];
    for (const [seg, seq] of frames) out.push(...o.push(seg, seq, `${seg}${seq}`).release);
    out.push(...o.drainAll().release);
    return { out, repeats: o.repeats };
  }

  it('every scope and start keeps every frame: per connection, per segment from 0 or 1, per request from 1000, with gaps', () => {
    const perConnection: [string, number][] = [['a', 1], ['a', 2], ['b', 3], ['b', 4]];
    const perSegment0: [string, number][] = [['a', 0], ['a', 1], ['b', 0], ['b', 1]];
    const perSegment1: [string, number][] = [['a', 1], ['a', 2], ['b', 1], ['b', 2]];
    const perRequest: [string, number][] = [['a', 1000], ['a', 1001], ['b', 1002], ['b', 1003]];
    const gapped: [string, number][] = [['a', 10], ['a', 20], ['b', 30], ['b', 45]];
    for (const frames of [perConnection, perSegment0, perSegment1, perRequest, gapped]) {
      expect(order(frames)).toEqual({ out: frames.map(([s, n]) => `${s}${n}`), repeats: 0 });
    }
  });

  it('a real repeat (same segment, same sequence) is dropped and counted; the same number in another segment is not a repeat', () => {
    expect(order([['a', 0], ['a', 1], ['a', 1], ['b', 0], ['b', 0], ['b', 1]])).toEqual({ out: ['a0', 'a1', 'b0', 'b1'], repeats: 2 });
  });

  it('a new connection expected to continue the count still takes a numbering that starts over', () => {
    expect(order([['a', 1], ['a', 2]], 50)).toEqual({ out: ['a1', 'a2'], repeats: 0 });
    expect(order([['a', 50], ['a', 51]], 50)).toEqual({ out: ['a50', 'a51'], repeats: 0 });
  });

  it('a resumed connection whose count skipped what the dropped one never delivered: no frame held, no gap (found on drawn seed 2abf4094)', () => {
    // The last connection saw up to 10; the server had numbered 11 to 13 into the drop.
    const o = new AudioOrder<string>(16, 11);
    const first = o.push('a', 14, 'a14');
    expect(first).toEqual({ release: ['a14'], duplicate: false, gaps: [] });
    expect(o.push('a', 15, 'a15')).toEqual({ release: ['a15'], duplicate: false, gaps: [] });
    expect(o.held).toBe(0);
  });
});
