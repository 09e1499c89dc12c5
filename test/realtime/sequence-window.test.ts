/**
 * `SequenceWindow`: audio in `sequence` order (spec 6, rule 2), repeats
 * dropped, gaps given up once the window is full or the segment ends.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AudioOrder, describeGaps, SequenceWindow, type SequenceGap, type SequenceVerdict } from '../../src/realtime/sequence-window.js';
import { seededRandom } from '../protocol/frames.js';

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

  it('a numbering that starts a little later than guessed (from 7, within the window) starts there: no gap named', () => {
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

  it('a step learnt and then broken by a frame held between two steps: released in its place, never after a higher one', () => {
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

  it('a resumed connection whose count skipped what the dropped one never delivered: no frame held, no gap', () => {
    // The last connection saw up to 10; the server had numbered 11 to 13 into the drop.
    const o = new AudioOrder<string>(16, 11);
    const first = o.push('a', 14, 'a14');
    expect(first).toEqual({ release: ['a14'], duplicate: false, gaps: [] });
    expect(o.push('a', 15, 'a15')).toEqual({ release: ['a15'], duplicate: false, gaps: [] });
    expect(o.held).toBe(0);
  });
});

/**
 * The window as it was before it kept runs: every sequence seen in
 * a Set, a Map for the held frames. The semantics the window must keep.
 */
class ReferenceWindow<T> {
  #windowFrames: number;
  readonly #held = new Map<number, T>();
  readonly #seen = new Set<number>();
  #next: number;
  #released = false;
  #step: number;
  #lastReleased: number | undefined;
  #firstReleased: number | undefined;

  constructor(windowFrames = 16, first = 1, step = 1) {
    this.#windowFrames = Math.max(0, Math.floor(windowFrames));
    this.#next = first;
    this.#step = Number.isSafeInteger(step) && step > 1 ? step : 1;
  }

