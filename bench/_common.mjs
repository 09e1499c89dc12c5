// Shared by the bench scripts (not a bench itself: run-all skips `_` files):
// a reference server in a child process, machine facts, and the results file.
//
// Results go to bench/out/ (ignored by git), so running a bench leaves the
// checkout as it was; `--record` (which run-all passes on) writes them to
// bench/results/ instead, the figures kept with the code.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(HERE, '..');
export const BENCH_KEY = 'sk-bench-local';
/** Credits and quota no bench run can exhaust. */
const PLENTY = 1e12;

/**
 * Start `voxpipe serve --port 0` in a child process (its own event loop and
 * heap, as a remote service would be) and wait for its `listening` line.
 * @returns {Promise<{ config: import('../dist/config.js').ServiceConfig, pid: number, close(): Promise<void> }>}
 */
export async function startChildServer({ engine = 'tone', nodeArgs = [], serveArgs = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-bench-'));
  const accounts = join(dir, 'accounts.json');
  writeFileSync(accounts, JSON.stringify([{ apiKey: BENCH_KEY, userId: 'bench', credits: PLENTY, apiQuota: PLENTY }]));
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin/voxpipe.js'), 'serve', '--port', '0', '--engine', engine, '--accounts', accounts, ...serveArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, VOXPIPE_API_KEY: BENCH_KEY },
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const line = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`voxpipe serve exited with ${code}: ${stderr.trim()}`)));
  });
  const listening = JSON.parse(line);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    config: { apiKey: BENCH_KEY, baseUrl: listening.baseUrl, rootUrl: listening.rootUrl, wsUrl: listening.wsUrl, rtHttpUrl: listening.rtHttpUrl },
    pid: child.pid,
    async close() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the figures were measured on. */
export function machine() {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    totalMemoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/** Whether this run records its figures (`--record`) in bench/results/. */
export const RECORD = process.argv.includes('--record');

/** Where a result file of this run goes: bench/results/ with `--record`, else bench/out/ (the folder is made). */
export function resultPath(fileName) {
  const file = join(HERE, RECORD ? 'results' : 'out', fileName);
  mkdirSync(dirname(file), { recursive: true });
  return file;
}

/** Write `<name>.json` where this run's results go (`resultPath`). */
export function writeResults(name, results) {
  const file = resultPath(`${name}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

/** Round to `digits` decimals. */
export function r(value, digits = 3) {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Integer from `--name N` on the command line, else `fallback`. */
export function argInt(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} takes a whole number`);
  return n;
}

/**
 * A `voxpipe serve --engine tone` child and what every realtime bench asks of
 * it: the service config, the default model, and a pcm `start.request` for
 * the model's first voice.
 */
export async function startToneBench({ serveArgs = [] } = {}) {
  const { defaultModel, fetchCapabilities } = await import('../dist/bench/capabilities.js');
  const server = await startChildServer({ engine: 'tone', serveArgs });
  const { config } = server;
  const model = defaultModel(await fetchCapabilities(config));
  const request = { voice_id: model.voices[0].id, model: model.id, format: 'pcm' };
  return { server, config, model, request };
}
