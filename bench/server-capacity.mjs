// Capacity of the reference server with the `tone` engine: reliable streams
// per second and seconds of audio generated per second at 1, 10, 100 and
// 1,000 concurrent streams, with the time to first audio under that load and
// the server's CPU time per stream. The baseline is the same server at
// concurrency 1, in the same run.
//
// The server runs in a child process (`voxpipe serve`); the load comes from
// the minimal raw client (bench/_raw-client.mjs) in this process, so the
// client costs as little as possible. Each stream: connect, start, one short
// text (its segments as SpeechStream would cut them), all its audio, stop.
// Loopback only; stops by itself. Options: --levels 1,10,100,1000
// --streams-per-level N (default max(200, 3 x level)); --stores
// memory,pglite,postgres,postgres:2 (default memory): the same levels
// against the server on each store, one after the other in the same run
// (postgres needs VOXPIPE_BENCH_DATABASE_URL or VOXPIPE_TEST_DATABASE_URL; a
// fresh schema each); `postgres:N` is `serve --workers N` on it (N processes,
// one port; the CPU time counted is all of them).
// Run `npm run build` first. Writes bench/out/server-capacity.json.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { summarize } from '../dist/bench/stats.js';
import { BENCH_TEXTS } from '../dist/bench/texts.js';
import { TokenSegmenter } from '../dist/stream/token-segmenter.js';
import { argInt, machine, r, writeResults, startToneBench } from './_common.mjs';
import { RawReliableSession } from './_raw-client.mjs';

const levelsArg = process.argv.indexOf('--levels');
const LEVELS = levelsArg >= 0 ? process.argv[levelsArg + 1].split(',').map(Number) : [1, 10, 100, 1000];
const PER_LEVEL = argInt('streams-per-level', 0);
const storesArg = process.argv.indexOf('--stores');
const STORES = storesArg >= 0 ? process.argv[storesArg + 1].split(',') : ['memory'];
const DATABASE_URL = process.env.VOXPIPE_BENCH_DATABASE_URL ?? process.env.VOXPIPE_TEST_DATABASE_URL;
const TEXT = BENCH_TEXTS.short;
const BYTES_PER_AUDIO_S = 24_000 * 2; // tone: 24 kHz mono s16le
const CLOCK_TICKS_PER_S = 100; // Linux USER_HZ

function segmentsOf(text) {
  const out = [];
  const seg = new TokenSegmenter({}, (s) => out.push(s));
  seg.push(text);
  seg.end();
  return out;
}
const SEGMENTS = segmentsOf(TEXT);

/** CPU time used so far by process `pid` and its children (cluster workers), ms (Linux /proc; undefined elsewhere). */
function cpuMsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let ms = ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1000;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean)) ms += cpuMsOf(Number(child)) ?? 0;
    return ms;
  } catch {
    return undefined;
  }
}

let server;
let config;
let request;

/** `voxpipe serve` arguments for a store, and how to clean up after it. */
async function storeArgs(store) {
  if (store === 'memory') return { args: [], cleanup: async () => undefined };
  if (store === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'voxpipe-capacity-'));
    return { args: ['--data', dir], cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const postgres = /^postgres(?::(\d+))?$/.exec(store);
  if (postgres) {
    if (!DATABASE_URL) throw new Error('--stores postgres needs VOXPIPE_BENCH_DATABASE_URL (or VOXPIPE_TEST_DATABASE_URL)');
    const schema = `voxpipe_bench_${randomBytes(4).toString('hex')}`;
    const workers = postgres[1] ? ['--workers', postgres[1]] : [];
    return {
      args: ['--database', DATABASE_URL, '--database-schema', schema, ...workers],
      cleanup: async () => {
        const { default: pg } = await import('pg');
        const admin = new pg.Client({ connectionString: DATABASE_URL });
        await admin.connect();
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      },
    };
  }
  throw new Error(`unknown store ${store} (memory, pglite, postgres, postgres:N for N workers)`);
}

async function oneStream() {
  const s = new RawReliableSession({ wsUrl: config.wsUrl, apiKey: config.apiKey, request });
  const t0 = performance.now();
  let stage = 'connect';
  try {
    await s.open();
    const connectMs = performance.now() - t0;
    let first;
    stage = 'speak';
    const t1 = performance.now();
    const bytes = await s.speak(SEGMENTS, () => (first ??= performance.now()));
    return { connectMs, ttfaMs: first - t1, bytes };
  } catch (err) {
    s.close();
    return { error: `${stage}: ${String(err.message ?? err).split(':')[0]}` };
  }
}

