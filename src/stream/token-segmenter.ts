/**
 * Stateful wrapper of the pure segmenter: buffers LLM tokens, hands each
 * segment to a callback as soon as it is decided, and cuts early on a timeout
 * so speech starts even for text without punctuation.
 */
import { VoxpipeError } from '../errors.js';
import { LocalErrorCode } from '../protocol/codes.js';
import { countChars } from '../protocol/limits.js';
import { CutMode, resolveSegmenterOptions, segmentText } from './segmenter.js';
import type { ResolvedSegmenterOptions, ScanProgress, SegmenterOptions, SegmenterState } from './segmenter.js';

/** One-shot timers; the global `setTimeout`/`clearTimeout` by default, a fake in tests. */
export interface TimerClock {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of `TokenSegmenter`. */
export interface TokenSegmenterOptions extends SegmenterOptions {
  /**
   * Longest wait for the first segment, from the first buffered text, before
   * cutting at the best place available (sentence, clause, then whitespace).
   * Default 300 ms: a few LLM tokens, small next to the service's time to
   * first audio. `Infinity` disables it.
   */
  firstSegmentTimeoutMs?: number;
  /**
   * The same for later segments, from when the buffered text started waiting.
   * Default 500 ms: the next segment reaches the service before a short first
   * segment (about 1 s of audio) has finished playing. `Infinity` disables it.
   */
  segmentTimeoutMs?: number;
  /**
   * Asked when a later segment's timeout fires: how many more milliseconds
   * the cut may wait (e.g. the listener still has that much audio to hear, so
   * cutting mid-sentence would buy nothing), or 0 (or less) to cut now.
   * Default: always cut. The first segment's timeout never defers.
   */
  deferCut?: () => number;
  /** Timer source. Default: the global timers (so `vi.useFakeTimers()` works). */
  clock?: TimerClock;
}

/** Codes of the errors `TokenSegmenter` throws. */
export const TokenSegmenterErrorCode = {
  ended: LocalErrorCode.segmenterEnded,
} as const;

const defaultClock: TimerClock = {
  // Looked up at call time, so fake timers installed later are used.
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function checkTimeout(name: string, ms: number): number {
  if (Number.isNaN(ms) || ms < 0) throw new RangeError(`${name} must be a non-negative number of ms`);
  return ms;
}

function hasContent(text: string): boolean {
  return text.trim() !== '';
}

/**
 * Turns a token stream into speech segments.
 *
 * ```ts
 * const seg = new TokenSegmenter({}, (text) => send(text));
 * for await (const token of llm) seg.push(token);
 * seg.end();
 * ```
 *
 * Segments follow the rules of `segmentText` (first one small and early,
 * then whole sentences up to `targetChars`, never over `maxChars`).
 * Without timeouts firing, the segments do not depend on how the text was
 * split into tokens. `onSegment` runs synchronously inside `push`, `flush`
 * or the timer callback (so an exception it throws surfaces there: from the
 * timer it would be uncaught). Segments are not whitespace only (see
 * `SegmentTextResult`) and, joined, give back every character pushed;
 * whitespace left over at `end()` is returned by it.
 */
export class TokenSegmenter {
  readonly #options: ResolvedSegmenterOptions;
  readonly #firstTimeoutMs: number;
  readonly #segmentTimeoutMs: number;
  readonly #deferCut: (() => number) | undefined;
  readonly #clock: TimerClock;
  readonly #onSegment: (text: string) => void;
  #buffer = '';
  #emitted = 0;
  /** Where the scan of the buffered text stopped; valid while text is only appended. */
  #scan: ScanProgress | undefined = undefined;
  #timer: unknown = undefined;
  #timerArmed = false;
  /** A timeout ran out without a cut: every push tries a timeout cut until one succeeds. */
  #overdue = false;
  #ended = false;
  #queue: string[] = [];
  #delivering = false;

  /**
   * @param options segmenter options (see `SegmenterOptions`) and timeouts
   * @param onSegment called with each segment, in order
   */
  constructor(options: TokenSegmenterOptions = {}, onSegment: (text: string) => void) {
    this.#options = resolveSegmenterOptions(options);
    this.#firstTimeoutMs = checkTimeout('firstSegmentTimeoutMs', options.firstSegmentTimeoutMs ?? 300); // ms
    this.#segmentTimeoutMs = checkTimeout('segmentTimeoutMs', options.segmentTimeoutMs ?? 500); // ms
    this.#deferCut = options.deferCut;
    this.#clock = options.clock ?? defaultClock;
    this.#onSegment = onSegment;
  }

  /** Add text (any split: characters, words, sub-word tokens). Throws after `end()`. */
  push(token: string): void {
    if (this.#ended) throw new VoxpipeError(TokenSegmenterErrorCode.ended, 'push() after end()');
    if (token === '') return;
    this.#buffer += token;
    this.#process(this.#overdue ? CutMode.timeout : CutMode.stream);
  }

  /**
   * Emit everything buffered (end of an utterance, or the user asked to speak
   * now). The next text starts a new utterance, with a small first segment.
   * Whitespace-only text stays buffered and leads the next segment.
   */
  flush(): void {
    if (this.#ended) return;
    this.#process(CutMode.final);
  }

  /**
   * Flush and stop accepting text. Returns the whitespace that was left over
   * and never emitted (usually ''). Calling it again returns ''.
   */
  end(): string {
    if (this.#ended) return '';
    this.flush();
    this.#ended = true;
    const rest = this.#buffer;
    this.#buffer = '';
    this.#disarm();
    return rest;
  }

  /**
   * Barge-in: drop the buffered text (and segments not yet handed out by a
   * re-entrant call) and cancel the timer. Returns what was dropped. The next
   * text starts a new utterance.
   */
  clear(): string {
    const dropped = this.#queue.join('') + this.#buffer;
    this.#queue = [];
    this.#buffer = '';
    this.#emitted = 0;
    this.#scan = undefined;
    this.#overdue = false;
    this.#disarm();
    return dropped;
  }

  /** Buffered characters (Unicode code points) not yet emitted. */
  get bufferedChars(): number {
    return countChars(this.#buffer);
  }

  /** Segments emitted in the current utterance (reset by `flush`, `end`, `clear`). */
  get segmentsEmitted(): number {
    return this.#emitted;
  }

  #process(mode: CutMode): void {
    const state: SegmenterState = this.#scan === undefined ? { emitted: this.#emitted } : { emitted: this.#emitted, scan: this.#scan };
    const result = segmentText(this.#buffer, state, mode, this.#options);
    this.#buffer = result.rest;
    this.#emitted = result.state.emitted;
    this.#scan = result.state.scan;
    if (result.segments.length > 0 || mode === CutMode.final) {
      this.#overdue = false;
      this.#disarm();
    }
    if (mode === CutMode.final) {
      this.#emitted = 0;
      this.#scan = undefined;
    }
    this.#arm();
    this.#deliver(result.segments);
  }

  /** Start the timeout when text waits and no timer runs. */
  #arm(): void {
    if (this.#timerArmed || this.#overdue || this.#ended || !hasContent(this.#buffer)) return;
    const delayMs = this.#emitted === 0 ? this.#firstTimeoutMs : this.#segmentTimeoutMs;
    if (!Number.isFinite(delayMs)) return;
    this.#timerArmed = true;
    this.#timer = this.#clock.setTimeout(this.#onTimeout, delayMs);
  }

  #disarm(): void {
    if (!this.#timerArmed) return;
    this.#timerArmed = false;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  readonly #onTimeout = (): void => {
    this.#timerArmed = false;
    this.#timer = undefined;
    const deferMs = this.#emitted > 0 && this.#deferCut ? this.#deferCut() : 0;
    if (deferMs > 0 && Number.isFinite(deferMs)) {
      this.#timerArmed = true;
      this.#timer = this.#clock.setTimeout(this.#onTimeout, deferMs);
      return;
    }
    this.#overdue = true;
    this.#process(CutMode.timeout);
  };

  /** Hand segments out in order, also when `onSegment` pushes re-entrantly. */
  #deliver(segments: string[]): void {
    if (segments.length === 0) return;
    for (const segment of segments) this.#queue.push(segment);
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) this.#onSegment(next);
    } finally {
      this.#delivering = false;
    }
  }
}
