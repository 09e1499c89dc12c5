/**
 * The README renders as written and its bundle size is the build's: code
 * fences are balanced and close before every heading (a stray one turns the
 * rest of the page into a code block), no prose or table line runs on for
 * hundreds of characters, and the browser bundle's size it quotes is what
 * `scripts/build-browser.mjs` prints.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
/** A table row is one line; past this it belongs in a paragraph. */
const MAX_LINE = 600;
/** The quoted size may trail the build by this much (KiB) before it is wrong. */
const SIZE_SLACK_KIB = 0.5;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Each line with whether it is inside a fenced code block. */
function fenced(lines: string[]): { line: string; number: number; inCode: boolean; fence: boolean }[] {
  let inCode = false;
  return lines.map((line, i) => {
    const fence = /^\s*```/.test(line);
    const row = { line, number: i + 1, inCode: inCode || fence, fence };
    if (fence) inCode = !inCode;
    return row;
  });
}

/** `voxpipe.js: 93.3 KiB minified, 30.0 KiB gzipped`: the figures, in KiB. */
function sizes(text: string): { minified: number; gzipped: number } | undefined {
  const match = /voxpipe\.js: ([\d.]+) KiB minified, ([\d.]+) KiB gzipped/.exec(text);
  return match ? { minified: Number(match[1]), gzipped: Number(match[2]) } : undefined;
}

describe('README', () => {
  it('code fences are balanced and every heading is outside a code block', () => {
    const rows = fenced(README);
    expect(rows.filter((r) => r.fence).length % 2).toBe(0);
    const swallowed = rows.filter((r) => r.inCode && /^#{1,6} /.test(r.line)).map((r) => `${r.number}: ${r.line}`);
    expect(swallowed).toEqual([]);
    expect(rows.some((r) => /^## /.test(r.line))).toBe(true);
  });

  it(`no line outside code runs past ${MAX_LINE} characters`, () => {
    const long = fenced(README).filter((r) => !r.inCode && r.line.length > MAX_LINE).map((r) => `${r.number}: ${r.line.length} characters`);
    expect(long).toEqual([]);
  });

  it('the browser bundle size it quotes is what the build prints', () => {
    const quoted = sizes(README.join('\n'));
    expect(quoted).toBeDefined();
    const outdir = mkdtempSync(join(tmpdir(), 'voxpipe-readme-'));
    dirs.push(outdir);
    const built = sizes(execFileSync(process.execPath, [join(ROOT, 'scripts/build-browser.mjs'), '--outdir', outdir], { cwd: ROOT, encoding: 'utf8' }));
    expect(built).toBeDefined();
    expect(Math.abs(quoted!.minified - built!.minified)).toBeLessThanOrEqual(SIZE_SLACK_KIB);
    expect(Math.abs(quoted!.gzipped - built!.gzipped)).toBeLessThanOrEqual(SIZE_SLACK_KIB);
  });
});
