import { describe, expect, it } from 'vitest';
import { countChars, splitByChars } from '../../src/protocol/limits.js';
import { seededRandom } from './frames.js';

const HIGH = '\ud83d'; // first half of 😀
const LOW = '\ude00'; // second half of 😀

describe('countChars counts Unicode code points', () => {
  it.each([
    ['empty', '', 0],
    ['ASCII', 'hello', 5],
    ['one emoji (a surrogate pair)', '😀', 1],
    ['emoji between letters', 'a😀b', 3],
    ['2,000 emoji', '😀'.repeat(2000), 2000],
    ['CJK (one UTF-16 unit each)', '你好世界', 4],
    ['combining accent counts apart', 'e\u0301', 2],
    ['ZWJ family: 3 emoji + 2 joiners', '👨‍👩‍👧', 5],
    ['lone high surrogate', HIGH, 1],
    ['lone low surrogate', LOW, 1],
    ['low then high (not a pair)', LOW + HIGH, 2],
    ['high surrogate at the end', 'ab' + HIGH, 3],
  ])('%s -> %i', (_name, text, expected) => {
    expect(countChars(text)).toBe(expected);
    // Same as the iterator's notion of code points.
    expect(countChars(text)).toBe([...text].length);
  });
});

describe('splitByChars', () => {
  it.each([
    ['ASCII in twos', 'abcdef', 2, ['ab', 'cd', 'ef']],
    ['ASCII with a remainder', 'abcde', 2, ['ab', 'cd', 'e']],
    ['emoji are never cut', '😀😀😀', 2, ['😀😀', '😀']],
    ['one code point per piece', 'a😀b', 1, ['a', '😀', 'b']],
    ['pair straddling the boundary', 'ab😀c', 3, ['ab😀', 'c']],
    ['lone surrogates count as one each', `a${HIGH}${HIGH}${LOW}`, 2, [`a${HIGH}`, `${HIGH}${LOW}`]],
    ['shorter than the limit', 'abc', 10, ['abc']],
    ['exactly the limit', 'abc', 3, ['abc']],
    ['empty text', '', 5, []],
  ])('%s', (_name, text, max, expected) => {
    expect(splitByChars(text, max)).toEqual(expected);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('maxChars %s throws RangeError', (max) => {
    expect(() => splitByChars('abc', max)).toThrow(RangeError);
  });

  it('pieces of random mixed text rejoin exactly, hold at most maxChars and never split a pair', () => {
    const random = seededRandom(42);
    const alphabet = ['a', ' ', 'é', '你', '😀', '🎉', HIGH, LOW];
    for (let round = 0; round < 200; round++) {
      let text = '';
      const length = Math.floor(random() * 300);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      const max = 1 + Math.floor(random() * 20);
      const pieces = splitByChars(text, max);
      expect(pieces.join('')).toBe(text);
      for (const [i, piece] of pieces.entries()) {
        expect(countChars(piece)).toBeGreaterThan(0);
        expect(countChars(piece)).toBeLessThanOrEqual(max);
        // Every piece but the last is full.
        if (i < pieces.length - 1) expect(countChars(piece)).toBe(max);
        const next = pieces[i + 1];
        if (next !== undefined) {
          const endsHigh = /[\ud800-\udbff]$/.test(piece);
          const startsLow = /^[\udc00-\udfff]/.test(next);
          expect(endsHigh && startsLow).toBe(false);
        }
      }
    }
  });
});
