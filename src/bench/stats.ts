/**
 * Order statistics of a sample, computed exactly from the sorted values
 * (benchmarks here keep every sample: a few thousand at most, so no
 * histogram bucketing error). Percentiles interpolate linearly between the
 * two nearest ranks (R's type 7, NumPy's default), so p50 of an even-sized
 * sample is the mean of the middle two.
 */

/** The summary reported for every measured quantity. */
export interface Distribution {
  /** Number of values. */
  n: number;
  min: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  /** Interquartile range, p75 - p25: the spread of the middle half. */
  iqr: number;
}

/** Percentile `p` (0 to 100) of values already sorted ascending; NaN when empty. */
export function percentileSorted(sorted: readonly number[], p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  if (n === 1) return sorted[0]!;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(n - 1, lo + 1);
  const frac = rank - lo;
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * frac;
}

/** Ascending copy of the finite values. */
export function sortedFinite(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

/** Summary of the finite values; `undefined` when there are none. */
export function summarize(values: readonly number[]): Distribution | undefined {
  const s = sortedFinite(values);
  if (s.length === 0) return undefined;
  const q = (p: number) => percentileSorted(s, p);
  const p25 = q(25);
  const p75 = q(75);
  return {
    n: s.length,
    min: s[0]!,
    p25,
    p50: q(50),
    p75,
    p90: q(90),
    p95: q(95),
    p99: q(99),
    max: s[s.length - 1]!,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    iqr: p75 - p25,
  };
}

/** Median of the finite values; NaN when there are none. */
export function median(values: readonly number[]): number {
  return percentileSorted(sortedFinite(values), 50);
}

/** Round to `digits` decimals (for JSON and tables: sub-microsecond digits are noise). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The distribution with every figure rounded. */
export function roundDistribution(d: Distribution, digits = 3): Distribution {
  return {
    n: d.n,
    min: round(d.min, digits),
    p25: round(d.p25, digits),
    p50: round(d.p50, digits),
    p75: round(d.p75, digits),
    p90: round(d.p90, digits),
    p95: round(d.p95, digits),
    p99: round(d.p99, digits),
    max: round(d.max, digits),
    mean: round(d.mean, digits),
    iqr: round(d.iqr, digits),
  };
}
