/**
 * The demo page's own script: what it prints of a barge-in's unspoken text
 * ends at a word, and its result's ttfaMs is whole milliseconds. The page's
 * function is taken from the page the server sends.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_PAGE } from '../../src/server/demo/page.js';

const source = DEMO_PAGE.slice(DEMO_PAGE.indexOf('function atWord'), DEMO_PAGE.indexOf('/** Fake LLM'));
const atWord = new Function(`${source}; return atWord;`)() as (text: string, max: number) => string;

describe('demo page', () => {
  it('cuts the unspoken text at a word, not mid-word', () => {
    expect(atWord('The quick brown fox jumps over the lazy dog and keeps on running', 30)).toBe('The quick brown fox jumps over\u2026');
    expect(atWord('short', 30)).toBe('short');
    expect(atWord('Averyveryverylongwordwithnospaceatall', 10)).toBe('Averyveryv\u2026');
  });

  it('rounds ttfaMs in its result', () => {
    expect(DEMO_PAGE).toContain('ttfaMs: speech.ttfaMs === undefined ? undefined : Math.round(speech.ttfaMs)');
  });
});
