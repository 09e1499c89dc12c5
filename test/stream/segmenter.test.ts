import { describe, expect, it } from 'vitest';
import { LIMITS, countChars } from '../../src/protocol/limits.js';
import {
  BoundaryKind,
  CutMode,
  SEGMENTER_DEFAULTS,
  findBoundaries,
  resolveSegmenterOptions,
  segmentText,
  splitForFrames,
} from '../../src/stream/segmenter.js';
import type { SegmenterOptions, SegmenterState } from '../../src/stream/segmenter.js';

/** Every sentence its own segment: later-segment rules with a target of 1. */
function sentences(text: string, options: SegmenterOptions = {}): string[] {
  const r = segmentText(text, { emitted: 1 }, CutMode.final, { targetChars: 1, ...options });
  expect(r.segments.join('') + r.rest).toBe(text);
  return r.segments;
}

/** A lone surrogate at either end of a string means a pair was split. */
function splitsPair(s: string): boolean {
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  return (first >= 0xdc00 && first <= 0xdfff) || (last >= 0xd800 && last <= 0xdbff);
}

describe('sentence boundaries', () => {
  const cases: Array<[string, string, string[]]> = [
    ['titles', 'Mr. Smith met Dr. Jones and Mrs. Brown. He arrived.', ['Mr. Smith met Dr. Jones and Mrs. Brown. ', 'He arrived.']],
    ['e.g. and i.e.', 'Use a fruit, e.g. an apple, i.e. the red one. Then eat it.', ['Use a fruit, e.g. an apple, i.e. the red one. ', 'Then eat it.']],
    ['etc. before lowercase', 'Apples, pears, etc. are fruit. Okay.', ['Apples, pears, etc. are fruit. ', 'Okay.']],
    ['etc. before a sentence opener', 'Apples, pears, etc. The end.', ['Apples, pears, etc. ', 'The end.']],
    ['vs. and St.', 'It was Red vs. Blue on St. Patrick day. Fun.', ['It was Red vs. Blue on St. Patrick day. ', 'Fun.']],
    ['initials', 'J. R. R. Tolkien wrote it. It sold well.', ['J. R. R. Tolkien wrote it. ', 'It sold well.']],
    ['acronym mid-sentence', 'The U.S. economy grew. Fine.', ['The U.S. economy grew. ', 'Fine.']],
    ['acronym ends a sentence', 'She moved to the U.S. The move went well.', ['She moved to the U.S. ', 'The move went well.']],
    ['Ph.D. then a sentence', 'He has a Ph.D. He works at 5 p.m. Bob said hi.', ['He has a Ph.D. ', 'He works at 5 p.m. Bob said hi.']],
    ['decimals and versions', 'Pi is 3.14 roughly. Version v1.2.3 is out. It costs $4.50 today.', ['Pi is 3.14 roughly. ', 'Version v1.2.3 is out. ', 'It costs $4.50 today.']],
    ['number after a period', 'See No. 5 and approx. 3 km away. Go.', ['See No. 5 and approx. 3 km away. ', 'Go.']],
    ['URL and email', 'Visit https://example.com/a.b?c=d now. Mail a.b@example.com today. Done.', ['Visit https://example.com/a.b?c=d now. ', 'Mail a.b@example.com today. ', 'Done.']],
    ['URL at a sentence end', 'Visit https://example.com. Then leave.', ['Visit https://example.com. ', 'Then leave.']],
    ['ellipses', 'Wait... what happened? Nothing... Then silence…', ['Wait... what happened? ', 'Nothing... ', 'Then silence…']],
    ['quote after the period', 'He said "Hi." Then he left.', ['He said "Hi." ', 'Then he left.']],
    ['curly quotes and brackets', 'She wrote “Done.” (It was.) Next.', ['She wrote “Done.” ', '(It was.) ', 'Next.']],
    ['quoted exclamation inside a sentence', '"Stop!" she said. Okay.', ['"Stop!" she said. ', 'Okay.']],
    ['runs of ! and ?', 'Really?! Yes!!! Sure?', ['Really?! ', 'Yes!!! ', 'Sure?']],
    ['emoji', 'Great 🎉. Next 👍🏽 one! 👨‍👩‍👧 family.', ['Great 🎉. ', 'Next 👍🏽 one! ', '👨‍👩‍👧 family.']],
    ['CJK without spaces', '今天天气很好。我们去公园吧！你觉得呢？好的；走吧', ['今天天气很好。', '我们去公园吧！', '你觉得呢？', '好的；', '走吧']],
    ['CJK closing bracket', '「こんにちは。」と彼は言った。', ['「こんにちは。」', 'と彼は言った。']],
    ['line breaks', 'Title\nFirst line\n\nSecond para.', ['Title\n', 'First line\n\n', 'Second para.']],
    ['numbered list', 'Steps:\n1. Open the box.\n2. Take it out.', ['Steps:\n', '1. Open the box.\n', '2. Take it out.']],
    ['ordinal', 'He came 3rd. Then he left.', ['He came 3rd. ', 'Then he left.']],
    ['markdown bold', '**Note.** Read this.', ['**Note.** ', 'Read this.']],
    ['no space after the period', 'Hello.World is one word here. Yes.', ['Hello.World is one word here. ', 'Yes.']],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(sentences(text)).toEqual(expected);
  });

  it('keeps the whitespace after a sentence with that sentence', () => {
    expect(sentences('One.  \n  Two.\tThree.  ')).toEqual(['One.  \n  ', 'Two.\t', 'Three.  ']);
  });

  it('does not start a segment with leading whitespace only', () => {
    expect(sentences('\n\n  Hello there.\nBye.')).toEqual(['\n\n  Hello there.\n', 'Bye.']);
  });

  it('findBoundaries reports clause and sentence cuts', () => {
    const text = 'Well, 1,000 people came: at 10:30 sharp — all of them. Next';
    const got = findBoundaries(text).map((b) => [text.slice(0, b.index), b.kind]);
    expect(got).toEqual([
      ['Well, ', BoundaryKind.clause],
      ['Well, 1,000 people came: ', BoundaryKind.clause],
      ['Well, 1,000 people came: at 10:30 sharp — ', BoundaryKind.clause],
      ['Well, 1,000 people came: at 10:30 sharp — all of them. ', BoundaryKind.sentence],
    ]);
  });

  it('treats a clause mark before a line break as a sentence end', () => {
    expect(findBoundaries('Note:\nhi')).toEqual([{ index: 6, kind: BoundaryKind.sentence }]);
  });

  it('an en dash is a clause mark only when spaced', () => {
    expect(findBoundaries('1990–2000 was – in short – fine').map((b) => b.index)).toEqual([16, 27]);
  });

  it('CJK clause marks need no space', () => {
    expect(findBoundaries('你好，世界、再见').map((b) => b.kind)).toEqual([BoundaryKind.clause, BoundaryKind.clause]);
  });
});