async function level(concurrency) {
  const total = PER_LEVEL > 0 ? PER_LEVEL : Math.max(200, 3 * concurrency);
  let started = 0;
  const samples = [];
  const cpu0 = cpuMsOf(server.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        samples.push(await oneStream());
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = cpuMsOf(server.pid);
  const ok = samples.filter((s) => !s.error);
  const errors = {};
  for (const s of samples) if (s.error) errors[s.error] = (errors[s.error] ?? 0) + 1;
  const bytes = ok.reduce((n, s) => n + s.bytes, 0);
  const d = (xs) => {
    const x = summarize(xs);
    return x && { p50: r(x.p50, 2), p90: r(x.p90, 2), p99: r(x.p99, 2), max: r(x.max, 2) };
  };
  return {
    concurrency,
    streams: total,
    completed: ok.length,
    errors,
    wallMs: r(wallMs, 0),
    streamsPerSecond: r(ok.length / (wallMs / 1000), 1),
    audioSecondsPerSecond: r(bytes / BYTES_PER_AUDIO_S / (wallMs / 1000), 1),
    ttfaMs: d(ok.map((s) => s.ttfaMs)),
    connectMs: d(ok.map((s) => s.connectMs)),
    serverCpu: cpu0 === undefined || cpu1 === undefined ? null : { msPerStream: r((cpu1 - cpu0) / ok.length, 2), utilisation: r((cpu1 - cpu0) / wallMs, 2) },
  };
}

const results = {
  bench: 'server-capacity',
  date: new Date().toISOString(),
  machine: machine(),
  server: 'voxpipe serve --engine tone in a child process (loopback), on each store in turn (postgres:N: --workers N)',
  client: 'minimal raw ws + @msgpack/msgpack client in one process (bench/_raw-client.mjs), reliable mode, pcm',
  text: { chars: TEXT.length, segments: SEGMENTS.length, audioSeconds: null },
  baseline: 'the in-memory server at concurrency 1, same run (each store also against its own concurrency 1)',
  stores: [],
};
for (const store of STORES) {
  const { args, cleanup } = await storeArgs(store);
  ({ server, config, request } = await startToneBench({ serveArgs: args }));
  const run = { store, levels: [] };
  await level(Math.min(10, LEVELS[0])); // warm-up, discarded
  for (const c of LEVELS) run.levels.push(await level(c));
  await server.close();
  await cleanup();
  const own = run.levels[0];
  for (const l of run.levels) l.throughputVsConcurrency1 = r(l.streamsPerSecond / own.streamsPerSecond, 2);
  results.stores.push(run);
}
const memoryRun = results.stores.find((s) => s.store === 'memory') ?? results.stores[0];
for (const run of results.stores) {
  for (const [i, l] of run.levels.entries()) l.vsMemory = r(l.streamsPerSecond / memoryRun.levels[i].streamsPerSecond, 2);
}
const anyOk = results.stores.flatMap((s) => s.levels).find((l) => l.completed > 0);
if (anyOk) results.text.audioSeconds = r(anyOk.audioSecondsPerSecond / anyOk.streamsPerSecond, 2);
const file = writeResults('server-capacity', results);

console.log(`reference server capacity (tone; raw client load from one process), text of ${TEXT.length} characters (${results.text.audioSeconds} s of audio)`);
console.log('  store       concurrency  streams/s  audio s/s  vs c=1  vs memory  TTFA p50   p99  connect p99  server CPU ms/stream  util  errors');
for (const run of results.stores) {
  for (const l of run.levels) {
    console.log(
      `  ${run.store.padEnd(10)}  ${String(l.concurrency).padStart(11)}  ${String(l.streamsPerSecond).padStart(9)}  ${String(l.audioSecondsPerSecond).padStart(9)}  ${String(l.throughputVsConcurrency1).padStart(6)}  ${String(l.vsMemory).padStart(9)}  ${String(l.ttfaMs?.p50 ?? '-').padStart(8)}  ${String(l.ttfaMs?.p99 ?? '-').padStart(5)}  ${String(l.connectMs?.p99 ?? '-').padStart(11)}  ${String(l.serverCpu?.msPerStream ?? '-').padStart(20)}  ${String(l.serverCpu?.utilisation ?? '-').padStart(4)}  ${JSON.stringify(l.errors)}`,
    );
  }
}
console.log(`wrote ${file}`);
