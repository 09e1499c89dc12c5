// What the client costs over a minimal raw client (ws + MessagePack only),
// against the same reference server (tone engine, child process), in the
// same run, interleaved:
//  1. time to first audio (warm: connection open and `ready` before the
//     timer; timer from handing over the text to the first audio byte) of
//     the raw client, of ReliableSession, and of SpeechStream (text written
//     to the first Buffer on its readable side); the added latency at p50
//     and p99 (targets: < 0.3 ms and < 2 ms);
//  2. audio throughput of a long text through SpeechStream into a null sink,
//     as a share of the raw client's frame throughput (target: >= 80%), with
//     the client process's CPU time per MB of audio.
// Run `npm run build` first. Options: --runs N (300) --warmup N (30)
// --rounds N (throughput rounds, 8). Writes bench/results/client-vs-raw.json.
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { fetchCapabilities, defaultModel } from '../dist/bench/capabilities.js';
import { median, summarize } from '../dist/bench/stats.js';
import { BENCH_TEXTS } from '../dist/bench/texts.js';
import { ReliableSession } from '../dist/realtime/reliable/session.js';
import { SpeechStream } from '../dist/stream/speech-stream.js';
import { TokenSegmenter } from '../dist/stream/token-segmenter.js';
import { argInt, machine, r, startChildServer, writeResults } from './_common.mjs';
import { RawReliableSession } from './_raw-client.mjs';

const RUNS = argInt('runs', 300);
const WARMUP = argInt('warmup', 30);
const ROUNDS = argInt('rounds', 8);
const TTFA_TEXT = BENCH_TEXTS.short;
const THROUGHPUT_TEXT = BENCH_TEXTS.long.repeat(5); // ~5,200 characters, ~6 min of tone audio
const TARGET = { addedP50Ms: 0.3, addedP99Ms: 2, throughputShare: 0.8 };

/** The segments SpeechStream's segmenter makes of `text` (the raw client sends the same). */
function segmentsOf(text) {
  const out = [];
  const seg = new TokenSegmenter({}, (s) => out.push(s));
  seg.push(text);
  seg.end();
  return out;
}

const server = await startChildServer({ engine: 'tone' });
const { config } = server;
const caps = await fetchCapabilities(config);
const model = defaultModel(caps);
const request = { voice_id: model.voices[0].id, model: model.id, format: 'pcm' };
const session = () => new ReliableSession({ wsUrl: config.wsUrl, rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, request });

// ---------------------------------------------------------------- time to first audio

const ttfaSegments = segmentsOf(TTFA_TEXT);

async function rawTtfa() {
  const s = new RawReliableSession({ wsUrl: config.wsUrl, apiKey: config.apiKey, request });
  await s.open();
  let first;
  const t0 = performance.now();
  await s.speak(ttfaSegments, () => (first ??= performance.now()));
  return first - t0;
}

async function sessionTtfa() {
  const s = session();
  await s.open();
  let first;
  s.on('audio', () => (first ??= performance.now()));
  const t0 = performance.now();
  ttfaSegments.forEach((text, i) => void s.send({ segmentId: `seg-${i}`, text }));
  await s.end();
  return first - t0;
}

async function streamTtfa() {
  const speech = new SpeechStream({ transport: session() });
  await speech.open();
  let first;
  speech.on('data', () => (first ??= performance.now()));
  const done = new Promise((resolve, reject) => {
    speech.on('end', resolve);
    speech.on('error', reject);
  });
  const t0 = performance.now();
  speech.end(TTFA_TEXT);
  await done;
  return first - t0;
}

const clients = { raw: rawTtfa, session: sessionTtfa, stream: streamTtfa };
const names = Object.keys(clients);
const samples = { raw: [], session: [], stream: [] };
const started = Date.now();
for (let round = 0; round < WARMUP + RUNS; round++) {
  // Rotate the order every round: no client always runs first (or after a GC).
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length];
    const ms = await clients[name]();
    if (round >= WARMUP) samples[name].push(ms);
  }
}
const ttfaWallMs = Date.now() - started;

const dist = (values) => {
  const d = summarize(values);
  return Object.fromEntries(Object.entries(d).map(([k, v]) => [k, r(v, 4)]));
};
const added = (name) => {
  const d = summarize(samples[name]);
  const base = summarize(samples.raw);
  // Runs i of both clients ran back to back: their difference cancels slow drift.
  const paired = samples[name].map((v, i) => v - samples.raw[i]);
  return {
    p50Ms: r(d.p50 - base.p50, 4),
    p99Ms: r(d.p99 - base.p99, 4),
    minMs: r(d.min - base.min, 4),
    medianOfPairedDifferencesMs: r(median(paired), 4),
  };
};
const ttfa = {
  runs: RUNS,
  warmup: WARMUP,
  segments: ttfaSegments.length,
  textChars: TTFA_TEXT.length,
  wallMs: ttfaWallMs,
  raw: dist(samples.raw),
  session: dist(samples.session),
  stream: dist(samples.stream),
  added: { session: added('session'), stream: added('stream') },
};

// ---------------------------------------------------------------- throughput

const tpSegments = segmentsOf(THROUGHPUT_TEXT);

