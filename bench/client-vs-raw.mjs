// What the client costs over a minimal raw client (ws + MessagePack only),
// against the same server, in the same run, interleaved:
//  1. time to first audio (warm: connection open and `ready` before the
//     timer; timer from handing over the text to the first audio byte) of
//     the raw client, of ReliableSession, and of SpeechStream (text written
//     to the first Buffer on its readable side); the added latency at p50
//     and p99 (targets: at most +0.05 ms and +0.5 ms). Runs come in --blocks blocks;
//     the added latency reported is the median over blocks of each block's
//     p50 (p99) difference, so one noisy stretch of a shared machine cannot
//     decide the figure alone. Measured against
//     (a) the reference server (tone engine, child process): the product's
//         figure, with the server's own latency spread (input_ack and
//         segment_accepted round trips, engine start) in every sample;
//     (b) a stand-in server that generates nothing (bench/_blast-server.mjs,
//         child process, 64 KiB of audio per segment): the server answers
//         at once, so what remains is the clients and the loopback.
//  2. audio throughput through SpeechStream into a null sink, as a share of
//     the raw client's frame throughput (target: >= 80%), with the client
//     process's CPU time per MB: (a) against the reference server, a long
//     text, end to end (the server's generation may be the limit); (b)
//     against the blast server sending 8 MiB of PCM frames per segment as
//     fast as the socket takes them: the client's own ceiling (decides the
//     target).
// Run `npm run build` first. Options: --runs N (per block, 300) --blocks N (3)
// --warmup N (30) --rounds N (throughput rounds, 10).
// Writes bench/out/client-vs-raw.json.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { median, summarize } from '../dist/bench/stats.js';
import { BENCH_TEXTS } from '../dist/bench/texts.js';
import { ReliableSession } from '../dist/realtime/reliable/session.js';
import { SpeechStream } from '../dist/stream/speech-stream.js';
import { TokenSegmenter } from '../dist/stream/token-segmenter.js';
import { argInt, machine, r, ROOT, writeResults, startToneBench } from './_common.mjs';
import { RawReliableSession } from './_raw-client.mjs';

const RUNS = argInt('runs', 300);
const BLOCKS = argInt('blocks', 3);
const WARMUP = argInt('warmup', 30);
const ROUNDS = argInt('rounds', 10);
const TTFA_TEXT = BENCH_TEXTS.short;
const THROUGHPUT_TEXT = BENCH_TEXTS.long.repeat(5); // ~5,200 characters, ~6 min of tone audio
const TARGET = { addedP50Ms: 0.05, addedP99Ms: 0.5, throughputShare: 0.8, cpuPerMbOverRaw: 1.15 };
const MB = 1024 * 1024;
const BYTES_PER_AUDIO_S = 24_000 * 2; // 24 kHz mono s16le

/** The segments SpeechStream's segmenter makes of `text` (the raw client sends the same). */
function segmentsOf(text) {
  const out = [];
  const seg = new TokenSegmenter({}, (s) => out.push(s));
  seg.push(text);
  seg.end();
  return out;
}

/** The blast server in a child process, sending `audioBytes` per segment. */
async function startBlast(audioBytes) {
  const child = spawn(process.execPath, [join(ROOT, 'bench/_blast-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BLAST_AUDIO_BYTES: String(audioBytes) } });
  const line = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`blast server exited with ${code}`)));
  });
  const { port } = JSON.parse(line);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    wsUrl: `ws://127.0.0.1:${port}`,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const { server, config, request } = await startToneBench();
const session = (wsUrl) => new ReliableSession({ wsUrl, rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, request });

// ---------------------------------------------------------------- time to first audio

const ttfaSegments = segmentsOf(TTFA_TEXT);

/** The three clients' TTFA runs against `wsUrl`. */
function ttfaClients(wsUrl) {
  return {
    async raw() {
      const s = new RawReliableSession({ wsUrl, apiKey: config.apiKey, request });
      await s.open();
      let first;
      const t0 = performance.now();
      await s.speak(ttfaSegments, () => (first ??= performance.now()));
      return first - t0;
    },
    async session() {
      const s = session(wsUrl);
      await s.open();
      let first;
      s.on('audio', () => (first ??= performance.now()));
      const t0 = performance.now();
      ttfaSegments.forEach((text, i) => void s.send({ segmentId: `seg-${i}`, text }));
      await s.end();
      return first - t0;
    },
    async stream() {
      const speech = new SpeechStream({ transport: session(wsUrl) });
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
    },
  };
}

const dist = (values) => {
  const d = summarize(values);
  return Object.fromEntries(Object.entries(d).map(([k, v]) => [k, r(v, 4)]));
};

/** Added latency of `name` over the raw client in one set of interleaved samples. */
function addedIn(samples, name) {
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
}

