/**
 * A clock a sink can be paced by. The system clock for real use; a manual
 * clock for tests, which only moves when told to, so pacing and underruns can
 * be asserted without timing anything.
 */

/** Monotonic time and one-shot timers, in milliseconds. */
export interface Clock {
  /** Current time in ms (monotonic, arbitrary origin). */
  now(): number;
  /** Run `fn` after `delayMs`; returns a function that cancels it. */
  setTimer(fn: () => void, delayMs: number): () => void;
}

/** The real clock: `performance.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(fn, delayMs) {
    const timer = setTimeout(fn, Math.max(0, delayMs));
    return () => clearTimeout(timer);
  },
};

interface PendingTimer {
  atMs: number;
  fn: () => void;
  order: number;
}

/**
 * A clock that stands still until `advance()` is called. Timers due within
 * the advanced span fire in time order, each with `now()` set to its due time.
 * A stalled sink is a null-clock sink on a manual clock nobody advances.
 */
export class ManualClock implements Clock {
  private nowMs: number;
  private timers: PendingTimer[] = [];
  private nextOrder = 0;

  /** @param startMs initial time, default 0 */
  constructor(startMs = 0) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimer(fn: () => void, delayMs: number): () => void {
    const timer: PendingTimer = { atMs: this.nowMs + Math.max(0, delayMs), fn, order: this.nextOrder++ };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Move time forward by `ms`, firing the timers that fall due on the way. */
  advance(ms: number): void {
    const targetMs = this.nowMs + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => t.atMs <= targetMs)
        .sort((a, b) => a.atMs - b.atMs || a.order - b.order)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.atMs);
      due.fn();
    }
    this.nowMs = targetMs;
  }
}
