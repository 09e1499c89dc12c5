/**
 * Puts `audio` frames back in `sequence` order (spec 6, rule 2: clients
 * concatenate audio in sequence order, not arrival order). Pure: no clock,
 * no I/O; both realtime sessions (the reliable machine and SimpleSession)
 * feed it every frame of a connection.
 *
 * The spec says only that sequences increase: not where they start, not
 * their scope, not that they are contiguous. So:
 * - A frame with the next expected sequence is released at once, with the
 *   held frames that follow it.
 * - A frame ahead of the next expected one is held, up to `windowFrames`
 *   frames. When one more would not fit, the missing sequences are given up
 *   (a `gap`: numbering may legally skip, so a gap is not a loss; the byte
 *   count of the segment says whether audio is missing) and the held frames
 *   are released from the lowest one on. From then on the window holds
 *   nothing: with numbering that skips, it would hold every frame.
 * - Before anything was released, a frame below the expected start moves the
 *   start down to it (a deployment counting from 0), and a frame further
 *   ahead than the window could reorder moves it up (counting from 1000).
 * - A sequence seen before (held or released) is a repeat: dropped, and
 *   counted. A frame never seen is never dropped as a repeat: one that comes
 *   after a higher sequence was already released is `late` (it cannot be put
 *   back in order; the segment's byte count then shows the shortfall).
 * - A numbering that goes up by a constant step (2, 10: the spec says only
 *   "increasing") is learnt, not reported as gaps: when the first two frames
 *   held after a release continue the last released one by the same step
 *   d > 1 (or, before any release, three held frames go up by one step
 *   d > 1), the window counts in steps of d from then on (a frame or two
 *   held once, instead of a whole window and a gap warning). A frame that
 *   then comes between two steps un-learns it (released in order, not late).
 *
 * Memory (one window per segment, thousands of streams): what does
 * not grow with the frames of a segment in order. What was seen is the frames
 * held, the sequences released and the late ones, so no Set of every
 * sequence: releases go up, so they are kept as runs (start, step, end), the
 * current one in two fields, closed ones (a gap, a step changed) in a flat
 * array created when the first closes; late ones in a Set created by the
 * first. At most 64 runs and 64 late ones: past that, the oldest merge into
 * a floor below which everything counts as seen (what it costs: see
 * `#raiseFloor`). The held frames' Map is created by the first frame that
 * must wait and dropped once empty; a frame in order with nothing held is
 * released without it. 112 bytes a window in order, whatever its length
 * (20.8 KB with a Set of every sequence, for 1,000 frames).
 */
import { WarningCode } from '../protocol/codes.js';

/** Frames held while waiting for a missing one; default of `reorderWindowFrames`. */
export const DEFAULT_REORDER_WINDOW_FRAMES = 16;

/** The gaps of a verdict that found none: one shared, frozen array (no allocation per frame; never pushed to). */
const NO_GAPS = Object.freeze([]) as unknown as SequenceGap[];

/** Where ordered audio says what it dropped or skipped: a machine's port. */
export interface WarningPort {
  emit(event: { type: 'warning'; code: string; message: string }): void;
}

/** Sequences that never arrived, both ends included. */
export interface SequenceGap {
  from: number;
  to: number;
}

/** What one `push()` or `drain()` decided. */
export interface SequenceVerdict<T> {
  /** Items to emit now, in sequence order. */
  release: T[];
  /** The pushed sequence was seen before: its item was dropped. */
  duplicate: boolean;
  /** Sequences skipped over (never arrived within the window). */
  gaps: SequenceGap[];
  /** The pushed frame came after a higher sequence was released: it cannot be emitted in order. */
  late?: boolean;
}

/**
 * Runs of released sequences a window keeps at most (see `SequenceWindow`,
 * memory): past it, the older half merge into the floor.
 */
const TRACKED_RUNS = 64;
/** Late sequences a window keeps at most: past it, the lower half merge into the floor. */
const TRACKED_LATE = 64;

export class SequenceWindow<T> {
  /** Frames held at most; 0 once a gap was skipped (a numbering with gaps would hold every frame). */
  #windowFrames: number;
  /** Frames waiting for an earlier one: created by the first frame that must wait, dropped once empty. */
  #held: Map<number, T> | undefined;
  #next: number;
  /** The numbering's step: 1 until a constant larger step is seen. */
  #step: number;
  /** The last sequence released (the end of the current run); undefined until one was. */
  #lastReleased: number | undefined;
  #firstReleased: number | undefined;
  /** Where the current run of released sequences starts, and its step (0 while it is one sequence). */
  #runStart: number;
  #runStep: number;
  /**
   * The floor (every sequence below it counts as seen; -Infinity until
   * runs or late ones were merged), then `start, step, end` of each run
   * closed, oldest first. Created when the first run closes (a gap, a
   * step changed).
   */
  #past: number[] | undefined;
  /** Sequences that came late (seen, never released): created by the first. */
  #late: Set<number> | undefined;

