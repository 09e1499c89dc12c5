// 1,000 concurrent reliable streams (SpeechStream over ReliableSession) from
// this one client process against one reference server (tone engine), and
// the same 1,000 with the minimal raw ws + MessagePack client as baseline:
// do all complete, with what errors, and how much client memory each active
// stream holds (target: < 64 KiB).
//
// The server runs in a child process (`voxpipe serve`), so every byte
// measured here belongs to the client. Memory = heapUsed + external (Node's
// `external` already includes `arrayBuffers`, i.e. every Buffer), after a
// forced GC, minus the same figure before the first stream opened, divided
// by the number of streams; measured at two points with all streams open:
//  - ready: every stream connected, authenticated and `ready` (request started);
//  - active: every stream has spoken its first segment (its audio delivered
//    to a null sink) and waits for more text, as a voice agent between two
//    sentences. Then the rest of the text is spoken and every stream ends.
// Loopback only; stops by itself. Options: --streams N (1000) --open-parallel N (200),
// --progress-ms / --finish-ms / --status-ms N (the sessions' recovery budgets; default theirs).
// Run `npm run build` first. Writes bench/out/concurrency.json (concurrency-budgets.json with budgets given).
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ReliableSession } from '../dist/realtime/reliable/session.js';
import { SpeechStream } from '../dist/stream/speech-stream.js';
import { TokenSegmenter } from '../dist/stream/token-segmenter.js';
import { argInt, machine, r, writeResults, startToneBench } from './_common.mjs';
import { RawReliableSession } from './_raw-client.mjs';

if (typeof globalThis.gc !== 'function') {
  // Memory is measured after a forced GC: run again with --expose-gc.
  const res = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(res.status ?? 1);
}

const STREAMS = argInt('streams', 1000);
const OPEN_PARALLEL = argInt('open-parallel', 200);
/**
 * Recovery budgets of the library's sessions (ms; 0: the default). The
 * defaults are chosen for live speech (a 5 s silence is a dead call); a
 * load test that saturates the server on purpose may give its streams the
 * budgets its queue needs: --progress-ms, --finish-ms, --status-ms.
 */
const BUDGETS = Object.fromEntries(
  [
    ['progressTimeoutMs', argInt('progress-ms', 0)],
    ['finishTimeoutMs', argInt('finish-ms', 0)],
    ['statusTimeoutMs', argInt('status-ms', 0)],
  ].filter(([, ms]) => ms > 0),
);
const FIRST = 'Hello there, and welcome back.';
const REST = ' Your order has shipped and arrives on Tuesday.';
const TARGET_BYTES_PER_STREAM = 64 * 1024;
/** Memory per active stream at most 1.25x the raw client's. */
const TARGET_RATIO_OVER_RAW = 1.25;

/** The segments SpeechStream's segmenter makes of `text` (the raw client sends the same, so both speak identical audio). */
function segmentsOf(text) {
  const out = [];
  const seg = new TokenSegmenter({}, (s) => out.push(s));
  seg.push(text);
  seg.end();
  return out;
}
const FIRST_SEGMENTS = segmentsOf(FIRST);
const REST_SEGMENTS = segmentsOf(REST);

/** Client memory that streams can hold: V8 heap plus everything outside it (Buffers included). */
function memory() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, rss: m.rss, total: m.heapUsed + m.external };
}

function perStream(after, before, n) {
  const kib = (x) => r(x / n / 1024, 2);
  return {
    totalKiB: kib(after.total - before.total),
    heapKiB: kib(after.heap - before.heap),
    externalKiB: kib(after.external - before.external),
    arrayBuffersKiB: kib(after.arrayBuffers - before.arrayBuffers),
    rssKiB: kib(after.rss - before.rss),
  };
}

/** Run `fn` over `items` with at most `limit` at a time. */
async function bounded(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}

const { server, config, request } = await startToneBench();