/** Warm-up, then BLOCKS blocks of RUNS interleaved rounds (order rotated every round). */
async function measureTtfa(wsUrl) {
  const clients = ttfaClients(wsUrl);
  const names = Object.keys(clients);
  const all = { raw: [], session: [], stream: [] };
  const blocks = [];
  const started = Date.now();
  for (let round = 0; round < WARMUP; round++) for (const name of names) await clients[name]();
  for (let b = 0; b < BLOCKS; b++) {
    const samples = { raw: [], session: [], stream: [] };
    for (let round = 0; round < RUNS; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + round) % names.length];
        samples[name].push(await clients[name]());
      }
    }
    for (const name of names) all[name].push(...samples[name]);
    blocks.push({ rawP50Ms: r(summarize(samples.raw).p50, 4), rawP99Ms: r(summarize(samples.raw).p99, 4), added: { session: addedIn(samples, 'session'), stream: addedIn(samples, 'stream') } });
  }
  const overBlocks = (name, key) => r(median(blocks.map((b) => b.added[name][key])), 4);
  const added = (name) => ({
    p50Ms: overBlocks(name, 'p50Ms'),
    p99Ms: overBlocks(name, 'p99Ms'),
    medianOfPairedDifferencesMs: overBlocks(name, 'medianOfPairedDifferencesMs'),
    pooled: addedIn(all, name),
  });
  return {
    runsPerBlock: RUNS,
    blocks: BLOCKS,
    warmup: WARMUP,
    segments: ttfaSegments.length,
    textChars: TTFA_TEXT.length,
    wallMs: Date.now() - started,
    raw: dist(all.raw),
    session: dist(all.session),
    stream: dist(all.stream),
    added: { session: added('session'), stream: added('stream') },
    perBlock: blocks,
  };
}

// ---------------------------------------------------------------- throughput