describe('periods at the end of the buffer', () => {
  const stream = (text: string) => segmentText(text, { emitted: 1 }, CutMode.stream, { targetChars: 1 });

  it.each([
    ['an abbreviation that may continue', 'I met Mr.'],
    ['a decimal that may continue', 'It costs $4.'],
    ['a period without the next word', 'It ends here. '],
    ['a period before a possible closing quote', 'He said "Hi.'],
    ['a question mark that may become ?!', 'Really?'],
    ['an acronym before a partial word', 'She moved to the U.S. Th'],
    ['a CJK full stop before a possible closer', '「こんにちは。'],
  ])('waits on %s', (_name, text) => {
    const r = stream(text);
    expect(r.segments).toEqual([]);
    expect(r.rest).toBe(text);
  });

  it('decides once the next word arrives', () => {
    expect(stream('I met Mr. Smith. We').segments).toEqual(['I met Mr. Smith. ']);
    expect(stream('It costs $4.50 now. So').segments).toEqual(['It costs $4.50 now. ']);
    expect(stream('She moved to the U.S. Thomas').segments).toEqual([]);
    expect(stream('She moved to the U.S. The').segments).toEqual([]);
    expect(stream('She moved to the U.S. The ').segments).toEqual(['She moved to the U.S. ']);
  });

  it('treats the end of input as the end of a sentence', () => {
    expect(segmentText('It ends here.', { emitted: 1 }, CutMode.final).segments).toEqual(['It ends here.']);
  });
});