/** 1,000 SpeechStreams: open all, first segment on all, then the rest and end. */
async function runLibrary() {
  const base = memory();
  const t0 = performance.now();
  const errors = {};
  /** Up to 5 distinct error messages, to tell what the codes were. */
  const errorSamples = [];
  const retryCauses = {};
  const fail = (err) => {
    const code = err?.code ?? 'internal_error';
    errors[code] = (errors[code] ?? 0) + 1;
    const message = `${code}: ${String(err?.message ?? err)}`.slice(0, 300);
    if (errorSamples.length < 5 && !errorSamples.includes(message)) errorSamples.push(message);
  };
  const streams = await bounded(Array.from({ length: STREAMS }), OPEN_PARALLEL, async () => {
    const session = new ReliableSession({ wsUrl: config.wsUrl, rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, request, ...BUDGETS });
    const speech = new SpeechStream({ transport: session });
    const state = { speech, bytes: 0, ok: false, error: undefined };
    // What made streams resume: the first words of each retry's cause, counted.
    session.on('retry', ({ error }) => {
      const cause = `${error?.code ?? '?'}: ${String(error?.message ?? '').replace(/[0-9a-f-]{36}/g, '<id>').replace(/\d+/g, 'N').slice(0, 120)}`;
      retryCauses[cause] = (retryCauses[cause] ?? 0) + 1;
    });
    speech.on('error', (err) => (state.error = err));
    const sink = new Writable({
      write(chunk, _e, cb) {
        state.bytes += chunk.length;
        cb();
      },
    });
    state.done = new Promise((resolve) => {
      sink.on('finish', () => {
        state.ok = true;
        resolve();
      });
      speech.on('close', resolve);
    });
    speech.pipe(sink);
    try {
      await speech.open();
    } catch (err) {
      state.error = err;
    }
    return state;
  });
  const openMs = performance.now() - t0;
  const ready = memory();
  const t1 = performance.now();
  await Promise.all(
    streams.map(async (s) => {
      if (s.error) return;
      s.speech.write(FIRST);
      await s.speech.flush().catch((err) => (s.error ??= err));
    }),
  );
  const firstSegmentMs = performance.now() - t1;
  const active = memory();
  const t2 = performance.now();
  for (const s of streams) if (!s.error) s.speech.end(REST);
  await Promise.all(streams.map((s) => s.done));
  const finishMs = performance.now() - t2;
  for (const s of streams) if (s.error || !s.ok) fail(s.error);
  const bytes = streams.map((s) => s.bytes);
  return {
    streams: STREAMS,
    completed: streams.filter((s) => s.ok && !s.error).length,
    errors,
    errorSamples,
    retryCauses,
    bytesPerStream: { min: Math.min(...bytes), max: Math.max(...bytes) },
    openAllMs: r(openMs, 0),
    firstSegmentAllMs: r(firstSegmentMs, 0),
    finishAllMs: r(finishMs, 0),
    memoryPerStream: { ready: perStream(ready, base, STREAMS), active: perStream(active, base, STREAMS) },
  };
}

/** The same with the raw client. */
async function runRaw() {
  const base = memory();
  const t0 = performance.now();
  const errors = {};
  const sessions = await bounded(Array.from({ length: STREAMS }), OPEN_PARALLEL, async () => {
    const state = { s: new RawReliableSession({ wsUrl: config.wsUrl, apiKey: config.apiKey, request }), bytes: 0, ok: false, error: undefined };
    try {
      await state.s.open();
    } catch (err) {
      state.error = err;
    }
    return state;
  });
  const openMs = performance.now() - t0;
  const ready = memory();
  const onAudio = (state) => (audio) => (state.bytes += audio.byteLength);
  const t1 = performance.now();
  await Promise.all(sessions.map((x) => (x.error ? undefined : x.s.speak(FIRST_SEGMENTS, onAudio(x), { stop: false }).catch((err) => (x.error = err)))));
  const firstSegmentMs = performance.now() - t1;
  const active = memory();
  const t2 = performance.now();
  await Promise.all(
    sessions.map(async (x) => {
      if (x.error) return;
      try {
        await x.s.speak(REST_SEGMENTS, onAudio(x));
        x.ok = true;
      } catch (err) {
        x.error = err;
      }
    }),
  );
  const finishMs = performance.now() - t2;
  for (const x of sessions) {
    if (!x.ok) {
      const code = String(x.error?.message ?? 'internal_error').split(':')[0];
      errors[code] = (errors[code] ?? 0) + 1;
    }
  }
  const bytes = sessions.map((x) => x.bytes);
  return {
    streams: STREAMS,
    completed: sessions.filter((x) => x.ok).length,
    errors,
    bytesPerStream: { min: Math.min(...bytes), max: Math.max(...bytes) },
    openAllMs: r(openMs, 0),
    firstSegmentAllMs: r(firstSegmentMs, 0),
    finishAllMs: r(finishMs, 0),
    memoryPerStream: { ready: perStream(ready, base, STREAMS), active: perStream(active, base, STREAMS) },
  };
}

