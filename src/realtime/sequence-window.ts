/**
 * Puts `audio` frames back in `sequence` order (spec 6, rule 2: clients
 * concatenate audio in sequence order, not arrival order). Pure: no clock,
 * no I/O; both realtime sessions (the reliable machine and SimpleSession)
 * feed it every frame of a connection.
 *
 * - A frame with the next expected sequence is released at once, with the
 *   held frames that follow it.
 * - A frame ahead of the next expected one is held, up to `windowFrames`
 *   frames. When one more would not fit, the missing sequences are given up
 *   as a gap and the held frames are released from the lowest one on.
 * - A sequence already released or already held is an exact repeat: dropped.
 */

/** Frames held while waiting for a missing one; default of `reorderWindowFrames`. */
export const DEFAULT_REORDER_WINDOW_FRAMES = 16;

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
  /** Sequences given up on (never arrived within the window). */
  gaps: SequenceGap[];
}

export class SequenceWindow<T> {
  readonly #windowFrames: number;
  readonly #held = new Map<number, T>();
  #next: number;

  /**
   * @param windowFrames frames held at most while one is missing; default 16 (0: never hold, report every gap at once)
   * @param first the first sequence of a connection; default 1
   */
  constructor(windowFrames: number = DEFAULT_REORDER_WINDOW_FRAMES, first = 1) {
    this.#windowFrames = Math.max(0, Math.floor(windowFrames));
    this.#next = first;
  }

  /** Frames held, waiting for an earlier one. */
  get held(): number {
    return this.#held.size;
  }

  /** The next sequence expected. */
  get next(): number {
    return this.#next;
  }

  push(sequence: number, item: T): SequenceVerdict<T> {
    if (!Number.isSafeInteger(sequence) || sequence < this.#next || this.#held.has(sequence)) {
      return { release: [], duplicate: true, gaps: [] };
    }
    this.#held.set(sequence, item);
    const release = this.#releaseRun();
    const gaps: SequenceGap[] = [];
    while (this.#held.size > this.#windowFrames) {
      gaps.push(this.#skipToLowest());
      release.push(...this.#releaseRun());
    }
    return { release, duplicate: false, gaps };
  }

  /** Release everything held, in order, giving up on the sequences still missing (end of a segment or request). */
  drain(): SequenceVerdict<T> {
    const release: T[] = [];
    const gaps: SequenceGap[] = [];
    while (this.#held.size > 0) {
      gaps.push(this.#skipToLowest());
      release.push(...this.#releaseRun());
    }
    return { release, duplicate: false, gaps };
  }

  #releaseRun(): T[] {
    const out: T[] = [];
    for (;;) {
      const item = this.#held.get(this.#next);
      if (item === undefined && !this.#held.has(this.#next)) return out;
      this.#held.delete(this.#next);
      this.#next++;
      out.push(item as T);
    }
  }

  #skipToLowest(): SequenceGap {
    const lowest = Math.min(...this.#held.keys());
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
 * Spec 6 says `audio` carries an "increasing sequence" but not its scope: a
 * deployment may count per connection (ours), per segment, or across the
 * whole request (continuing after a resume). So each segment has its own
 * window, and the sequence it starts at is inferred:
 *
 * - the first frame of a fresh request is expected at 1; on a resumed
 *   connection, the first frame starts wherever it is (a deployment may
 *   continue the request's count);
 * - a later segment starts right after the highest sequence seen on the
 *   connection, or at 1 once the deployment was seen to count per segment
 *   (a new segment's frame came with a sequence already used).
 *
 * On a resumed connection, a frame that overtakes the first one cannot be
 * told from a repeat: it is dropped as one. Repeats are exact (same segment,
 * same sequence).
 */
export class AudioOrder<T> {
  readonly #windowFrames: number;
  readonly #segments = new Map<string, SequenceWindow<T>>();
  #highest = 0;
  #perSegment = false;

  readonly #firstExpected: number | undefined;

  /**
   * @param windowFrames frames held at most per segment while one is missing
   * @param firstExpected the sequence the connection's first frame should have (1 on a fresh request,
   *   where every numbering starts at 1); undefined: wherever it is (a resumed connection may continue the request's count)
   */
  constructor(windowFrames: number = DEFAULT_REORDER_WINDOW_FRAMES, firstExpected: number | undefined = 1) {
    this.#windowFrames = windowFrames;
    this.#firstExpected = firstExpected;
  }

  /** Frames held, over all segments (kept as a count: the machine asks on every input). */
  get held(): number {
    return this.#held;
  }

  #held = 0;

  /** Apply a window operation, keeping the held count. */
  #track(window: SequenceWindow<T>, run: () => SequenceVerdict<T>): SequenceVerdict<T> {
    const before = window.held;
    const verdict = run();
    this.#held += window.held - before;
    return verdict;
  }

  push(segmentId: string, sequence: number, item: T): SequenceVerdict<T> {
    let window = this.#segments.get(segmentId);
    if (!window) {
      window = new SequenceWindow<T>(this.#windowFrames, this.#firstOf(sequence));
      this.#segments.set(segmentId, window);
    }
    if (Number.isSafeInteger(sequence)) this.#highest = Math.max(this.#highest, sequence);
    const w = window;
    return this.#track(w, () => w.push(sequence, item));
  }

  /** A segment completed: release what it still holds. */
  drainSegment(segmentId: string): SequenceVerdict<T> {
    const window = this.#segments.get(segmentId);
    return window ? this.#track(window, () => window.drain()) : { release: [], duplicate: false, gaps: [] };
  }

  /** The request ended: release what every segment still holds, segment by segment. */
  drainAll(): SequenceVerdict<T> {
    const release: T[] = [];
    const gaps: SequenceGap[] = [];
    for (const w of this.#segments.values()) {
      const v = this.#track(w, () => w.drain());
      release.push(...v.release);
      gaps.push(...v.gaps);
    }
    return { release, duplicate: false, gaps };
  }

  #firstOf(sequence: number): number {
    if (this.#segments.size === 0) return this.#firstExpected ?? (Number.isSafeInteger(sequence) && sequence > 0 ? sequence : 1);
    // A new segment's frame at a sequence already used on this connection:
    // the deployment counts per segment.
    if (Number.isSafeInteger(sequence) && sequence <= this.#highest) this.#perSegment = true;
    return this.#perSegment ? 1 : this.#highest + 1;
  }
}
