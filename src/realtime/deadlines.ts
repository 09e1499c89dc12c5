/**
 * The deadlines of a sans-IO machine, written once for both modes: which of
 * its named timers are armed, and the progress watch (the budget of quiet
 * the server may take while it owes a frame, checked in slices, with
 * overload read from the server's other streams). The machine decides what
 * is owed and what a fired timer means for its mode; this counts slices and
 * keeps the timers honest. No clock: timers run behind the machine's port.
 *
 * Why slices: a frame that moves what is owed (`progress()`) only marks the
 * current slice, so audio frames cost no timer calls; the watch stalls once
 * `PROGRESS_SLICES` slices in a row passed without one (the quiet lasts
 * between the budget and 1 + 1/PROGRESS_SLICES of it). Why overload: without
 * own progress, a slice in which another stream on this server progressed
 * is busy, not quiet, up to `OVERLOAD_MAX_BUDGETS` (budgets.ts).
 */
import { PROGRESS_SLICES, type OverloadWatch } from './budgets.js';

/** Where a machine's timers run: its port. */
export interface TimerPort<Id> {
  startTimer(id: Id, ms: number): void;
  cancelTimer(id: Id): void;
}

/** One slice of a progress budget, in ms (at least 1). */
export function progressSliceMs(budgetMs: number): number {
  return Math.max(1, Math.ceil(budgetMs / PROGRESS_SLICES));
}

export class Deadlines<Id extends string> {
  readonly #port: TimerPort<Id>;
  /** The machine's timers: each one's bit is its place here (the timers armed are a number, not a Set: memory per stream). */
  readonly #ids: readonly Id[];
  /** The timer of the progress watch, and its bit (asked after every input). */
  readonly #progressId: Id;
  readonly #progressBit: number;
  readonly #overload: OverloadWatch | undefined;
  #armed = 0;
  /** A frame moved what is owed during the current slice. */
  #progressSeen = false;
  /** Slices in a row that brought no progress. */
  #quietSlices = 0;
  /** The budget the running progress timer measures. */
  #budget = 0;

  /**
   * @param ids every timer the machine runs (at most 31)
   * @param progressId the timer the progress watch runs on
   * @param overload the server's other streams (`OverloadWatch`); absent: every slice without own progress is quiet
   */
  constructor(port: TimerPort<Id>, ids: readonly Id[], progressId: Id, overload?: OverloadWatch) {
    this.#port = port;
    this.#ids = ids;
    this.#progressId = progressId;
    this.#progressBit = this.#bit(progressId);
    this.#overload = overload;
  }

  armed(id: Id): boolean {
    return (this.#armed & this.#bit(id)) !== 0;
  }

  start(id: Id, ms: number): void {
    this.#armed |= this.#bit(id);
    this.#port.startTimer(id, ms);
  }

  cancel(id: Id): void {
    if (this.fired(id)) this.#port.cancelTimer(id);
  }

  /** Forget a timer that fired; false when it was not armed (cancelled, or a stale fire the machine ignores). */
  fired(id: Id): boolean {
    const bit = this.#bit(id);
    if ((this.#armed & bit) === 0) return false;
    this.#armed &= ~bit;
    return true;
  }

  cancelAll(): void {
    for (const id of this.#ids) this.cancel(id);
  }

  #bit(id: Id): number {
    return 1 << this.#ids.indexOf(id);
  }

  /**
   * Keep the progress watch, after every input: armed over `budgetMs` while
   * the server owes a frame and the reader reads, cancelled otherwise. A new
   * budget (a different wait) starts it afresh; the same one keeps counting.
   */
  watch(owed: boolean, budgetMs: number): void {
    const id = this.#progressId;
    const armed = (this.#armed & this.#progressBit) !== 0;
    if (!owed) {
      if (armed) this.cancel(id);
      return;
    }
    if (armed && budgetMs === this.#budget) return;
    this.#budget = budgetMs;
    this.#progressSeen = false;
    this.#quietSlices = 0;
    this.#overload?.restart();
    this.start(id, progressSliceMs(budgetMs));
  }

  /** A frame moved what is owed: the current slice is not quiet (nor, for the server's other streams, theirs). */
  progress(): void {
    this.#progressSeen = true;
    this.#overload?.progress();
  }

  /**
   * A slice of the progress watch ended (its timer fired while still owed):
   * true when a whole budget of slices passed without progress (the server
   * stalled); else the next slice is armed.
   */
  sliceEnded(): boolean {
    const busy = this.#overload?.busy(this.#progressSeen) === true;
    this.#quietSlices = this.#progressSeen || busy ? 0 : this.#quietSlices + 1;
    this.#progressSeen = false;
    if (this.#quietSlices >= PROGRESS_SLICES) return true;
    this.start(this.#progressId, progressSliceMs(this.#budget));
    return false;
  }
}