const started = Date.now();
// Baseline first, then the library: the heap only grows, so the library is measured after the process is warm.
const raw = await runRaw();
const library = await runLibrary();
await server.close();

const results = {
  bench: 'concurrency',
  date: new Date().toISOString(),
  machine: machine(),
  server: 'voxpipe serve --engine tone in a child process (loopback); the client process holds only clients',
  baseline: 'the same streams with the minimal raw ws + @msgpack/msgpack client (bench/_raw-client.mjs)',
  method:
    'memory = heapUsed + external (external includes arrayBuffers) after two forced GCs, minus the figure before the first stream, per stream; ready = all open and started; active = all have spoken a first segment and wait for more text; consumers: null sinks',
  text: { first: FIRST, rest: REST },
  budgets: Object.keys(BUDGETS).length > 0 ? BUDGETS : 'defaults (src/realtime/budgets.ts)',
  wallMs: Date.now() - started,
  target: { bytesPerActiveStream: TARGET_BYTES_PER_STREAM, activeMemoryLibraryOverRaw: TARGET_RATIO_OVER_RAW },
  library,
  raw,
  ratio: {
    activeMemoryLibraryOverRaw: r(library.memoryPerStream.active.totalKiB / raw.memoryPerStream.active.totalKiB, 2),
  },
  met: {
    allComplete: library.completed === STREAMS && Object.keys(library.errors).length === 0,
    memory: library.memoryPerStream.active.totalKiB * 1024 < TARGET_BYTES_PER_STREAM && library.memoryPerStream.ready.totalKiB * 1024 < TARGET_BYTES_PER_STREAM,
    memoryOverRaw: library.memoryPerStream.active.totalKiB / raw.memoryPerStream.active.totalKiB <= TARGET_RATIO_OVER_RAW,
  },
};
const file = writeResults(Object.keys(BUDGETS).length > 0 ? 'concurrency-budgets' : 'concurrency', results);

const mem = (m) => `${m.totalKiB} KiB (heap ${m.heapKiB}, external ${m.externalKiB} of which buffers ${m.arrayBuffersKiB}; rss ${m.rssKiB})`;
console.log(`${STREAMS} concurrent reliable streams, one client process, reference server (tone) in a child process`);
for (const [name, x] of [['SpeechStream', library], ['raw client', raw]]) {
  console.log(`  ${name}: ${x.completed}/${x.streams} complete, errors ${JSON.stringify(x.errors)}, ${x.bytesPerStream.min}-${x.bytesPerStream.max} bytes each; open all ${x.openAllMs} ms, first segment on all ${x.firstSegmentAllMs} ms, rest ${x.finishAllMs} ms`);
  for (const m of x.errorSamples ?? []) console.log(`    error: ${m}`);
  for (const [cause, n] of Object.entries(x.retryCauses ?? {})) console.log(`    retry x${n}: ${cause}`);
  console.log(`    memory per stream: ready ${mem(x.memoryPerStream.ready)}`);
  console.log(`                       active ${mem(x.memoryPerStream.active)}`);
}
console.log(`  library / raw (active): ${results.ratio.activeMemoryLibraryOverRaw}x`);
console.log(`targets: all complete with no error ${results.met.allComplete ? 'met' : 'MISSED'}; < 64 KiB per active stream ${results.met.memory ? 'met' : 'MISSED'}; at most ${TARGET_RATIO_OVER_RAW}x the raw client's ${results.met.memoryOverRaw ? 'met' : 'MISSED'}`);
console.log(`wrote ${file}`);