  /**
   * @param windowFrames frames held at most while one is missing; default 16 (0: never hold, skip every gap at once)
   * @param first the sequence expected first; default 1 (moved by the first frames, see the class comment)
   */
  constructor(windowFrames: number = DEFAULT_REORDER_WINDOW_FRAMES, first = 1, step = 1) {
    // Every field set here, in one order: one hidden class, fields in the object.
    this.#windowFrames = Math.max(0, Math.floor(windowFrames));
    this.#held = undefined;
    this.#next = first;
    this.#step = Number.isSafeInteger(step) && step > 1 ? step : 1;
    this.#lastReleased = undefined;
    this.#firstReleased = undefined;
    this.#runStart = 0;
    this.#runStep = 0;
    this.#past = undefined;
    this.#late = undefined;
  }

  /** The first sequence released (where this numbering starts), once one was. */
  get firstReleased(): number | undefined {
    return this.#firstReleased;
  }

  /** The step the numbering was seen to go up by (1 unless a constant larger one was learnt). */
  get step(): number {
    return this.#step;
  }

  /** Frames held, waiting for an earlier one. */
  get held(): number {
    return this.#held === undefined ? 0 : this.#held.size;
  }

  /** The next sequence expected. */
  get next(): number {
    return this.#next;
  }

  /** Diagnostics: runs of released sequences kept to tell repeats (1 for a numbering in order; at most 64). */
  get trackedRuns(): number {
    const closed = this.#past === undefined ? 0 : (this.#past.length - 1) / 3;
    return closed + (this.#lastReleased === undefined ? 0 : 1);
  }

  /** Diagnostics: late sequences kept to tell repeats (at most 64). */
  get trackedLate(): number {
    return this.#late === undefined ? 0 : this.#late.size;
  }

  push(sequence: number, item: T): SequenceVerdict<T> {
    if (!Number.isSafeInteger(sequence)) {
      // Not orderable: released where it came (the reader never produces one).
      return { release: [item], duplicate: false, gaps: NO_GAPS };
    }
    if (sequence === this.#next && this.#held === undefined) {
      // In order with nothing held: released at once, no Map touched. Never a
      // repeat: what was released, came late or lies below the floor is below
      // `next` (all of it at most the last released), and nothing is held.
      this.#record(sequence);
      this.#next = sequence + this.#step;
      return { release: [item], duplicate: false, gaps: NO_GAPS };
    }
    if (this.#seen(sequence)) return { release: [], duplicate: true, gaps: NO_GAPS };
    const last = this.#lastReleased;
    if (this.#step > 1 && last !== undefined && sequence > last && sequence < this.#next) {
      // Between two steps: the numbering was not stepped after all (it skips
      // as it likes). Still in order: released, and nothing held from now on.
      this.#step = 1;
      this.#windowFrames = 0;
      this.#next = sequence;
    }
    if (sequence < this.#next) {
      if (last !== undefined) {
        this.#addLate(sequence);
        return { release: [], duplicate: false, gaps: NO_GAPS, late: true };
      }
      this.#next = sequence; // the numbering starts lower than expected
    } else if (last === undefined && this.held === 0 && sequence - this.#next > this.#windowFrames) {
      this.#next = sequence; // further ahead than any reordering: the numbering starts here
    }
    const held = (this.#held ??= new Map<number, T>());
    held.set(sequence, item);
    this.#learnStep(held, false);
    return this.#releaseHeld(held, false);
  }

  /** The frames held, in no particular order. */
  heldItems(): T[] {
    return this.#held === undefined ? [] : [...this.#held.values()];
  }

  /** Release everything held, in order, skipping the sequences still missing (end of a segment or request). */
  drain(): SequenceVerdict<T> {
    const held = this.#held;
    if (held === undefined) return { release: [], duplicate: false, gaps: NO_GAPS };
    this.#learnStep(held, true);
    return this.#releaseHeld(held, true);
  }

  /**
   * Release what follows in order, then, while more is held than the window
   * keeps (`all`: anything at all), give up the missing sequences below the
   * lowest held (a gap; from then on the window holds nothing) and go on.
   */
  #releaseHeld(held: Map<number, T>, all: boolean): SequenceVerdict<T> {
    const release = this.#releaseRun(held);
    const gaps: SequenceGap[] = [];
    while (held.size > (all ? 0 : this.#windowFrames)) {
      if (!this.#startsAtLowest(held)) {
        gaps.push(this.#skipToLowest(held));
        if (!all) this.#windowFrames = 0;
      }
      release.push(...this.#releaseRun(held));
    }
    if (held.size === 0) this.#held = undefined;
    return { release, duplicate: false, gaps };
  }

  /** Whether `sequence` was seen: held, released (in a run kept, or below the floor), or late. */
  #seen(sequence: number): boolean {
    if (this.#held?.has(sequence)) return true;
    const last = this.#lastReleased;
    if (last === undefined) return false; // nothing released: nothing late, no run
    const start = this.#runStart;
    if (sequence >= start && sequence <= last && (this.#runStep === 0 || (sequence - start) % this.#runStep === 0)) return true;
    const past = this.#past;
    if (past !== undefined) {
      if (sequence < past[0]!) return true;
      for (let i = 1; i < past.length; i += 3) {
        const from = past[i]!;
        if (sequence >= from && sequence <= past[i + 2]! && (sequence - from) % past[i + 1]! === 0) return true;
      }
    }
    return this.#late !== undefined && this.#late.has(sequence);
  }

  /** A sequence released: extends the current run, or closes it and starts one. */
  #record(sequence: number): void {
    const last = this.#lastReleased;
    if (last === undefined) {
      this.#firstReleased = sequence;
    } else if (sequence > last && (this.#runStep === 0 || sequence - last === this.#runStep)) {
      this.#runStep = sequence - last;
      this.#lastReleased = sequence;
      return;
    } else {
      this.#closeRun(last);
    }
    this.#runStart = sequence;
    this.#runStep = 0;
    this.#lastReleased = sequence;
  }

  #closeRun(end: number): void {
    const past = (this.#past ??= [-Infinity]);
    past.push(this.#runStart, this.#runStep === 0 ? 1 : this.#runStep, end);
    if (past.length < 1 + 3 * TRACKED_RUNS) return;
    // One run more than kept (with the current one): the older half merge into the floor.
    let floor = -Infinity;
    for (let i = 1; i < 1 + 3 * (TRACKED_RUNS / 2); i += 3) floor = Math.max(floor, past[i + 2]! + 1);
    this.#raiseFloor(floor);
  }

  #addLate(sequence: number): void {
    const late = (this.#late ??= new Set<number>());
    late.add(sequence);
    if (late.size <= TRACKED_LATE) return;
    // The lower half merge into the floor.
    const sorted = [...late].sort((x, y) => x - y);
    this.#raiseFloor(sorted[TRACKED_LATE / 2 - 1]! + 1);
  }

  /**
   * Every sequence below `floor` counts as seen from now on: the runs and
   * late ones below it are forgotten. What that costs: a frame below it
   * never seen (it would have been `late`) is dropped as a repeat instead.
   * Dropped either way (it cannot be put back in order), and the segment's
   * byte count still tells the shortfall. The floor is never above the last
   * sequence released + 1, so no frame that could still be released or held
   * is below it.
   */
  #raiseFloor(floor: number): void {
    const past = (this.#past ??= [-Infinity]);
    if (floor <= past[0]!) return;
    past[0] = floor;
    let kept = 1;
    for (let i = 1; i < past.length; i += 3) {
      if (past[i + 2]! < floor) continue;
      past[kept] = past[i]!;
      past[kept + 1] = past[i + 1]!;
      past[kept + 2] = past[i + 2]!;
      kept += 3;
    }
    past.length = kept;
    const late = this.#late;
    if (late === undefined) return;
    for (const s of late) if (s < floor) late.delete(s);
    if (late.size === 0) this.#late = undefined;
  }

  /**
   * Two frames held right after a release (or, at the end of a segment too
   * short to learn its step while it ran, whatever it still holds: 7, 9 of a
   * segment of two frames) continuing the last released one in one constant
   * step d > 1; or, before any release, three frames held in one step d > 1:
   * the numbering steps by d (from the lowest held, when nothing was released).
   */
  #learnStep(heldFrames: Map<number, T>, atEnd: boolean): void {
    if (this.#step !== 1 || heldFrames.size === 0) return;
    const held = [...heldFrames.keys()].sort((x, y) => x - y);
    const last = this.#lastReleased;
    if (last === undefined) {
      if (atEnd || held.length !== 3) return;
      const [a, b, c] = held as [number, number, number];
      if (b - a > 1 && c - b === b - a) {
        this.#step = b - a;
        this.#next = a;
      }
      return;
    }
    if ((!atEnd && held.length !== 2) || this.#next !== last + 1) return;
    const d = held[0]! - last;
    if (d <= 1 || !held.every((s, i) => s === last + d * (i + 1))) return;
    this.#step = d;
    this.#next = held[0]!;
  }

  #releaseRun(held: Map<number, T>): T[] {
    const out: T[] = [];
    for (;;) {
      const next = this.#next;
      const item = held.get(next);
      if (item === undefined && !held.has(next)) return out;
      held.delete(next);
      this.#record(next);
      this.#next = next + this.#step;
      out.push(item as T);
      if (this.#step > 1 && this.#holdsBelow(held, this.#next)) {
        // A frame held between two steps: the numbering was not stepped after
        // all. Count by one from here, so that frame comes out in its place
        // and nothing is released past a lower one (nothing held from now on).
        this.#step = 1;
        this.#windowFrames = 0;
        this.#next = next + 1;
      }
    }
  }

  /** Whether a frame below `sequence` is held. */
  #holdsBelow(held: Map<number, T>, sequence: number): boolean {
    for (const s of held.keys()) if (s < sequence) return true;
    return false;
  }

  /**
   * Nothing released yet and the frames held must go: the numbering starts
   * at the lowest of them, later than guessed (spec 6 leaves the start
   * open: from 7, say). That is where it starts, not a gap it skipped.
   */
  #startsAtLowest(held: Map<number, T>): boolean {
    if (this.#lastReleased !== undefined || held.size === 0) return false;
    this.#next = Math.min(...held.keys());
    return true;
  }

  #skipToLowest(held: Map<number, T>): SequenceGap {
    const lowest = Math.min(...held.keys());
    const gap = { from: this.#next, to: lowest - 1 };
    this.#next = lowest;
    return gap;
  }
}

/** A gap as one line for a `warning` event. */
export function describeGaps(gaps: readonly SequenceGap[]): string {
  return gaps.map((g) => (g.from === g.to ? `${g.from}` : `${g.from}-${g.to}`)).join(', ');
}

/**
 * The `audio` frames of one connection, put back in order per segment.
 *
 * Spec 6 says `audio` carries an "increasing sequence" but not its scope nor
 * its start: a deployment may count per connection (ours), per segment
 * (from 0 or 1), or across the whole request (from anywhere, continuing
 * after a resume), with or without gaps. So each segment has its own window
 * (repeats are per segment: same segment, same sequence), and the sequence
 * it starts at is a guess the window corrects (see `SequenceWindow`):
 *
 * - the connection's first segment is expected at `firstExpected` (1);
 * - a later segment right after the highest sequence seen on the
 *   connection, or at 1 once the deployment was seen to count per segment
 *   (a new segment's frame came with a sequence already used).
 *
 * Once a deployment was seen to skip numbers (a gap given up that never
 * arrived), later segments of the connection hold nothing: numbering with
 * gaps would otherwise hold every frame for a whole window.
 *
 * Given a port (both machines give theirs: this is the ordered audio they
 * share), it also says what it dropped or skipped, as `warning`s: a repeat,
 * a frame that came after later audio was released (late), and the first
 * gap of the connection (numbering may legally skip, so a gap is said once;
 * the byte count of each segment says whether audio is missing).
 */
export class AudioOrder<T> {
  readonly #windowFrames: number;
  /** The segments with a window, and their windows (a connection orders one or two at a time: two arrays, not a Map). */
  readonly #ids: string[] = [];
  readonly #windows: SequenceWindow<T>[] = [];
  #highest: number | undefined;
  #perSegment = false;
  #skips = false;
  /** The step a segment's numbering was seen to go up by, carried to the next segments. */
  #step = 1;
  /** Where the first segment's numbering started: where a per-segment numbering starts again. */
  #segmentStart: number | undefined;
  #repeats = 0;
  #held = 0;
  readonly #firstExpected: number;
  readonly #port: WarningPort | undefined;
  /** A gap was said on this connection. */
  #gapSaid = false;

  /**
   * @param windowFrames frames held at most per segment while one is missing; default `DEFAULT_REORDER_WINDOW_FRAMES`
   * @param firstExpected the sequence the connection's first frame is expected to have; default 1 (a guess the window corrects)
   * @param port where repeats, late frames and the first gap are said; absent: nothing is said
   */
  constructor(windowFrames: number = DEFAULT_REORDER_WINDOW_FRAMES, firstExpected = 1, port?: WarningPort) {
    this.#windowFrames = windowFrames;
    this.#firstExpected = firstExpected;
    this.#port = port;
  }

  /** Frames held, over all segments (kept as a count: the machine asks on every input). */
  get held(): number {
    return this.#held;
  }

  /** The highest sequence seen on this connection (a resumed connection may continue the count). */
  get highest(): number | undefined {
    return this.#highest;
  }

  /** Repeated frames dropped on this connection. */
  get repeats(): number {
    return this.#repeats;
  }

  /** What a window operation did, kept: the held count and what it says of the numbering (`before`: held and step before it). */
  #track(window: SequenceWindow<T>, heldBefore: number, stepBefore: number, verdict: SequenceVerdict<T>): SequenceVerdict<T> {
    this.#held += window.held - heldBefore;
    if (verdict.duplicate) this.#repeats++;
    if (verdict.gaps.length > 0) {
      this.#skips = true;
      if (!this.#gapSaid) {
        this.#gapSaid = true;
        this.#warn(WarningCode.audioSequenceGap, `audio sequence ${describeGaps(verdict.gaps)} skipped (never arrived in order)`);
      }
    }
    // A step learnt carries to the next segments; one found broken (a frame between two steps) does not.
    if (window.step !== stepBefore) this.#step = window.step;
    this.#segmentStart ??= window.firstReleased;
    return verdict;
  }

  push(segmentId: string, sequence: number, item: T): SequenceVerdict<T> {
    let window = this.#window(segmentId);
    if (!window) {
      window = new SequenceWindow<T>(this.#skips ? 0 : this.#windowFrames, this.#firstOf(sequence), this.#step);
      this.#ids.push(segmentId);
      this.#windows.push(window);
    }
    if (Number.isSafeInteger(sequence)) this.#highest = Math.max(this.#highest ?? sequence, sequence);
    // No closure per frame: the counts before, the operation, then the bookkeeping.
    const held = window.held;
    const step = window.step;
    const verdict = this.#track(window, held, step, window.push(sequence, item));
    if (verdict.duplicate) this.#warn(WarningCode.audioRepeat, `dropped a repeat of audio sequence ${sequence} of segment ${segmentId}`);
    if (verdict.late) this.#warn(WarningCode.audioLate, `audio sequence ${sequence} of segment ${segmentId} came after later audio was emitted; it was left out`);
    return verdict;
  }

  /** The frames of a segment held now, in no particular order. */
  heldOf(segmentId: string): T[] {
    return this.#window(segmentId)?.heldItems() ?? [];
  }

  /** Forget what a segment holds (its audio will be asked for again), or its window once it completed. */
  discardSegment(segmentId: string): void {
    const i = this.#ids.indexOf(segmentId);
    if (i < 0) return;
    this.#held -= this.#windows[i]!.held;
    this.#ids.splice(i, 1);
    this.#windows.splice(i, 1);
  }

  /** A segment completed: release what it still holds. */
  drainSegment(segmentId: string): SequenceVerdict<T> {
    const window = this.#window(segmentId);
    return window ? this.#track(window, window.held, window.step, window.drain()) : { release: [], duplicate: false, gaps: NO_GAPS };
  }

  /** The request ended: release what every segment still holds, segment by segment. */
  drainAll(): SequenceVerdict<T> {
    const release: T[] = [];
    const gaps: SequenceGap[] = [];
    for (const w of this.#windows) {
      const v = this.#track(w, w.held, w.step, w.drain());
      release.push(...v.release);
      gaps.push(...v.gaps);
    }
    return { release, duplicate: false, gaps };
  }

  #warn(code: string, message: string): void {
    this.#port?.emit({ type: 'warning', code, message });
  }

  /** The segment's window: the newest are looked at first (the segment whose audio is arriving is one of them). */
  #window(segmentId: string): SequenceWindow<T> | undefined {
    const ids = this.#ids;
    for (let i = ids.length - 1; i >= 0; i--) if (ids[i] === segmentId) return this.#windows[i];
    return undefined;
  }

  #firstOf(sequence: number): number {
    const highest = this.#highest;
    if (highest === undefined) {
      // A resumed connection's count after the last one's highest is a floor,
      // not the start: frames the server numbered but the dropped connection
      // never delivered (re-sent by the resume, their bytes counted by the
      // ledger) leave a hole that is not a gap of this connection.
      const resumed = this.#firstExpected > 1 && Number.isSafeInteger(sequence) && sequence > this.#firstExpected;
      return resumed ? sequence : this.#firstExpected;
    }
    // A new segment's frame at a sequence already used on this connection:
    // the deployment counts per segment.
    if (Number.isSafeInteger(sequence) && sequence <= highest) this.#perSegment = true;
    return this.#perSegment ? (this.#segmentStart ?? 1) : highest + this.#step;
  }
}
