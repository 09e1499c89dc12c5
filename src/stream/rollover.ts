/**
 * Texts longer than one request may carry: a realtime request (session)
 * carries at most `LIMITS.sessionMaxUnits` billing units (spec 8), one per
 * character. SpeechStream speaks such a text over one request after another
 * (`SpeechStreamOptions.nextRequest`); this is where it decides when: a
 * `RequestBudget` counts the units handed to the current request, says when
 * to open the next one ahead and when a segment must go to it.
 */
import { countChars, LIMITS } from '../protocol/limits.js';

/** The default budget of one request: 95 % of the session limit (a margin for units counted otherwise than characters). */
export const DEFAULT_REQUEST_UNITS = Math.floor(LIMITS.sessionMaxUnits * 0.95);

/** Share of its budget a request carries before the next one is opened ahead: 80 %. */
const OPEN_AHEAD_SHARE = 0.8;

/** What to do with the next segment: send it to the current request, also open the next request ahead, or move on to the next request first. */
export const BudgetStep = { send: 'send', openAhead: 'open-ahead', moveOn: 'move-on' } as const;
export type BudgetStep = (typeof BudgetStep)[keyof typeof BudgetStep];

/** The units one request carries, counted as its segments are handed to it. */
export class RequestBudget {
  readonly units: number;
  #used = 0;

  constructor(units = DEFAULT_REQUEST_UNITS) {
    this.units = Math.max(1, units);
  }

  /** Where a segment of `text` goes; counted on the request it goes to (after a `moveOn`, the next one's). */
  take(text: string): BudgetStep {
    const units = countChars(text);
    if (this.#used > 0 && this.#used + units > this.units) {
      this.#used = units;
      return BudgetStep.moveOn;
    }
    this.#used += units;
    return this.#used > this.units * OPEN_AHEAD_SHARE ? BudgetStep.openAhead : BudgetStep.send;
  }
}