  get firstReleased(): number | undefined {
    return this.#firstReleased;
  }
  get step(): number {
    return this.#step;
  }
  get held(): number {
    return this.#held.size;
  }
  get next(): number {
    return this.#next;
  }
  heldItems(): T[] {
    return [...this.#held.values()];
  }

  push(sequence: number, item: T): SequenceVerdict<T> {
    if (!Number.isSafeInteger(sequence)) return { release: [item], duplicate: false, gaps: [] };
    if (this.#seen.has(sequence)) return { release: [], duplicate: true, gaps: [] };
    this.#seen.add(sequence);
    if (this.#step > 1 && this.#lastReleased !== undefined && sequence > this.#lastReleased && sequence < this.#next) {
      this.#step = 1;
      this.#windowFrames = 0;
      this.#next = sequence;
    }
    if (sequence < this.#next) {
      if (this.#released) return { release: [], duplicate: false, gaps: [], late: true };
      this.#next = sequence;
    } else if (!this.#released && this.#held.size === 0 && sequence - this.#next > this.#windowFrames) {
      this.#next = sequence;
    }
    this.#held.set(sequence, item);
    this.#learnStep();
    const release = this.#releaseRun();
    const gaps: SequenceGap[] = [];
    while (this.#held.size > this.#windowFrames) {
      if (this.#startsAtLowest()) {
        release.push(...this.#releaseRun());
        continue;
      }
      gaps.push(this.#skipToLowest());
      release.push(...this.#releaseRun());
      this.#windowFrames = 0;
    }
    return { release, duplicate: false, gaps };
  }

  drain(): SequenceVerdict<T> {
    this.#learnStepAtEnd();
    const release: T[] = this.#releaseRun();
    const gaps: SequenceGap[] = [];
    while (this.#held.size > 0) {
      if (this.#startsAtLowest()) {
        release.push(...this.#releaseRun());
        continue;
      }
      gaps.push(this.#skipToLowest());
      release.push(...this.#releaseRun());
    }
    return { release, duplicate: false, gaps };
  }

  #learnStep(): void {
    if (this.#step !== 1) return;
    const held = [...this.#held.keys()].sort((x, y) => x - y);
    if (this.#lastReleased === undefined) {
      if (held.length !== 3 || this.#released) return;
      const [a, b, c] = held as [number, number, number];
      if (b - a > 1 && c - b === b - a) {
        this.#step = b - a;
        this.#next = a;
      }
      return;
    }
    if (held.length !== 2 || this.#next !== this.#lastReleased + 1) return;
    const [a, b] = held as [number, number];
    const d = a - this.#lastReleased;
    if (d > 1 && b - a === d) {
      this.#step = d;
      this.#next = a;
    }
  }

  #learnStepAtEnd(): void {
    if (this.#step !== 1 || this.#lastReleased === undefined || this.#held.size === 0 || this.#next !== this.#lastReleased + 1) return;
    const held = [...this.#held.keys()].sort((x, y) => x - y);
    const d = held[0]! - this.#lastReleased;
    if (d <= 1 || !held.every((s, i) => s === this.#lastReleased! + d * (i + 1))) return;
    this.#step = d;
    this.#next = held[0]!;
  }

  #releaseRun(): T[] {
    const out: T[] = [];
    for (;;) {
      const item = this.#held.get(this.#next);
      if (item === undefined && !this.#held.has(this.#next)) return out;
      this.#held.delete(this.#next);
      this.#firstReleased ??= this.#next;
      this.#lastReleased = this.#next;
      this.#next += this.#step;
      this.#released = true;
      out.push(item as T);
      if (this.#step > 1 && [...this.#held.keys()].some((h) => h < this.#next)) {
        this.#step = 1;
        this.#windowFrames = 0;
        this.#next = this.#lastReleased + 1;
      }
    }
  }

  #startsAtLowest(): boolean {
    if (this.#released || this.#held.size === 0) return false;
    this.#next = Math.min(...this.#held.keys());
    return true;
  }

  #skipToLowest(): SequenceGap {
    const lowest = Math.min(...this.#held.keys());
    const gap = { from: this.#next, to: lowest - 1 };
    this.#next = lowest;
    return gap;
  }
}


interface Numbering {
  window: number;
  first: number;
  step: number;
  /** What comes in, in arrival order; `drain` is a drain between two frames. */
  arrivals: (number | 'drain')[];
}

/**
 * A numbering as a deployment might send it: a start (0, 1, 7, 1000, past
 * 2^32), a step (1, 2, 10, or random), gaps, a step that changes, then in
 * arrival order: local reorders, repeats near and far, frames that come
 * late, and now and then a drain between frames.
 */
function drawNumbering(random: () => number, frames: number, gappy: boolean, lateRate = 0.02): Numbering {
  const pick = <V>(values: readonly V[]): V => values[Math.floor(random() * values.length)]!;
  const start = pick([0, 1, 1, 2, 7, 1000, 4294967303, Math.floor(random() * 100_000)]);
  let step: number | 'random' = pick([1, 1, 1, 1, 2, 3, 10, 'random'] as const);
  const sequences: number[] = [];
  let n = start;
  for (let i = 0; i < frames; i++) {
    sequences.push(n);
    if (random() < 0.01) step = pick([1, 2, 5, 'random'] as const);
    n += step === 'random' ? 1 + Math.floor(random() * 4) : step;
    if (random() < (gappy ? 0.2 : 0.01)) n += 1 + Math.floor(random() * 5);
  }
  const arrivals: (number | 'drain')[] = [...sequences];
  for (let i = 1; i < arrivals.length; i++) {
    const r = random();
    if (r < 0.08) {
      // a frame a few places early
      const j = Math.max(0, i - 1 - Math.floor(random() * 4));
      [arrivals[j], arrivals[i]] = [arrivals[i]!, arrivals[j]!];
    } else if (r < 0.12) {
      // a repeat of a frame near or far back
      arrivals.splice(i, 0, arrivals[Math.floor(random() * i)]!);
    } else if (r < 0.12 + lateRate) {
      // a frame that comes much later than its place
      const [late] = arrivals.splice(Math.floor(random() * i), 1);
      arrivals.splice(Math.min(arrivals.length, i + Math.floor(random() * 40)), 0, late!);
    } else if (r < 0.125 + lateRate) {
      arrivals.splice(i, 0, 'drain');
    }
  }
  if (random() < 0.05) arrivals.push(Number.NaN);
  const window = pick([0, 1, 2, 4, 16, 16, 16, 64]);
  const first = pick([1, 1, start, start + 1, Math.max(0, start - 3), start + 20]);
  const windowStep = pick([1, 1, 1, typeof step === 'number' ? step : 1]);
  return { window, first, step: windowStep, arrivals };
}

/**
 * Feed one numbering to the window and to the reference model; every verdict
 * and every reading must be the same. The one difference allowed, once runs
 * or late ones were merged into the floor: a frame the model calls `late`,
 * the window may drop as a repeat. Returns how many frames took that
 * difference, and the most runs and late ones the window kept.
 */
function compare(numbering: Numbering, label: string): { floorRepeats: number; maxRuns: number; maxLate: number } {
  const w = new SequenceWindow<string>(numbering.window, numbering.first, numbering.step);
  const model = new ReferenceWindow<string>(numbering.window, numbering.first, numbering.step);
  let merged = false;
  let floorRepeats = 0;
  let maxRuns = 0;
  let maxLate = 0;
  for (const [i, s] of numbering.arrivals.entries()) {
    const runs = w.trackedRuns;
    const late = w.trackedLate;
    const got = s === 'drain' ? w.drain() : w.push(s, `f${s}`);
    const want = s === 'drain' ? model.drain() : model.push(s, `f${s}`);
    merged ||= w.trackedRuns < runs || w.trackedLate < late;
    // Compared cheaply frame by frame; `expect` (and the case printed) only where they differ.
    const floorRepeat = merged && want.late === true && got.duplicate;
    if (floorRepeat) floorRepeats++;
    const readings = [w.held, w.next, w.step, w.firstReleased, w.heldItems().sort()];
    const modelReadings = [model.held, model.next, model.step, model.firstReleased, model.heldItems().sort()];
    if (!isDeepStrictEqual(got, floorRepeat ? { release: [], duplicate: true, gaps: [] } : want) || !isDeepStrictEqual(readings, modelReadings)) {
      const where = `${label}, arrival ${i} (${s}) of ${JSON.stringify(numbering)}`;
      expect({ verdict: got, readings }, where).toEqual({ verdict: want, readings: modelReadings });
      expect.fail(`${where}: ${JSON.stringify(got)} where the model says ${JSON.stringify(want)}`);
    }
    maxRuns = Math.max(maxRuns, w.trackedRuns);
    maxLate = Math.max(maxLate, w.trackedLate);
  }
  const got = w.drain();
  expect(got, `${label}, final drain`).toEqual(model.drain());
  return { floorRepeats, maxRuns, maxLate };
}

describe('SequenceWindow against the Set-based window it replaced', () => {
  it('4,000 short numberings (repeats, reorders, gaps, steps, late frames, drains; seeded): the same verdicts and readings, frame by frame', () => {
    const random = seededRandom(0x5eed29);
    let late = 0;
    let repeats = 0;
    for (let run = 0; run < 4000; run++) {
      const numbering = drawNumbering(random, 1 + Math.floor(random() * 50), random() < 0.3);
      // At most 64 frames: the runs and late ones kept never reach their bound, so no difference is allowed.
      expect(compare(numbering, `run ${run}`).floorRepeats).toBe(0);
      const model = new ReferenceWindow<string>(numbering.window, numbering.first, numbering.step);
      for (const s of numbering.arrivals) {
        if (s === 'drain') continue;
        const v = model.push(s, '');
        if (v.late) late++;
        if (v.duplicate) repeats++;
      }
    }
    // The cases reach what they are drawn for.
    expect(late).toBeGreaterThan(500);
    expect(repeats).toBeGreaterThan(1000);
  });

  it('300 long numberings with few gaps (300 to 2,000 frames; seeded): the same verdicts and readings, runs and late ones kept stay bounded', () => {
    const random = seededRandom(0xa11d0c);
    for (let run = 0; run < 300; run++) {
      const result = compare(drawNumbering(random, 300 + Math.floor(random() * 1700), false), `run ${run}`);
      expect(result.maxRuns).toBeLessThanOrEqual(64);
      expect(result.maxLate).toBeLessThanOrEqual(64);
    }
  });

  it('100 long numberings full of gaps (2,000 frames; seeded): runs and late ones merge into the floor, at most 64 kept; the only difference is a late frame far back dropped as a repeat', () => {
    const random = seededRandom(0x9a95);
    let floorRepeats = 0;
    let maxRuns = 0;
    let maxLate = 0;
    for (let run = 0; run < 100; run++) {
      const result = compare(drawNumbering(random, 2000, true, run % 2 === 0 ? 0.02 : 0.1), `run ${run}`);
      expect(result.maxRuns).toBeLessThanOrEqual(64);
      expect(result.maxLate).toBeLessThanOrEqual(64);
      floorRepeats += result.floorRepeats;
      maxRuns = Math.max(maxRuns, result.maxRuns);
      maxLate = Math.max(maxLate, result.maxLate);
    }
    // Both bounds were reached: both merges were exercised.
    expect([maxRuns, maxLate]).toEqual([64, 64]);
    expect(floorRepeats).toBeGreaterThan(0);
  });
});

describe('SequenceWindow memory', () => {
  it('100,000 frames in order, then repeats of early ones: every frame released once, every repeat dropped as a repeat, one run kept, nothing held', () => {
    const w = new SequenceWindow<number>(16);
    for (let s = 1; s <= 100_000; s++) {
      const v = w.push(s, s);
      if (v.release.length !== 1 || v.release[0] !== s || v.duplicate || v.gaps.length > 0) expect.fail(`frame ${s}: ${JSON.stringify(v)}`);
    }
    expect(w.trackedRuns).toBe(1);
    for (const s of [1, 2, 3, 500, 99_999, 100_000, 50_000, 1]) {
      expect(w.push(s, s), `repeat of ${s}`).toEqual({ release: [], duplicate: true, gaps: [] });
    }
    expect([w.trackedRuns, w.trackedLate, w.held, w.next]).toEqual([1, 0, 0, 100_001]);
    expect(w.push(100_001, 100_001).release).toEqual([100_001]);
  });

  it('a numbering in a step of 10, with reorders and repeats, is still one run', () => {
    const w = new SequenceWindow<number>(16);
    const out: number[] = [];
    for (let s = 7; s < 7 + 10 * 1000; s += 10) {
      out.push(...w.push(s, s).release);
      if (s % 3 === 0) expect(w.push(s, s).duplicate).toBe(true);
    }
    expect(out).toHaveLength(1000);
    expect(w.trackedRuns).toBe(1);
  });

  it('a numbering that skips at every frame keeps at most 64 runs; a never-seen frame below the floor is dropped as a repeat (what the bound costs), one within the runs kept is late', () => {
    const w = new SequenceWindow<string>(16);
    // 1, 3, 6, 10, 15, ...: every step differs, every frame starts a run.
    const sequences: number[] = [];
    for (let s = 1, d = 2; sequences.length < 1000; s += d++) sequences.push(s);
    const fed = feed(w, sequences);
    expect(fed.out).toEqual(sequences);
    expect(w.trackedRuns).toBeLessThanOrEqual(64);
    expect(w.trackedRuns).toBeGreaterThan(16);
    // Far back, below the floor: never seen, dropped as a repeat.
    expect(w.push(2, 'f2')).toEqual({ release: [], duplicate: true, gaps: [] });
    // Recent, between two runs kept: late, as before.
    const recent = sequences[sequences.length - 2]! + 1;
    expect(w.push(recent, `f${recent}`)).toEqual({ release: [], duplicate: false, gaps: [], late: true });
    expect(w.push(recent, `f${recent}`).duplicate).toBe(true);
  });

  it('the floor never reaches a frame that can still be released: right after each merge, a frame between two steps is released in order', () => {
    // Step 2 with a gap every two frames (1, 3, 11, 13, 21, 23, ...): every gap closes a run, so runs merge into the floor again and again.
    for (let runs = 1; runs <= 140; runs++) {
      const w = new SequenceWindow<string>(0, 1, 2);
      const model = new ReferenceWindow<string>(0, 1, 2);
      for (let k = 0; k < runs; k++) {
        for (const s of [1 + 10 * k, 3 + 10 * k]) expect(w.push(s, `f${s}`)).toEqual(model.push(s, `f${s}`));
      }
      // The first frame of the next run closes the last one (a merge when there are too many), then one comes between two steps.
      const next = 1 + 10 * runs;
      expect(w.push(next, `f${next}`)).toEqual(model.push(next, `f${next}`));
      const between = next + 1; // the numbering was not stepped after all: released, never a repeat
      expect(w.push(between, `f${between}`), `after ${runs} runs`).toEqual({ release: [`f${between}`], duplicate: false, gaps: [] });
      expect(model.push(between, `f${between}`)).toEqual({ release: [`f${between}`], duplicate: false, gaps: [] });
      expect(w.trackedRuns).toBeLessThanOrEqual(64);
    }
  });

  it('late frames kept at most 64: the lower half merge into the floor, recent ones still late then repeats', () => {
    const w = new SequenceWindow<string>(0);
    // 1, 3, 5, ... then the even ones come late, in order.
    for (let s = 1; s <= 401; s += 2) w.push(s, `f${s}`);
    for (let s = 2; s <= 400; s += 2) {
      expect(w.push(s, `f${s}`).late, `late ${s}`).toBe(true);
      expect(w.trackedLate).toBeLessThanOrEqual(64);
    }
    expect(w.push(400, 'f400').duplicate).toBe(true);
    expect(w.push(2, 'f2').duplicate).toBe(true);
    expect(w.trackedLate).toBeGreaterThan(0);
  });
});

describe('AudioOrder, segments dropped', () => {
  it('discardSegment after drainSegment leaves the held count right; a segment discarded while holding takes its frames off', () => {
    const o = new AudioOrder<string>(8);
    o.push('a', 1, 'a1');
    o.push('a', 3, 'a3');
    o.push('b', 10, 'b10');
    o.push('b', 12, 'b12');
    expect(o.held).toBe(3); // a3 waits for a2; b10 and b12 for b4 (per-connection count: b starts after 3)
    expect(o.drainSegment('a').release).toEqual(['a3']);
    expect(o.held).toBe(2);
    o.discardSegment('a');
    expect(o.held).toBe(2);
    o.discardSegment('b');
    expect(o.held).toBe(0);
    o.discardSegment('b');
    expect(o.held).toBe(0);
  });
});
