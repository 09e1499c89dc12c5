/**
 * The picture of a bench report: the time-to-first-audio distribution of
 * every case as a horizontal box plot over a strip of every run (jittered
 * dots), on a shared axis, logarithmic when the cases span more than 20x.
 * Plain SVG, no dependencies; the jitter is seeded, so the same report
 * draws the same picture.
 */
import { percentileSorted, sortedFinite } from './stats.js';
import { formatMs } from './table.js';
import type { BenchReport, CaseReport } from './report.js';

const WIDTH = 1000;
const ROW_HEIGHT = 36;
const TOP = 78;
const BOTTOM = 56;
const RIGHT = 190;
const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
/** Log axis once the largest value is this many times the smallest. */
const LOG_SPAN = 20;

const COLORS: Record<string, string> = {
  'realtime-reliable': '#1f6fb4',
  'realtime-simple': '#17a2b8',
  sync: '#e07b00',
  compat: '#2e9e44',
  async: '#c0392b',
};

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A small seeded PRNG (mulberry32): reproducible jitter. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Scale {
  log: boolean;
  lo: number;
  hi: number;
  x(v: number): number;
  ticks: number[];
}

/** Tick values: 1-2-5 steps per decade (log) or a "nice" step (linear). */
function niceTicks(lo: number, hi: number, log: boolean): number[] {
  const ticks: number[] = [];
  if (log) {
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of [1, 2, 5]) {
        const v = m * 10 ** e;
        if (v >= lo && v <= hi) ticks.push(v);
      }
    }
    return ticks;
  }
  const raw = (hi - lo) / 8;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function makeScale(values: number[], left: number, right: number): Scale {
  const positive = values.filter((v) => v > 0);
  const min = positive.length ? Math.min(...positive) : 1;
  const max = positive.length ? Math.max(...positive) : 10;
  const log = max / min > LOG_SPAN;
  const lo = log ? min / 1.25 : 0;
  const hi = log ? max * 1.25 : max * 1.08 || 1;
  const x = log
    ? (v: number) => left + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (right - left)
    : (v: number) => left + ((v - lo) / (hi - lo)) * (right - left);
  return { log, lo, hi, x, ticks: niceTicks(lo, hi, log) };
}

function tickLabel(v: number): string {
  if (v >= 1000) return `${Number((v / 1000).toPrecision(3))} s`;
  return `${Number(v.toPrecision(3))}`;
}

function drawRow(c: CaseReport, index: number, y: number, scale: Scale, labelRight: number): string[] {
  const parts: string[] = [];
  const mid = y + ROW_HEIGHT / 2;
  const color = COLORS[c.transport] ?? '#555';
  if (index % 2 === 1) parts.push(`<rect x="0" y="${y}" width="${WIDTH}" height="${ROW_HEIGHT}" fill="#f4f6f8"/>`);
  parts.push(`<text x="${labelRight}" y="${mid + 4}" text-anchor="end" font-size="12" fill="#222">${escapeXml(c.id)}</text>`);
  const values = sortedFinite(c.raw.ttfaMs);
  if (values.length === 0) {
    const why = Object.keys(c.errorCodes).join(', ') || 'no samples';
    parts.push(`<text x="${scale.x(scale.lo) + 6}" y="${mid + 4}" font-size="12" fill="#c0392b">no audio (${escapeXml(why)})</text>`);
    return parts;
  }
  const q = (p: number) => percentileSorted(values, p);
  const rnd = seeded(index * 7919 + values.length);
  for (const v of c.raw.ttfaMs) {
    const jitter = (rnd() - 0.5) * (ROW_HEIGHT - 14);
    parts.push(`<circle cx="${scale.x(v).toFixed(1)}" cy="${(mid + jitter).toFixed(1)}" r="2.2" fill="${color}" fill-opacity="0.35"/>`);
  }
  const [p5, p25, p50, p75, p95, p99] = [q(5), q(25), q(50), q(75), q(95), q(99)];
  const boxH = 14;
  const cold = c.variant === 'cold';
  parts.push(`<line x1="${scale.x(p5).toFixed(1)}" x2="${scale.x(p25).toFixed(1)}" y1="${mid}" y2="${mid}" stroke="#333" stroke-width="1.2"/>`);
  parts.push(`<line x1="${scale.x(p75).toFixed(1)}" x2="${scale.x(p95).toFixed(1)}" y1="${mid}" y2="${mid}" stroke="#333" stroke-width="1.2"/>`);
  for (const w of [p5, p95]) parts.push(`<line x1="${scale.x(w).toFixed(1)}" x2="${scale.x(w).toFixed(1)}" y1="${mid - 5}" y2="${mid + 5}" stroke="#333" stroke-width="1.2"/>`);
  const bx = scale.x(p25);
  const bw = Math.max(1, scale.x(p75) - bx);
  parts.push(
    `<rect x="${bx.toFixed(1)}" y="${mid - boxH / 2}" width="${bw.toFixed(1)}" height="${boxH}" fill="${color}" fill-opacity="${cold ? 0.12 : 0.3}" stroke="${color}" stroke-width="1.5"${cold ? ' stroke-dasharray="4 2"' : ''}/>`,
  );
  parts.push(`<line x1="${scale.x(p50).toFixed(1)}" x2="${scale.x(p50).toFixed(1)}" y1="${mid - boxH / 2 - 2}" y2="${mid + boxH / 2 + 2}" stroke="#111" stroke-width="2.5"/>`);
  const dx = scale.x(p99);
  parts.push(`<path d="M ${dx.toFixed(1)} ${mid - 5} L ${(dx + 4).toFixed(1)} ${mid} L ${dx.toFixed(1)} ${mid + 5} L ${(dx - 4).toFixed(1)} ${mid} Z" fill="#111"/>`);
  const err = c.errors > 0 ? `  ${c.errors} err` : '';
  parts.push(
    `<text x="${WIDTH - RIGHT + 12}" y="${mid + 4}" font-size="12" fill="#222">p50 <tspan font-weight="600">${formatMs(p50)}</tspan>  p99 ${formatMs(p99)}${escapeXml(err)}</text>`,
  );
  return parts;
}

