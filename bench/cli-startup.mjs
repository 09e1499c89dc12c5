// Wall time of the CLI, as a user runs it (the embedded
// default's `say` aims under 0.7 s with warm caches): `voxpipe --version`
// (parsing only), `say --ephemeral` (embedded server in memory), `say` on a
// data directory through its local service (src/cli/daemon.ts: the first
// run creates the store and starts the service; warm runs find it), the same
// with VOXPIPE_DAEMON=0 (the server in each process, the data directory's
// lock one command at a time), and six `say`
// started at once on a warm data directory, each way. Each single case runs
// --runs times (default 7) in a fresh process; prints median and min, writes
// bench/out/cli-startup.json. Run `npm run build` first.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argInt, machine, r, ROOT, writeResults } from './_common.mjs';

const RUNS = argInt('runs', 7);
const BIN = join(ROOT, 'bin', 'voxpipe.js');
const work = mkdtempSync(join(tmpdir(), 'voxpipe-cli-startup-'));
const out = join(work, 'hello.wav');
const clean = { ...process.env };
for (const name of ['VOXPIPE_BASE_URL', 'VOXPIPE_API_KEY', 'VOXPIPE_EPHEMERAL', 'VOXPIPE_DATA_DIR', 'VOXPIPE_DAEMON', 'VOXPIPE_DAEMON_IDLE', 'VOXPIPE_DATA_RETENTION']) delete clean[name];

function time(args, env) {
  const start = performance.now();
  const run = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`voxpipe ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

/** Six `say` at once: the wall time until the last ends, and how many said they waited for the directory or ran in memory. */
async function parallel(env, n = 6) {
  const start = performance.now();
  const runs = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [BIN, 'say', `Parallel command number ${i + 1}`, '--out', join(work, `p${i}.wav`)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.on('exit', (code) => resolve({ code, stderr, ms: performance.now() - start }));
      }),
    ),
  );
  const failed = runs.filter((x) => x.code !== 0);
  if (failed.length > 0) throw new Error(`parallel say failed: ${failed[0].stderr}`);
  return {
    runs: n,
    wallMs: r(performance.now() - start, 0),
    slowestMs: r(Math.max(...runs.map((x) => x.ms)), 0),
    waited: runs.filter((x) => /waiting for/.test(x.stderr)).length,
    ranInMemory: runs.filter((x) => /in-memory/.test(x.stderr)).length,
  };
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { runs: samples.length, medianMs: r(sorted[Math.floor(sorted.length / 2)], 0), minMs: r(sorted[0], 0), maxMs: r(sorted.at(-1), 0) };
}

const cases = {};
const dataDir = join(work, 'data');
const withData = { ...clean, VOXPIPE_DATA_DIR: dataDir, VOXPIPE_DAEMON_IDLE: '5m' };
const inProcess = { ...withData, VOXPIPE_DAEMON: '0' };
try {
  cases.version = summary(Array.from({ length: RUNS }, () => time(['--version'], clean)));
  const say = ['say', 'Hello from voxpipe', '--out', out];
  cases.sayEphemeral = summary(Array.from({ length: RUNS }, () => time([...say, '--ephemeral'], clean)));
  cases.sayDataDirFirst = summary([time(say, withData)]);
  cases.sayDataDir = summary(Array.from({ length: RUNS }, () => time(say, withData)));
  cases.parallel6DataDir = await parallel(withData);
  time(['data', 'stop'], withData);
  cases.sayDataDirInProcess = summary(Array.from({ length: RUNS }, () => time(say, inProcess)));
  cases.parallel6InProcess = await parallel(inProcess);
} finally {
  spawnSync(process.execPath, [BIN, 'data', 'stop'], { env: withData });
  rmSync(work, { recursive: true, force: true });
}

for (const [name, s] of Object.entries(cases)) {
  if ('medianMs' in s) console.log(`${name.padEnd(20)} median ${String(s.medianMs).padStart(5)} ms  min ${String(s.minMs).padStart(5)} ms  max ${String(s.maxMs).padStart(5)} ms  (${s.runs} runs)`);
  else console.log(`${name.padEnd(20)} ${s.runs} at once: all done in ${s.wallMs} ms; ${s.waited} waited for the directory, ${s.ranInMemory} ran in memory`);
}
writeResults('cli-startup', { machine: machine(), cases });