describe('segment sizes', () => {
  it('cuts the first segment at the first clause with firstMinChars before it', () => {
    const r = segmentText('Sure! Here is what I found: the answer is 42. More.', { emitted: 0 }, CutMode.stream);
    expect(r.segments).toEqual(['Sure! Here is what I found: ']);
    expect(r.state.emitted).toBe(1);
  });

  it('emits a short whole input as one segment at the end', () => {
    expect(segmentText('Hi.', { emitted: 0 }, CutMode.final).segments).toEqual(['Hi.']);
    expect(segmentText('Hi.', { emitted: 0 }, CutMode.stream).segments).toEqual([]);
  });

  it('cuts a first segment without punctuation at whitespace before firstMaxChars', () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const r = segmentText(words, { emitted: 0 }, CutMode.stream);
    expect(r.segments).toHaveLength(1);
    const first = r.segments[0] ?? '';
    expect(countChars(first)).toBeLessThanOrEqual(SEGMENTER_DEFAULTS.firstMaxChars);
    expect(countChars(first)).toBeGreaterThan(SEGMENTER_DEFAULTS.firstMaxChars - 8);
    expect(first.endsWith(' ')).toBe(true);
  });

  it('merges short sentences up to targetChars', () => {
    const text = 'One two three. '.repeat(10) + 'End';
    const r = segmentText(text, { emitted: 1 }, CutMode.stream, { targetChars: 50 });
    expect(r.segments).toEqual(['One two three. '.repeat(3), 'One two three. '.repeat(3), 'One two three. '.repeat(3)]);
    expect(r.rest).toBe('One two three. End');
  });

  it('waits while a later sentence could still fit the target', () => {
    const r = segmentText('One two three. Four', { emitted: 1 }, CutMode.stream, { targetChars: 50 });
    expect(r.segments).toEqual([]);
  });

  it('keeps a sentence longer than the target whole', () => {
    const long = `${'blah '.repeat(30)}end. `;
    const r = segmentText(`${long}Next.`, { emitted: 1 }, CutMode.final, { targetChars: 50 });
    expect(r.segments).toEqual([long, 'Next.']);
  });

  it('hard-cuts at a clause, then whitespace, then a code point, never over maxChars', () => {
    const o = { targetChars: 20, maxChars: 30, firstMaxChars: 30 };
    expect(segmentText('aaaa, bbbb cccc dddd eeee ffff gggg hhhh.', { emitted: 1 }, CutMode.final, o).segments[0]).toBe('aaaa, ');
    expect(segmentText('aaaa bbbb cccc dddd eeee ffff gggg hhhh.', { emitted: 1 }, CutMode.final, o).segments[0]).toBe('aaaa bbbb cccc dddd eeee ffff ');
    const solid = 'x'.repeat(70);
    expect(segmentText(solid, { emitted: 1 }, CutMode.final, o).segments).toEqual(['x'.repeat(30), 'x'.repeat(30), 'x'.repeat(10)]);
  });

  it('hard-cuts emoji at code points, counting a pair as one character', () => {
    const text = '😀'.repeat(65);
    const r = segmentText(text, { emitted: 1 }, CutMode.final, { targetChars: 10, maxChars: 30, firstMaxChars: 30 });
    expect(r.segments.map(countChars)).toEqual([30, 30, 5]);
    expect(r.segments.some(splitsPair)).toBe(false);
  });

  it('hard-cuts CJK without punctuation between ideographs', () => {
    const text = '天'.repeat(45);
    const r = segmentText(text, { emitted: 1 }, CutMode.final, { targetChars: 10, maxChars: 20, firstMaxChars: 20 });
    expect(r.segments.map(countChars)).toEqual([20, 20, 5]);
  });

  it('never splits a surrogate pair at the end of the buffer', () => {
    const text = `${'x'.repeat(29)}😀`;
    const half = text.slice(0, -1); // ends with a lone high surrogate
    const o = { targetChars: 10, maxChars: 30, firstMaxChars: 30 };
    expect(segmentText(half, { emitted: 1 }, CutMode.stream, o).segments).toEqual([]);
    expect(segmentText(`${text}y`, { emitted: 1 }, CutMode.stream, o).segments).toEqual([text]);
  });
});

describe('incremental use', () => {
  const TEXT =
    'Hi there, Mr. Smith! The U.S. team won 3.5 to 2. Wait... really? Yes. ' +
    'Visit https://example.com. 今天天气很好。我们走吧！ Emoji 🎉 here, and more words follow without a stop ' +
    'until the very end of this test text';
  const OPTIONS = { targetChars: 30, firstMaxChars: 40, maxChars: 60 };

  /** Feed `text` one code point at a time, as a caller of the pure core would. */
  function feed(passScan: boolean): string[] {
    const out: string[] = [];
    let rest = '';
    let state: SegmenterState = { emitted: 0 };
    for (const ch of Array.from(TEXT)) {
      const r = segmentText(rest + ch, passScan ? state : { emitted: state.emitted }, CutMode.stream, OPTIONS);
      out.push(...r.segments);
      rest = r.rest;
      state = r.state;
    }
    const last = segmentText(rest, passScan ? state : { emitted: state.emitted }, CutMode.final, OPTIONS);
    return [...out, ...last.segments, last.rest];
  }

  it('gives the same segments with or without scan progress, and as one call', () => {
    const whole = segmentText(TEXT, { emitted: 0 }, CutMode.final, OPTIONS);
    const expected = [...whole.segments, whole.rest];
    expect(expected.join('')).toBe(TEXT);
    expect(feed(true)).toEqual(expected);
    expect(feed(false)).toEqual(expected);
  });

  it('returns scan progress only while a segment waits', () => {
    expect(segmentText('Hello there my', { emitted: 1 }, CutMode.stream).state.scan).toBeDefined();
    expect(segmentText('Hello there.', { emitted: 1 }, CutMode.final).state.scan).toBeUndefined();
  });
});