/** Average glyph width of the sans-serif font, in ems: enough to tell when a line would run past the edge. */
const GLYPH_EMS = 0.56;

/**
 * A line of text that stays inside the picture: one that would run past the
 * right edge is drawn narrower (textLength), so a long CPU name or URL fits.
 */
function fittedText(x: number, y: number, size: number, fill: string, text: string): string {
  const room = WIDTH - x - 16;
  const fit = text.length * size * GLYPH_EMS > room ? ` textLength="${room}" lengthAdjust="spacingAndGlyphs"` : '';
  return `<text x="${x}" y="${y}" font-size="${size}" fill="${fill}"${fit}>${escapeXml(text)}</text>`;
}

/** The SVG document for `report`. */
export function renderPlot(report: BenchReport): string {
  const cases = report.cases;
  const longest = cases.reduce((n, c) => Math.max(n, c.id.length), 10);
  const left = Math.min(420, Math.max(170, longest * 6.6 + 24));
  const right = WIDTH - RIGHT;
  const height = TOP + Math.max(1, cases.length) * ROW_HEIGHT + BOTTOM;
  const scale = makeScale(cases.flatMap((c) => c.raw.ttfaMs), left, right);
  const plotBottom = TOP + cases.length * ROW_HEIGHT;
  const service = report.service.embedded ? `embedded reference server, ${report.service.engine ?? ''} engine` : (report.service.baseUrl ?? 'configured service');
  const m = report.machine;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="26" font-size="17" font-weight="600" fill="#111">Time to first audio (ms) — voxpipe bench</text>`,
    fittedText(16, 46, 12, '#555', `${service}; ${report.method.runs} runs per case after ${report.method.warmup} warm-up, interleaved; ${m.cpus} x ${m.cpuModel}, node ${m.node}; ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC`),
    `<text x="16" y="64" font-size="12" fill="#555">box p25–p75 (dashed: cold), bar p50, whiskers p5–p95, ◆ p99, dots: every stream; ${scale.log ? 'log' : 'linear'} axis</text>`,
  ];
  const rows: string[] = [];
  cases.forEach((c, i) => rows.push(...drawRow(c, i, TOP + i * ROW_HEIGHT, scale, left - 10)));
  // Grid under the rows' marks but over their stripes: stripes first, then grid, then marks.
  const stripes = rows.filter((r) => r.startsWith('<rect x="0"'));
  const marks = rows.filter((r) => !r.startsWith('<rect x="0"'));
  out.push(...stripes);
  for (const t of scale.ticks) {
    const x = scale.x(t).toFixed(1);
    out.push(`<line x1="${x}" x2="${x}" y1="${TOP}" y2="${plotBottom}" stroke="#d5d9de" stroke-width="1"/>`);
    out.push(`<text x="${x}" y="${plotBottom + 18}" text-anchor="middle" font-size="11" fill="#444">${tickLabel(t)}</text>`);
  }
  out.push(`<line x1="${left}" x2="${right}" y1="${plotBottom}" y2="${plotBottom}" stroke="#888" stroke-width="1"/>`);
  out.push(`<text x="${(left + right) / 2}" y="${plotBottom + 40}" text-anchor="middle" font-size="12" fill="#333">time to first decodable audio, ms${scale.log ? ' (log scale)' : ''}</text>`);
  out.push(...marks);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
