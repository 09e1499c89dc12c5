import { describe, expect, it } from 'vitest';
import { buildReport, type BenchReport } from '../../src/bench/report.js';
import { renderPlot } from '../../src/bench/plot.js';
import { formatMs, formatTable } from '../../src/bench/table.js';
import { renderBar, ProgressBar } from '../../src/bench/progress.js';
import type { CaseSamples } from '../../src/bench/runner.js';
import type { BenchCase } from '../../src/bench/cases.js';
import { Writable } from 'node:stream';

const base: Omit<BenchCase, 'id' | 'transport' | 'variant'> = { format: 'pcm', model: 'm', voiceId: 'v', text: 'short', concurrency: 1 };
const sample = (ttfaMs: number, extra: object = {}) => ({ ttfaMs, connectMs: 2, generationMs: ttfaMs * 10, audioMs: ttfaMs * 1000, bytes: 100, underruns: 0, underrunMs: 0, retries: 0, ...extra });

function report(): BenchReport {
  const results: CaseSamples[] = [
    { case: { id: 'realtime-reliable pcm short c1 warm', transport: 'realtime-reliable', variant: 'warm', ...base }, samples: [1, 2, 3, 4, 5].map((v) => sample(v)), wallMs: 50 },
    {
      case: { id: 'sync <pcm> & c1 cold', transport: 'sync', variant: 'cold', ...base },
      samples: [sample(20, { connectMs: undefined, underruns: 2, underrunMs: 30 }), { audioMs: 0, bytes: 0, underruns: 0, underrunMs: 0, retries: 1, error: 'quota_exceeded' }],
      wallMs: 80,
    },
    { case: { id: 'compat pcm short c1 warm', transport: 'compat', variant: 'warm', ...base }, samples: [{ audioMs: 0, bytes: 0, underruns: 0, underrunMs: 0, retries: 0, error: 'unauthorized' }], wallMs: 5 },
  ];
  return buildReport(results, {
    startedAt: new Date('2026-01-02T03:04:05Z'),
    startLoad: 1.5,
    runs: 5,
    warmup: 1,
    service: { embedded: true, engine: 'tone', capabilities: 'capabilities' },
    skipped: [{ id: 'compat opus m', reason: 'the compatible route has no opus' }],
  });
}

describe('bench report', () => {
  it('summarizes each case: distributions of successful streams, errors by code, retries, underruns, raw samples', () => {
    const r = report();
    const [a, b, c] = r.cases;
    expect(a!.ttfaMs).toMatchObject({ n: 5, p50: 3, min: 1, max: 5, iqr: 2 });
    expect(a!.rtf!.p50).toBe(100);
    expect(a!.raw.ttfaMs).toEqual([1, 2, 3, 4, 5]);
    expect(b).toMatchObject({ samples: 2, errors: 1, errorCodes: { quota_exceeded: 1 }, retries: 1, connectMs: null });
    expect(b!.underruns).toEqual({ total: 2, streamsWithUnderruns: 1, silenceMs: 30 });
    expect(c).toMatchObject({ samples: 1, errors: 1, ttfaMs: null });
    expect(r).toMatchObject({ tool: 'voxpipe bench', schemaVersion: 1, method: { runs: 5, warmup: 1, interleaved: true } });
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
  });

  it('prints a table with one row per case, the errors and the skipped combinations', () => {
    const text = formatTable(report());
    const lines = text.trim().split('\n');
    expect(lines[1]).toMatch(/^case\s+ok\/n\s+connect p50\s+TTFA p50/);
    expect(lines[2]).toMatch(/^realtime-reliable pcm short c1 warm\s+5\/5\s+2\.00\s+3\.00\s/);
    expect(lines[3]).toMatch(/1\/2 .*2 in 1\s+1\s+quota_exceeded x1$/);
    expect(lines[4]).toMatch(/0\/1 .*unauthorized x1$/);
    expect(text).toContain('skipped compat opus m: the compatible route has no opus');
    expect(formatMs(0.1234)).toBe('0.12');
    expect(formatMs(12.34)).toBe('12.3');
    expect(formatMs(1234.5)).toBe('1235');
    expect(formatMs(undefined)).toBe('-');
  });

  it('draws an SVG with a row per case, a dot per successful stream and escaped labels', () => {
    const svg = renderPlot(report());
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<circle /g)).toHaveLength(6);
    expect(svg).toContain('sync &#60;pcm&#62; &#38; c1 cold');
    expect(svg).not.toContain('<pcm>');
    expect(svg).toContain('no audio (unauthorized)');
    // 1..20 ms spans 20x: linear axis; the same report draws the same picture.
    expect(svg).toContain('linear axis');
    expect(renderPlot(report())).toBe(svg);
  });

  it('a long subtitle (a long CPU name) is drawn to fit inside the picture; a short one as it is', () => {
    const long = report();
    long.machine = { ...long.machine, cpuModel: 'Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz with a very long marketing name indeed' };
    const subtitle = (svg: string) => svg.split('\n').find((l) => l.includes('runs per case'))!;
    const width = Number(/width="(\d+)"/.exec(renderPlot(long))![1]);
    const fitted = subtitle(renderPlot(long));
    expect(fitted).toMatch(/textLength="(\d+)" lengthAdjust="spacingAndGlyphs"/);
    const x = Number(/ x="(\d+)"/.exec(fitted)![1]);
    expect(x + Number(/textLength="(\d+)"/.exec(fitted)![1])).toBeLessThanOrEqual(width);
    const short = report();
    short.machine = { ...short.machine, cpuModel: 'cpu', node: 'v20' };
    short.service = { ...short.service, engine: 'tone' };
    expect(subtitle(renderPlot(short))).not.toContain('textLength');
  });
});

describe('progress bar', () => {
  it('renders share, counts and label', () => {
    expect(renderBar(5, 20, 8, 'x')).toBe('[##------]  25%  5/20  x');
    expect(renderBar(20, 20, 4, 'done')).toBe('[####] 100%  20/20  done');
  });

  it('draws nothing unless enabled, and throttles redraws except the last', () => {
    const out: string[] = [];
    const sink = new Writable({ write(c, _e, cb) { out.push(String(c)); cb(); } });
    new ProgressBar(sink).update(1, 2, 'a');
    expect(out).toEqual([]);
    let now = 0;
    const bar = new ProgressBar(sink, { enabled: true, width: 4, minIntervalMs: 100, now: () => now });
    bar.update(1, 3, 'a');
    now = 50;
    bar.update(2, 3, 'b'); // throttled
    bar.update(3, 3, 'c'); // last step: always drawn
    bar.clear();
    expect(out).toHaveLength(3);
    expect(out[0]).toBe('\r[#---]  33%  1/3  a');
    expect(out[1]).toMatch(/^\r\[####\] 100% {2}3\/3 {2}c/);
    expect(out[2]).toMatch(/^\r +\r$/);
  });
});
