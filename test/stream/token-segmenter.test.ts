import { afterEach, describe, expect, it, vi } from 'vitest';
import { VoxpipeError } from '../../src/errors.js';
import { countChars } from '../../src/protocol/limits.js';
import { CutMode, SEGMENTER_DEFAULTS, segmentText } from '../../src/stream/segmenter.js';
import type { SegmenterOptions } from '../../src/stream/segmenter.js';
import { TokenSegmenter, TokenSegmenterErrorCode } from '../../src/stream/token-segmenter.js';
import type { TimerClock, TokenSegmenterOptions } from '../../src/stream/token-segmenter.js';
import { seededRandom } from '../protocol/frames.js';

/** A long text with every tricky case, emoji and CJK, over several paragraphs. */
const CORPUS = [
  'Sure! Here is a short overview of what Mr. Smith and Dr. Jones found, e.g. in the 2023 report. ',
  'The U.S. economy grew by 3.14 percent, i.e. faster than expected; prices rose to $4.50 per unit. ',
  'J. R. R. Tolkien once wrote: "Not all those who wander are lost." Then he kept writing… ',
  'Wait... what happened next? Nothing much! Really?! Yes!!!\n\n',
  'Version v1.2.3 is out now. Details are at https://example.com/a.b?c=d and questions go to a.b@example.com. ',
  'She moved to the U.S. The move went well, etc. and so on. He said "Hi." Then he left (quietly). ',
  'Emoji are fine 🎉 too 👍🏽, even families 👨‍👩‍👧 and flags 🇫🇷. ',
  'Steps:\n1. Open the box.\n2. Take it out.\n3. Enjoy!\n\n',
  '今天天气很好。我们去公园吧！你觉得呢？好的；走吧。「こんにちは。」と彼は言った。\n',
  'A long paragraph follows, with many clauses — some of them separated by dashes, others by commas, ',
  'and a few by semicolons; it keeps going for a while so that the merging of sentences up to the target ',
  'size is exercised properly. Short one. Another short one. And a third. ',
  'Finally, there is a paragraph without any punctuation at all that just keeps going on and on with words ',
  'and more words and yet more words until it simply stops somewhere near here without a final period',
].join('');

