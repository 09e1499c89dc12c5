/**
 * Memory of one `SequenceWindow` (one window per segment, kept for
 * every active stream): bytes of heap a window holds after its frames, by
 * what the numbering looked like. Measured as the heap used (after full GCs)
 * by many windows alive at once, divided by their number (a few tens of
 * bytes of noise; with 40 windows of 100,000 frames, a few KB). Not timed.
 *
 * Run `npm run build` first.
 * Usage: node bench/sequence-window.mjs [--before FILE [--before-label TEXT]]
 * (`--before` adds another build of src/realtime/sequence-window.ts, e.g.
 * one bundled from the previous commit with esbuild, measured in the same run.)
 * Prints a table and writes bench/out/sequence-window.json.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import v8 from 'node:v8';
import { SequenceWindow } from '../dist/realtime/sequence-window.js';
import { machine, writeResults } from './_common.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The numberings, as arrival orders of `frames` sequences. */
const CASES = [
  { name: 'in order, 1 frame', frames: 1, windows: 20_000, order: (n) => seq(n) },
  { name: 'in order, 10 frames', frames: 10, windows: 20_000, order: (n) => seq(n) },
  { name: 'in order, 1,000 frames', frames: 1000, windows: 2000, order: (n) => seq(n) },
  { name: 'in order, 100,000 frames', frames: 100_000, windows: 40, order: (n) => seq(n) },
  { name: 'step 10, 1,000 frames', frames: 1000, windows: 2000, order: (n) => seq(n).map((s) => 7 + 10 * (s - 1)) },
  { name: 'every 10th frame one place early, 1,000 frames', frames: 1000, windows: 2000, order: (n) => swapped(seq(n), 10) },
  { name: 'random step 1 to 4 (gaps), 1,000 frames', frames: 1000, windows: 2000, order: (n) => gappy(n) },
];

function seq(n) {
  return Array.from({ length: n }, (_, i) => i + 1);
}
function swapped(list, every) {
  for (let i = every - 1; i < list.length; i += every) [list[i - 1], list[i]] = [list[i], list[i - 1]];
  return list;
}
function gappy(n) {
  let state = 29;
  const out = [];
  for (let s = 1; out.length < n; s += 1 + ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) % 4)) out.push(s);
  return out;
}

function used() {
  for (let i = 0; i < 4; i++) gc();
  return v8.getHeapStatistics().used_heap_size;
}

function bytesPerWindow(Window, c) {
  const arrivals = c.order(c.frames);
  const item = {};
  // Warm up the same paths, dropped before measuring.
  for (let i = 0; i < 20; i++) {
    const w = new Window(16);
    for (const s of arrivals) w.push(s, item);
  }
  // Two rounds of windows kept alive: the second one's growth is the figure
  // (the first may still compile code or grow tables of the runtime).
  const rounds = [];
  let bytes = 0;
  for (let round = 0; round < 2; round++) {
    const keep = new Array(c.windows).fill(null);
    const before = used();
    for (let i = 0; i < c.windows; i++) {
      const w = new Window(16);
      for (const s of arrivals) w.push(s, item);
      keep[i] = w;
    }
    bytes = (used() - before) / c.windows;
    rounds.push(keep);
  }
  if (rounds.length !== 2) throw new Error('unreachable');
  return Math.round(bytes);
}

const builds = [{ label: 'this build', Window: SequenceWindow }];
const beforeFile = arg('before');
if (beforeFile) {
  const mod = await import(pathToFileURL(resolve(beforeFile)).href);
  builds.push({ label: arg('before-label') ?? beforeFile, Window: mod.SequenceWindow });
}

const rows = [];
for (const c of CASES) {
  const row = { case: c.name, frames: c.frames, windows: c.windows };
  for (const b of builds) row[`bytes (${b.label})`] = bytesPerWindow(b.Window, c);
  rows.push(row);
}
console.table(rows);
const file = writeResults('sequence-window', { bench: 'sequence-window', ...machine(), date: new Date().toISOString(), unit: 'bytes of heap per window', rows });
console.log(`wrote ${file}`);
