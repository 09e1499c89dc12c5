/**
 * Texts longer than one request may carry: a realtime request (session)
 * carries at most `LIMITS.sessionMaxUnits` billing units (spec 8), one per
 * character. SpeechStream speaks such a text over one request after another
 * (`SpeechStreamOptions.nextRequest`); this is where it decides when: a
 * `RequestBudget` counts the units handed to the current request, says when
 * to open the next one ahead and when a segment must go to it, and a
 * `RequestChain` holds the requests: the next one opened ahead, the ids of
 * all, and the ones moved on from while they end.
 */
import { AbortError, VoxpipeError } from '../errors.js';
import { countChars, LIMITS } from '../protocol/limits.js';
import type { ReadyInfo, SegmentTransport } from '../transport.js';

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

/** A next request's transport, opened ahead of the segment that moves on to it. */
export interface NextRequest {
  transport: SegmentTransport;
  opened: Promise<ReadyInfo>;
}

/** The requests of one stream, one after another. */
export class RequestChain {
  /** Every request's id, in order. */
  readonly ids: string[] = [];
  readonly #create: () => SegmentTransport;
  readonly #signal: AbortSignal | undefined;
  #next: NextRequest | undefined;
  readonly #ending: Promise<void>[] = [];

  constructor(create: () => SegmentTransport, signal: AbortSignal | undefined) {
    this.#create = create;
    this.#signal = signal;
  }

  /** Build and open the next request now (once), so it is ready when the stream moves on to it; a failure surfaces then. */
  openAhead(): NextRequest {
    if (this.#next) return this.#next;
    const transport = this.#create();
    const opened = transport.open(this.#signal);
    opened.catch(() => undefined);
    return (this.#next = { transport, opened });
  }

  /** The request opened ahead becomes the current one: `info` is its `ready`. */
  advance(info: ReadyInfo): void {
    this.#next = undefined;
    this.ids.push(info.requestId);
  }

  /** A request opened ahead and not needed: abort it (it was given no text). */
  drop(): void {
    const next = this.#next;
    this.#next = undefined;
    if (next) void next.opened.then(() => next.transport.abort(new AbortError('not needed')), () => undefined).catch(() => undefined);
  }

  /**
   * End a request moved on from (its audio is all in: a failure to end it
   * costs the listener nothing, and is only `warn`ed).
   */
  retire(transport: SegmentTransport, warn: (warning: { code: string; message: string }) => void): void {
    // Retired before the next request is advanced to: the last id is its own.
    const id = this.ids[this.ids.length - 1] ?? '';
    // It has nothing more to say but its end: let it read its socket.
    transport.resume();
    const ended = transport.end().then(
      () => undefined,
      (err: unknown) => warn({ code: err instanceof VoxpipeError ? err.code : 'internal_error', message: `request ${id} did not end cleanly: ${(err as Error).message}` }),
    );
    this.#ending.push(ended.finally(() => transport.removeAllListeners()));
  }

  /** Resolves once every request moved on from has ended. */
  async ended(): Promise<void> {
    await Promise.all(this.#ending);
  }
}