async function rawThroughput(wsUrl, segments) {
  const s = new RawReliableSession({ wsUrl, apiKey: config.apiKey, request });
  await s.open();
  let last = 0;
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await s.speak(segments, (audio) => {
    bytes += audio.byteLength;
    last = performance.now();
  });
  const cpu = process.cpuUsage(cpu0);
  return { bytes, ms: last - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function streamThroughput(wsUrl, text) {
  const speech = new SpeechStream({ transport: session(wsUrl) });
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
  speech.end(text);
  await done;
  const cpu = process.cpuUsage(cpu0);
  return { bytes, ms: last - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Interleaved throughput rounds of both clients against `wsUrl` (order alternating). */
async function measureThroughput(wsUrl, text) {
  const segments = segmentsOf(text);
  const tp = { raw: [], stream: [] };
  await rawThroughput(wsUrl, segments); // warm-up, discarded
  await streamThroughput(wsUrl, text);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['raw', 'stream'] : ['stream', 'raw'];
    for (const name of order) tp[name].push(await (name === 'raw' ? rawThroughput(wsUrl, segments) : streamThroughput(wsUrl, text)));
  }
  const summary = (runs) => {
    const mbps = runs.map((x) => x.bytes / MB / (x.ms / 1000));
    return {
      bytesPerRun: runs[0].bytes,
      audioSecondsPerRun: r(runs[0].bytes / BYTES_PER_AUDIO_S, 1),
      mbPerSecond: { median: r(median(mbps), 2), min: r(Math.min(...mbps), 2), max: r(Math.max(...mbps), 2) },
      audioSecondsPerSecond: r(median(runs.map((x) => x.bytes / BYTES_PER_AUDIO_S / (x.ms / 1000))), 0),
      clientCpuMsPerMb: r(median(runs.map((x) => x.cpuMs / (x.bytes / MB))), 2),
    };
  };
  const out = { rounds: ROUNDS, segments: segments.length, textChars: text.length, raw: summary(tp.raw), stream: summary(tp.stream) };
  out.streamShareOfRaw = r(out.stream.mbPerSecond.median / out.raw.mbPerSecond.median, 3);
  // Paired rounds (same round, back to back): the share per round, then its median.
  out.streamShareOfRawPairedMedian = r(median(tp.stream.map((x, i) => x.bytes / x.ms / (tp.raw[i].bytes / tp.raw[i].ms))), 3);
  // CPU per MB does not depend on who else used the machine's cores: the cleanest ratio.
  out.rawCpuShareOfStream = r(out.raw.clientCpuMsPerMb / out.stream.clientCpuMsPerMb, 3);
  // The target: SpeechStream's CPU per MB over the raw client's, per round (back to back), then the median.
  out.streamCpuOverRawPairedMedian = r(median(tp.stream.map((x, i) => x.cpuMs / x.bytes / (tp.raw[i].cpuMs / tp.raw[i].bytes))), 3);
  return out;
}

// ---------------------------------------------------------------- run

const ttfa = { referenceServer: await measureTtfa(config.wsUrl) };
const throughput = { referenceServer: await measureThroughput(config.wsUrl, THROUGHPUT_TEXT) };
await server.close();
const smallBlast = await startBlast(64 * 1024);
try {
  ttfa.blastServer = await measureTtfa(smallBlast.wsUrl);
} finally {
  await smallBlast.close();
}
const bigBlast = await startBlast(8 * MB);
try {
  throughput.blastServer = await measureThroughput(bigBlast.wsUrl, TTFA_TEXT);
} finally {
  await bigBlast.close();
}

const results = {
  bench: 'client-vs-raw',
  date: new Date().toISOString(),
  machine: machine(),
  servers: {
    referenceServer: 'voxpipe serve --engine tone in a child process (loopback)',
    blastServer: 'bench/_blast-server.mjs in a child process: valid reliable-mode events, no generation; 64 KiB (TTFA) or 8 MiB (throughput) of PCM per segment in 8 KiB frames',
  },
  baseline: 'minimal raw client: ws + @msgpack/msgpack (one Decoder/Encoder reused), same reliable exchange and pacing (bench/_raw-client.mjs)',
  method:
    'warm: connection open and ready before the timer; timer from handing the text over to the first audio byte; raw, ReliableSession and SpeechStream runs interleaved, order rotated every round; added = median over blocks of the per-block percentile difference; percentiles exact (type 7)',
  targets: TARGET,
  ttfa,
  throughput,
  met: {
    addedP50: ttfa.referenceServer.added.stream.p50Ms <= TARGET.addedP50Ms,
    addedP99: ttfa.referenceServer.added.stream.p99Ms <= TARGET.addedP99Ms,
    // Decided where the client is the bottleneck (the blast server); against the tone server its generation limits both.
    throughput: throughput.blastServer.streamShareOfRaw >= TARGET.throughputShare,
    cpuPerMb: throughput.blastServer.streamCpuOverRawPairedMedian <= TARGET.cpuPerMbOverRaw,
  },
};
const file = writeResults('client-vs-raw', results);

const row = (name, d) => `    ${name.padEnd(16)} p50 ${d.p50.toFixed(3)}  p90 ${d.p90.toFixed(3)}  p99 ${d.p99.toFixed(3)}  min ${d.min.toFixed(3)}  IQR ${d.iqr.toFixed(3)}`;
console.log(`time to first audio, warm, ${BLOCKS} blocks x ${RUNS} interleaved runs per client (after ${WARMUP} warm-up); ms`);
for (const [label, t] of [['reference server (tone)', ttfa.referenceServer], ['blast server (answers at once)', ttfa.blastServer]]) {
  console.log(`  against the ${label}:`);
  console.log(row('raw', t.raw));
  console.log(row('ReliableSession', t.session));
  console.log(row('SpeechStream', t.stream));
  for (const name of ['session', 'stream']) {
    const a = t.added[name];
    console.log(
      `    added by ${name === 'session' ? 'ReliableSession' : 'SpeechStream'}: p50 ${a.p50Ms}, p99 ${a.p99Ms}, median of paired differences ${a.medianOfPairedDifferencesMs} (median over blocks; per block p50 ${t.perBlock.map((b) => b.added[name].p50Ms).join(' / ')}, p99 ${t.perBlock.map((b) => b.added[name].p99Ms).join(' / ')})`,
    );
  }
}
for (const [label, t] of [['reference server (tone)', throughput.referenceServer], ['blast server (no generation: client-bound)', throughput.blastServer]]) {
  console.log(`throughput against the ${label}: ${t.textChars} chars, ${t.raw.audioSecondsPerRun} s of audio per run, ${ROUNDS} rounds`);
  console.log(`  raw          ${t.raw.mbPerSecond.median} MB/s (${t.raw.audioSecondsPerSecond} s of audio/s), client CPU ${t.raw.clientCpuMsPerMb} ms/MB`);
  console.log(`  SpeechStream ${t.stream.mbPerSecond.median} MB/s (${t.stream.audioSecondsPerSecond} s of audio/s), client CPU ${t.stream.clientCpuMsPerMb} ms/MB`);
  console.log(`  share of raw: ${(t.streamShareOfRaw * 100).toFixed(1)}% (paired median ${(t.streamShareOfRawPairedMedian * 100).toFixed(1)}%); CPU per MB raw/SpeechStream ${(t.rawCpuShareOfStream * 100).toFixed(1)}%; SpeechStream/raw per round, median ${t.streamCpuOverRawPairedMedian}x`);
}
console.log(
  `targets: added p50 <= +${TARGET.addedP50Ms} ms ${results.met.addedP50 ? 'met' : 'MISSED'}; added p99 <= +${TARGET.addedP99Ms} ms ${results.met.addedP99 ? 'met' : 'MISSED'}; throughput >= 80% (client-bound) ${results.met.throughput ? 'met' : 'MISSED'}; CPU per MB <= ${TARGET.cpuPerMbOverRaw}x raw (client-bound, paired) ${results.met.cpuPerMb ? 'met' : 'MISSED'}`,
);
console.log(`wrote ${file}`);
