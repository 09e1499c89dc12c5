import { describe, expect, it } from 'vitest';
import { median, percentileSorted, round, summarize } from '../../src/bench/stats.js';

describe('bench stats', () => {
  it('interpolates percentiles between ranks (type 7)', () => {
    const s = [1, 2, 3, 4];
    expect(percentileSorted(s, 0)).toBe(1);
    expect(percentileSorted(s, 100)).toBe(4);
    expect(percentileSorted(s, 50)).toBe(2.5);
    expect(percentileSorted(s, 25)).toBeCloseTo(1.75, 12);
    expect(percentileSorted([7], 99)).toBe(7);
    expect(percentileSorted([], 50)).toBeNaN();
  });

  it('summarizes 1..100 exactly, whatever the input order', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    const d = summarize(values)!;
    expect(d).toMatchObject({ n: 100, min: 1, max: 100, mean: 50.5 });
    expect(d.p50).toBeCloseTo(50.5, 12);
    expect(d.p99).toBeCloseTo(99.01, 12);
    expect(d.p90).toBeCloseTo(90.1, 12);
    expect(d.iqr).toBeCloseTo(d.p75 - d.p25, 12);
    expect(d.iqr).toBeCloseTo(49.5, 12);
  });

  it('ignores non-finite values and has no summary for none', () => {
    expect(summarize([Number.NaN, Number.POSITIVE_INFINITY])).toBeUndefined();
    expect(summarize([3, Number.NaN, 1])).toMatchObject({ n: 2, min: 1, max: 3, p50: 2 });
    expect(median([5, 1, 3])).toBe(3);
  });

  it('rounds to the given digits', () => {
    expect(round(1.23456, 2)).toBe(1.23);
    expect(round(0.0004567)).toBe(0);
    expect(round(Number.NaN)).toBeNaN();
  });
});