async function rawThroughput() {
  const s = new RawReliableSession({ wsUrl: config.wsUrl, apiKey: config.apiKey, request });
  await s.open();
  let last = 0;
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await s.speak(tpSegments, (audio) => {
    bytes += audio.byteLength;
    last = performance.now();
  });
  const cpu = process.cpuUsage(cpu0);
  return { bytes, ms: last - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function streamThroughput() {
  const speech = new SpeechStream({ transport: session() });
  await speech.open();
  let last = 0;
  let bytes = 0;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      bytes += chunk.length;
      last = performance.now();
      cb();
    },
  });
  const done = new Promise((resolve, reject) => {
    sink.on('finish', resolve);
    speech.on('error', reject);
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  speech.pipe(sink);
  speech.end(THROUGHPUT_TEXT);
  await done;
  const cpu = process.cpuUsage(cpu0);
  return { bytes, ms: last - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const tp = { raw: [], stream: [] };
await rawThroughput(); // warm-up, discarded
await streamThroughput();
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ['raw', 'stream'] : ['stream', 'raw'];
  for (const name of order) tp[name].push(await (name === 'raw' ? rawThroughput() : streamThroughput()));
}
const MB = 1024 * 1024;
const BYTES_PER_AUDIO_S = 24_000 * 2; // 24 kHz mono s16le
const tpSummary = (runs) => {
  const mbps = runs.map((x) => x.bytes / MB / (x.ms / 1000));
  return {
    bytesPerRun: runs[0].bytes,
    audioSecondsPerRun: r(runs[0].bytes / BYTES_PER_AUDIO_S, 1),
    mbPerSecond: { median: r(median(mbps), 2), min: r(Math.min(...mbps), 2), max: r(Math.max(...mbps), 2) },
    audioSecondsPerSecond: r(median(runs.map((x) => x.bytes / BYTES_PER_AUDIO_S / (x.ms / 1000))), 0),
    clientCpuMsPerMb: r(median(runs.map((x) => x.cpuMs / (x.bytes / MB))), 2),
  };
};
const throughput = {
  rounds: ROUNDS,
  segments: tpSegments.length,
  textChars: THROUGHPUT_TEXT.length,
  raw: tpSummary(tp.raw),
  stream: tpSummary(tp.stream),
};
throughput.streamShareOfRaw = r(throughput.stream.mbPerSecond.median / throughput.raw.mbPerSecond.median, 3);
// Paired rounds (same round, back to back): the share per round, then its median.
throughput.streamShareOfRawPairedMedian = r(median(tp.stream.map((s, i) => s.bytes / s.ms / (tp.raw[i].bytes / tp.raw[i].ms))), 3);

await server.close();

const results = {
  bench: 'client-vs-raw',
  date: new Date().toISOString(),
  machine: machine(),
  server: 'voxpipe serve --engine tone in a child process (loopback)',
  baseline: 'minimal raw client: ws + @msgpack/msgpack, same reliable exchange and pacing (bench/_raw-client.mjs)',
  method:
    'warm: connection open and ready before the timer; timer from handing the text over to the first audio byte; raw, ReliableSession and SpeechStream runs interleaved with the order rotated every round; percentiles exact (type 7)',
  targets: TARGET,
  ttfa,
  throughput,
  met: {
    addedP50: ttfa.added.stream.p50Ms < TARGET.addedP50Ms,
    addedP99: ttfa.added.stream.p99Ms < TARGET.addedP99Ms,
    throughput: throughput.streamShareOfRaw >= TARGET.throughputShare,
  },
};
const file = writeResults('client-vs-raw', results);

const row = (name, d) => `  ${name.padEnd(16)} p50 ${d.p50.toFixed(3)}  p90 ${d.p90.toFixed(3)}  p99 ${d.p99.toFixed(3)}  min ${d.min.toFixed(3)}  IQR ${d.iqr.toFixed(3)}`;
console.log(`client vs raw ws+msgpack client, ${RUNS} interleaved runs each (after ${WARMUP} warm-up), warm, tone engine in a child process; ms`);
console.log(row('raw', ttfa.raw));
console.log(row('ReliableSession', ttfa.session));
console.log(row('SpeechStream', ttfa.stream));
for (const name of ['session', 'stream']) {
  const a = ttfa.added[name];
  console.log(`  added by ${name === 'session' ? 'ReliableSession' : 'SpeechStream'}: p50 ${a.p50Ms} ms, p99 ${a.p99Ms} ms, min ${a.minMs} ms, median of paired differences ${a.medianOfPairedDifferencesMs} ms`);
}
console.log(`throughput (${throughput.textChars} chars, ${throughput.raw.audioSecondsPerRun} s of audio, ${ROUNDS} rounds):`);
console.log(`  raw          ${throughput.raw.mbPerSecond.median} MB/s (${throughput.raw.audioSecondsPerSecond} s of audio/s), client CPU ${throughput.raw.clientCpuMsPerMb} ms/MB`);
console.log(`  SpeechStream ${throughput.stream.mbPerSecond.median} MB/s (${throughput.stream.audioSecondsPerSecond} s of audio/s), client CPU ${throughput.stream.clientCpuMsPerMb} ms/MB`);
console.log(`  share of raw: ${(throughput.streamShareOfRaw * 100).toFixed(1)}% (paired median ${(throughput.streamShareOfRawPairedMedian * 100).toFixed(1)}%)`);
console.log(`targets: added p50 < ${TARGET.addedP50Ms} ms ${results.met.addedP50 ? 'met' : 'MISSED'}; added p99 < ${TARGET.addedP99Ms} ms ${results.met.addedP99 ? 'met' : 'MISSED'}; throughput >= 80% ${results.met.throughput ? 'met' : 'MISSED'}`);
console.log(`wrote ${file}`);