/** LLM-like sub-word tokens: 1 to 8 UTF-16 units, sometimes splitting an emoji's surrogate pair. */
function randomTokens(text: string, seed: number): string[] {
  const rand = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + Math.floor(rand() * 8);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

const SPLITS: Array<[string, (text: string) => string[]]> = [
  ['one chunk', (t) => [t]],
  ['code points', (t) => Array.from(t)],
  ['UTF-16 units (split surrogate pairs)', (t) => t.split('')],
  ['words with their spaces', (t) => t.match(/\S+\s*|\s+/gu) ?? []],
  ['spaces before words', (t) => t.match(/\s*\S+/gu) ?? []],
  ...[1, 2, 3, 42, 1337].map((seed): [string, (text: string) => string[]] => [`random tokens, seed ${seed}`, (t) => randomTokens(t, seed)]),
];

const NO_TIMERS: TokenSegmenterOptions = { firstSegmentTimeoutMs: Infinity, segmentTimeoutMs: Infinity };

function run(tokens: string[], options: TokenSegmenterOptions = NO_TIMERS): { segments: string[]; left: string } {
  const segments: string[] = [];
  const seg = new TokenSegmenter(options, (s) => segments.push(s));
  for (const t of tokens) seg.push(t);
  const left = seg.end();
  return { segments, left };
}

/** The last character of a segment that does not end mid-word. */
const CLEAN_END = /[\s.!?…,;:—。！？；」』）)"'”’*]$/u;

describe('TokenSegmenter over any token split', () => {
  const OPTION_SETS: Array<[string, SegmenterOptions]> = [
    ['defaults', {}],
    ['small target', { targetChars: 40, firstMinChars: 5, firstMaxChars: 30 }],
    ['tiny maxChars', { targetChars: 20, maxChars: 35, firstMaxChars: 25 }],
  ];

  describe.each(OPTION_SETS)('%s', (_name, segOptions) => {
    const reference = segmentText(CORPUS, { emitted: 0 }, CutMode.final, segOptions).segments;

    it('reference segmentation is sane', () => {
      const max = segOptions.maxChars ?? SEGMENTER_DEFAULTS.maxChars;
      const firstMax = segOptions.firstMaxChars ?? SEGMENTER_DEFAULTS.firstMaxChars;
      expect(reference.join('')).toBe(CORPUS);
      expect(reference.length).toBeGreaterThan(3);
      expect(countChars(reference[0] ?? '')).toBeLessThanOrEqual(firstMax);
      for (const s of reference) {
        expect(countChars(s)).toBeLessThanOrEqual(max);
        expect(s.trim()).not.toBe('');
      }
      // Only the end of input and the hard cuts of a tiny maxChars may end mid-word.
      if (segOptions.maxChars === undefined) for (const s of reference.slice(0, -1)) expect(s).toMatch(CLEAN_END);
    });

    it.each(SPLITS)('%s: same segments, nothing lost or added', (_split, split) => {
      const tokens = split(CORPUS);
      expect(tokens.join('')).toBe(CORPUS);
      const { segments, left } = run(tokens, { ...NO_TIMERS, ...segOptions });
      expect(segments.join('') + left).toBe(CORPUS);
      expect(left).toBe('');
      expect(segments).toEqual(reference);
    });
  });

  it('cuts the corpus where expected with the defaults', () => {
    const { segments } = run(randomTokens(CORPUS, 7));
    expect(segments[0]).toBe('Sure! Here is a short overview of what Mr. Smith and Dr. Jones found, ');
    expect(segments.length).toBe(6);
    for (const s of segments.slice(1, -1)) {
      expect(countChars(s)).toBeGreaterThan(SEGMENTER_DEFAULTS.targetChars / 2) // several sentences merged;
      expect(countChars(s)).toBeLessThanOrEqual(SEGMENTER_DEFAULTS.targetChars);
    }
  });

  it.each(SPLITS)('%s: every sentence alone with targetChars 1', (_split, split) => {
    const { segments } = run(split(CORPUS), { ...NO_TIMERS, targetChars: 1 });
    expect(segments).toEqual(EVERY_SENTENCE);
  });
});

/** CORPUS cut at every sentence end (the first segment still ends at the first clause). */
const EVERY_SENTENCE = [
  'Sure! Here is a short overview of what Mr. Smith and Dr. Jones found, ',
  'e.g. in the 2023 report. ',
  'The U.S. economy grew by 3.14 percent, i.e. faster than expected; prices rose to $4.50 per unit. ',
  'J. R. R. Tolkien once wrote: "Not all those who wander are lost." ',
  'Then he kept writing… ',
  'Wait... what happened next? ',
  'Nothing much! ',
  'Really?! ',
  'Yes!!!\n\n',
  'Version v1.2.3 is out now. ',
  'Details are at https://example.com/a.b?c=d and questions go to a.b@example.com. ',
  'She moved to the U.S. ',
  'The move went well, etc. and so on. ',
  'He said "Hi." ',
  'Then he left (quietly). ',
  'Emoji are fine 🎉 too 👍🏽, even families 👨‍👩‍👧 and flags 🇫🇷. ',
  'Steps:\n',
  '1. Open the box.\n',
  '2. Take it out.\n',
  '3. Enjoy!\n\n',
  '今天天气很好。',
  '我们去公园吧！',
  '你觉得呢？',
  '好的；',
  '走吧。',
  '「こんにちは。」',
  'と彼は言った。\n',
  'A long paragraph follows, with many clauses — some of them separated by dashes, others by commas, and a few by semicolons; it keeps going for a while so that the merging of sentences up to the target size is exercised properly. ',
  'Short one. ',
  'Another short one. ',
  'And a third. ',
  'Finally, there is a paragraph without any punctuation at all that just keeps going on and on with words and more words and yet more words until it simply stops somewhere near here without a final period',
];

/** A clock that runs timers only when told, to drive timeouts without waiting. */
class FakeClock implements TimerClock {
  now = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  setTimeout(fn: () => void, delayMs: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.now + delayMs, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  get pending(): number {
    return this.#timers.size;
  }
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.#timers.entries()].filter(([, t]) => t.at <= until).sort((x, y) => x[1].at - y[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = until;
  }
}

function withClock(options: TokenSegmenterOptions = {}) {
  const clock = new FakeClock();
  const segments: string[] = [];
  const seg = new TokenSegmenter({ clock, ...options }, (s) => segments.push(s));
  return { clock, segments, seg };
}

describe('TokenSegmenter timeouts', () => {
  it('cuts the first segment at whitespace after firstSegmentTimeoutMs', () => {
    const { clock, segments, seg } = withClock();
    seg.push('Hello world this is');
    clock.advance(299);
    expect(segments).toEqual([]);
    clock.advance(1);
    expect(segments).toEqual(['Hello world this ']);
    expect(seg.bufferedChars).toBe(2);
  });

  it('counts from the first buffered text, not the last push', () => {
    const { clock, segments, seg } = withClock();
    seg.push('Hello ');
    clock.advance(200);
    seg.push('world ');
    clock.advance(100);
    expect(segments).toEqual(['Hello world ']);
  });

  it('uses segmentTimeoutMs for later segments', () => {
    const { clock, segments, seg } = withClock();
    seg.push('Hello there, my friend. How are');
    expect(segments).toEqual(['Hello there, ']);
    clock.advance(499);
    expect(segments).toHaveLength(1);
    clock.advance(1);
    expect(segments).toEqual(['Hello there, ', 'my friend. ']);
    clock.advance(500);
    expect(segments).toEqual(['Hello there, ', 'my friend. ', 'How ']);
    expect(seg.end()).toBe('');
    expect(segments.join('')).toBe('Hello there, my friend. How are');
  });

  it('defers a later cut while deferCut says the listener still has audio, never the first', () => {
    const asked: number[] = [];
    let runwayMs = 1_000;
    const { clock, segments, seg } = withClock({ deferCut: () => (asked.push(runwayMs), runwayMs) });
    seg.push('Hello world this is');
    clock.advance(300);
    // The first segment's timeout does not ask.
    expect(segments).toEqual(['Hello world this ']);
    expect(asked).toEqual([]);
    seg.push(' the second part without an end');
    clock.advance(500);
    expect(asked).toEqual([1_000]);
    expect(segments).toHaveLength(1);
    runwayMs = 0;
    clock.advance(999);
    expect(segments).toHaveLength(1);
    clock.advance(1);
    expect(asked).toEqual([1_000, 0]);
    expect(segments).toHaveLength(2);
    const rest = seg.end();
    expect(segments.join('') + rest).toBe('Hello world this is the second part without an end');
  });

  it('resolves a period at the end of the buffer on timeout', () => {
    const { clock, segments, seg } = withClock();
    seg.push('I like it.');
    clock.advance(300);
    expect(segments).toEqual(['I like it.']);
  });

  it('keeps an abbreviation at the end of the buffer on timeout', () => {
    const { clock, segments, seg } = withClock();
    seg.push('We met Mr.');
    clock.advance(300);
    expect(segments).toEqual(['We met ']);
    seg.push(' Smith. Then');
    expect(segments).toEqual(['We met ']);
  });

  it('after a timeout without any cut, the next push cuts at once', () => {
    const { clock, segments, seg } = withClock();
    seg.push('Hello');
    clock.advance(1000);
    expect(segments).toEqual([]);
    expect(clock.pending).toBe(0);
    seg.push(' there');
    expect(segments).toEqual(['Hello ']);
    expect(clock.pending).toBe(1); // "there" waits under a fresh timer
  });

  it('does not arm a timer for whitespace', () => {
    const { clock, seg } = withClock();
    seg.push('  \n');
    expect(clock.pending).toBe(0);
  });

  it('Infinity disables the timeouts', () => {
    const { clock, segments, seg } = withClock({ firstSegmentTimeoutMs: Infinity, segmentTimeoutMs: Infinity });
    seg.push('Hello world this is');
    clock.advance(60_000);
    expect(segments).toEqual([]);
    expect(clock.pending).toBe(0);
  });

  it('rejects a negative timeout', () => {
    expect(() => new TokenSegmenter({ segmentTimeoutMs: -1 }, () => {})).toThrow(RangeError);
  });

  describe('with vitest fake timers and the default clock', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('fires the first-segment timeout', () => {
      vi.useFakeTimers();
      const segments: string[] = [];
      const seg = new TokenSegmenter({}, (s) => segments.push(s));
      seg.push('Speech should start soon');
      vi.advanceTimersByTime(300);
      expect(segments).toEqual(['Speech should start ']);
      seg.clear();
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});

describe('TokenSegmenter flush, end and clear', () => {
  it('flush emits everything and starts a new utterance', () => {
    const { segments, seg } = withClock();
    seg.push('Hello there, my friend. How are');
    seg.flush();
    expect(segments).toEqual(['Hello there, ', 'my friend. How are']);
    expect(seg.bufferedChars).toBe(0);
    expect(seg.segmentsEmitted).toBe(0);
    seg.push('Next turn starts here, small. More');
    expect(segments.at(-1)).toBe('Next turn starts here, ');
  });

  it('flush keeps whitespace-only text for the next segment', () => {
    const { segments, seg } = withClock();
    seg.push('One sentence here.');
    seg.flush();
    seg.push('\n');
    seg.flush();
    expect(segments).toEqual(['One sentence here.']);
    seg.push('Second sentence here.');
    seg.flush();
    expect(segments).toEqual(['One sentence here.', '\nSecond sentence here.']);
  });

  it('end returns leftover whitespace and forbids more text', () => {
    const { segments, seg } = withClock();
    seg.push('Done.');
    seg.flush();
    seg.push('  ');
    expect(seg.end()).toBe('  ');
    expect(segments).toEqual(['Done.']);
    expect(seg.end()).toBe('');
    let error: unknown;
    try {
      seg.push('more');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VoxpipeError);
    expect((error as VoxpipeError).code).toBe(TokenSegmenterErrorCode.ended);
  });

  it('clear drops the buffer, returns it and cancels the timer', () => {
    const { clock, segments, seg } = withClock();
    seg.push('Hello there, my friend. How are');
    expect(seg.bufferedChars).toBe(countChars('my friend. How are'));
    expect(seg.clear()).toBe('my friend. How are');
    expect(seg.bufferedChars).toBe(0);
    clock.advance(10_000);
    expect(segments).toEqual(['Hello there, ']);
    seg.push('After barge-in, small first. More');
    expect(segments).toEqual(['Hello there, ', 'After barge-in, ']); // first-segment rules again
  });

  it('delivers segments in order when onSegment pushes re-entrantly', () => {
    const segments: string[] = [];
    let pushed = false;
    const seg = new TokenSegmenter({ ...NO_TIMERS, targetChars: 1 }, (s) => {
      segments.push(s);
      if (!pushed) {
        pushed = true;
        seg.push(' Extra one. X');
      }
    });
    seg.push('First clause here, second. Third. ');
    seg.push('Y');
    seg.end();
    expect(segments.join('')).toBe('First clause here, second. Third.  Extra one. XY');
    expect(segments[0]).toBe('First clause here, ');
  });
});
