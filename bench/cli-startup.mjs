// Wall time of the CLI, as a user runs it (issue 11: the embedded default's
// `say` aims under 0.7 s with warm caches): `voxpipe --version` (parsing
// only), `say --ephemeral` (embedded server in memory) and `say` on a data
// directory (PGlite), first run and warm. Each case runs --runs times
// (default 7) in a fresh process; prints median and min, writes
// bench/results/cli-startup.json. Run `npm run build` first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argInt, machine, r, ROOT, writeResults } from './_common.mjs';

const RUNS = argInt('runs', 7);
const BIN = join(ROOT, 'bin', 'voxpipe.js');
const work = mkdtempSync(join(tmpdir(), 'voxpipe-cli-startup-'));
const out = join(work, 'hello.wav');
const clean = { ...process.env };
for (const name of ['VOXPIPE_BASE_URL', 'VOXPIPE_API_KEY', 'VOXPIPE_EPHEMERAL', 'VOXPIPE_DATA_DIR']) delete clean[name];

function time(args, env) {
  const start = performance.now();
  const run = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`voxpipe ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { runs: samples.length, medianMs: r(sorted[Math.floor(sorted.length / 2)], 0), minMs: r(sorted[0], 0), maxMs: r(sorted.at(-1), 0) };
}

const cases = {};
try {
  cases.version = summary(Array.from({ length: RUNS }, () => time(['--version'], clean)));
  const say = ['say', 'Hello from voxpipe', '--out', out];
  cases.sayEphemeral = summary(Array.from({ length: RUNS }, () => time([...say, '--ephemeral'], clean)));
  const dataDir = join(work, 'data');
  const withData = { ...clean, VOXPIPE_DATA_DIR: dataDir };
  cases.sayDataDirFirst = summary([time(say, withData)]);
  cases.sayDataDir = summary(Array.from({ length: RUNS }, () => time(say, withData)));
} finally {
  rmSync(work, { recursive: true, force: true });
}

for (const [name, s] of Object.entries(cases)) console.log(`${name.padEnd(16)} median ${String(s.medianMs).padStart(5)} ms  min ${String(s.minMs).padStart(5)} ms  max ${String(s.maxMs).padStart(5)} ms  (${s.runs} runs)`);
writeResults('cli-startup', { machine: machine(), cases });
