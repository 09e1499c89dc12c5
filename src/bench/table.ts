/**
 * The terminal table of a bench report: one row per case, times in ms.
 */
import type { BenchReport, CaseReport } from './report.js';

/** A time for a table cell: three significant figures or so, `-` when absent. */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return ms.toFixed(0);
}

function formatRatio(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return x >= 100 ? `${x.toFixed(0)}x` : `${x.toFixed(1)}x`;
}

const HEADER = ['case', 'ok/n', 'connect p50', 'TTFA p50', 'p90', 'p95', 'p99', 'IQR', 'min', 'RTF p50', 'underruns', 'retries', 'errors'] as const;

function row(c: CaseReport): string[] {
  const t = c.ttfaMs;
  const errors = Object.entries(c.errorCodes)
    .map(([code, n]) => `${code} x${n}`)
    .join(', ');
  return [
    c.id,
    `${c.samples - c.errors}/${c.samples}`,
    formatMs(c.connectMs?.p50),
    formatMs(t?.p50),
    formatMs(t?.p90),
    formatMs(t?.p95),
    formatMs(t?.p99),
    formatMs(t?.iqr),
    formatMs(t?.min),
    formatRatio(c.rtf?.p50),
    c.underruns.streamsWithUnderruns > 0 ? `${c.underruns.total} in ${c.underruns.streamsWithUnderruns}` : '0',
    String(c.retries),
    errors || '-',
  ];
}

/** Lay out rows: the first and last columns (names, free text) left-aligned, the figures right-aligned. */
export function layout(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const last = widths.length - 1;
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : i === last ? cell : cell.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The table, a line saying how it was measured, and the skipped combinations. */
export function formatTable(report: BenchReport): string {
  const rows: string[][] = [[...HEADER], ...report.cases.map(row)];
  const m = report.machine;
  const service = report.service.embedded ? `embedded reference server (${report.service.engine ?? 'unknown'} engine)` : (report.service.baseUrl ?? 'configured service');
  const lines = [
    `voxpipe bench: ${service}; ${report.method.runs} runs per case after ${report.method.warmup} warm-up, interleaved; times in ms`,
    layout(rows),
    `TTFA: text written -> first decodable audio. cold includes connecting; connect = open -> ready (realtime). RTF = audio duration / generation time.`,
    `machine: ${m.cpus} x ${m.cpuModel}, ${m.totalMemoryMiB} MiB, node ${m.node}; load average ${m.loadAverage.start} -> ${m.loadAverage.end}`,
  ];
  for (const c of report.cases) {
    const s = c.seams;
    if (!s) continue;
    lines.push(
      `seams ${c.id}: ${s.count}; pause p50 ${formatMs(s.gapMs?.p50)} (before ${formatMs(s.silenceBeforeMs?.p50)} + after ${formatMs(s.silenceAfterMs?.p50)}), max ${formatMs(s.gapMs?.max)}; jump p50 ${s.jump?.p50 ?? '-'}, max ${s.jump?.max ?? '-'}; clicks ${s.clicks}`,
    );
  }
  for (const s of report.skipped) lines.push(`skipped ${s.id}: ${s.reason}`);
  return `${lines.join('\n')}\n`;
}