describe('timeout cuts', () => {
  const timeout = (text: string, emitted = 0) => segmentText(text, { emitted }, CutMode.timeout);

  it('prefers the latest sentence end, then clause, then whitespace', () => {
    expect(timeout('Hi there. How are you, my fr', 1).segments).toEqual(['Hi there. ']);
    expect(timeout('Hi there, how are you my fr', 1).segments).toEqual(['Hi there, ']);
    expect(timeout('Hi there how are you my fr', 1).segments).toEqual(['Hi there how are you my ']);
  });

  it('applies the first-segment rules before the timeout cut', () => {
    expect(timeout('Hi there. How are you, my fr').segments).toEqual(['Hi there. How are you, ', 'my ']);
  });

  it('resolves a period at the end of the buffer', () => {
    expect(timeout('I like it.').segments).toEqual(['I like it.']);
    expect(timeout('We met Mr.').segments).toEqual(['We met ']);
  });

  it('cuts nothing inside a single word', () => {
    expect(timeout('Supercalifragilistic').segments).toEqual([]);
  });

  it('cuts once, then follows the normal rules', () => {
    const r = timeout('Hi there how are you', 1);
    expect(r.segments).toEqual(['Hi there how are ']);
    expect(r.rest).toBe('you');
    expect(r.state.emitted).toBe(2);
  });
});

describe('options', () => {
  it('has documented defaults', () => {
    expect(resolveSegmenterOptions()).toEqual({ firstMinChars: 12, firstMaxChars: 80, targetChars: 250, maxChars: LIMITS.segmentMaxChars });
  });

  it('shrinks defaults to fit a smaller maxChars', () => {
    expect(resolveSegmenterOptions({ maxChars: 50 })).toEqual({ firstMinChars: 12, firstMaxChars: 50, targetChars: 50, maxChars: 50 });
    expect(resolveSegmenterOptions({ maxChars: 5 })).toEqual({ firstMinChars: 5, firstMaxChars: 5, targetChars: 5, maxChars: 5 });
  });

  it.each<[string, SegmenterOptions]>([
    ['zero', { targetChars: 0 }],
    ['fraction', { firstMinChars: 1.5 }],
    ['over the service limit', { maxChars: LIMITS.segmentMaxChars + 1 }],
    ['target over max', { targetChars: 100, maxChars: 50 }],
    ['first max over max', { firstMaxChars: 100, maxChars: 50 }],
    ['first min over first max', { firstMinChars: 90 }],
  ])('rejects %s', (_name, o) => {
    expect(() => resolveSegmenterOptions(o)).toThrow(RangeError);
  });
});

describe('splitForFrames', () => {
  it('returns a short segment as one frame', () => {
    expect(splitForFrames('Hello there.')).toEqual(['Hello there.']);
    expect(splitForFrames('')).toEqual([]);
  });

  it('splits a long segment after whitespace, within the frame limit', () => {
    const segment = 'lorem ipsum dolor sit amet '.repeat(370); // ~10,000 characters
    const frames = splitForFrames(segment);
    expect(frames.join('')).toBe(segment);
    expect(frames.length).toBe(5);
    for (const f of frames) expect(countChars(f)).toBeLessThanOrEqual(LIMITS.textFrameMaxChars);
    for (const f of frames.slice(0, -1)) expect(f.endsWith(' ')).toBe(true);
  });

  it('splits emoji at code points, never inside a pair', () => {
    const segment = '😀'.repeat(4100);
    const frames = splitForFrames(segment);
    expect(frames.join('')).toBe(segment);
    expect(frames.map(countChars)).toEqual([2000, 2000, 100]);
    expect(frames.some(splitsPair)).toBe(false);
  });

  it('falls back to a code-point cut when the only space is early', () => {
    expect(splitForFrames(`a ${'b'.repeat(10)}`, 6)).toEqual(['a bbbb', 'bbbbbb']);
  });

  it('honours a custom limit and rejects a bad one', () => {
    expect(splitForFrames('ab cd ef gh', 4)).toEqual(['ab ', 'cd ', 'ef ', 'gh']);
    expect(() => splitForFrames('x', 0)).toThrow(RangeError);
  });
});
