// What the client costs over a minimal raw client (ws + MessagePack only),
// against the same server (a child process), in the same run, interleaved:
//  1. what a user pays per MB: whole requests (connect, start, ready, eight
//     flushed segments of ~600 characters, stop, finish), SpeechStream with
//     its word timings (on for pcm) piped into a null sink, against the raw
//     client decoding every frame with @msgpack/msgpack and sending the same
//     segments. Two figures:
//     (a) client CPU time per MB (process.cpuUsage), per round back to back,
//         runs interleaved (order rotated; a third client, SpeechStream with
//         its word timings off, is a diagnostic of their share); it swings
//         with the machine's load (a shared core stalls caches and adds
//         context switches);
//     (b) instructions per MB, which the load does not change: each client
//         alone in its own process (`--client raw|stream`, this script) under
//         `valgrind --tool=callgrind`, against the same server; W warm-up
//         requests, then N counted, over their MB. With `--words off` the
//         stream's word timings are skipped (diagnostic: their share).
//  2. time to first audio (warm: connection open and `ready` before the
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
//     Instructions of the first-audio path: callgrind as in 1b over warm
//     TTFA runs against the blast server sending one 8 KiB frame per
//     segment (the whole short request after `ready`: mostly that path).
//  3. audio throughput through SpeechStream into a null sink, as a share of
//     the raw client's frame throughput (target: >= 80%): (a) against the
//     reference server, a long text, end to end (the server's generation may
//     be the limit); (b) against the blast server sending 8 MiB of PCM
//     frames per segment as fast as the socket takes them: the client's own
//     ceiling. One request of 8 MiB segments spreads what a request costs
//     (connect, start, the segments' bookkeeping, word timings) over far more
//     bytes than a user's request has: 1 decides the CPU per MB target.
// Run `npm run build` first. Options: --runs N (TTFA, per block, 300)
// --blocks N (3) --warmup N (30) --rounds N (throughput rounds, 10)
// --requests N (whole-request rounds, 10) --instr-requests N (callgrind's
// measured runs per client, 2; 0 skips the instruction counts)
// --instr-warmup N (runs before them, 5) --only whole|ttfa|throughput
// (repeatable).
// Writes bench/out/client-vs-raw.json (bench/results/ with --record).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { median, summarize } from '../dist/bench/stats.js';
import { BENCH_TEXTS } from '../dist/bench/texts.js';
import { ReliableSession } from '../dist/realtime/reliable/session.js';
import { SpeechCore } from '../dist/stream/speech-core.js';
import { SpeechStream } from '../dist/stream/speech-stream.js';
import { TokenSegmenter } from '../dist/stream/token-segmenter.js';
import { argInt, machine, r, ROOT, writeResults, startToneBench } from './_common.mjs';
import { RawReliableSession } from './_raw-client.mjs';

const RUNS = argInt('runs', 300);
const BLOCKS = argInt('blocks', 3);
const WARMUP = argInt('warmup', 30);
const ROUNDS = argInt('rounds', 10);
const REQUESTS = argInt('requests', 10);
const INSTR_REQUESTS = argInt('instr-requests', 2);
const INSTR_WARM = argInt('instr-warmup', 5);
/** Value of `--name` on the command line, else `fallback`. */
const argStr = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const ONLY = process.argv.flatMap((a, i) => (a === '--only' ? [process.argv[i + 1]] : []));
const part = (name) => ONLY.length === 0 || ONLY.includes(name);
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

// ---------------------------------------------------------------- whole requests

/** Eight texts of ~600 characters (whole sentences), as a user flushes them one by one. */
function wholeRequestTexts(count = 8, chars = 600) {
  const sentences = BENCH_TEXTS.long.match(/[^.!?]+[.!?]+\s*/g);
  const out = [];
  let text = '';
  for (let i = 0; out.length < count; i++) {
    const next = sentences[i % sentences.length];
    if (text.length > 0 && text.length + next.length > chars + 60) {
      out.push(text.trim());
      text = '';
    }
    text += next;
  }
  return out;
}

/**
 * The segmenter of a user who cuts the text into segments: each write,
 * flushed, is one segment (no cut at sentence ends, no timeout).
 */
const FLUSHED_SEGMENTS = { firstMinChars: 10_000, firstMaxChars: 10_000, targetChars: 10_000, firstSegmentTimeoutMs: Infinity, segmentTimeoutMs: Infinity };

/** One whole request through SpeechStream into a null sink: each text written and flushed, then ended. Resolves with the audio bytes. */
async function streamRequest(cfg, texts, onSegment) {
  const transport = new ReliableSession({ wsUrl: cfg.wsUrl, rtHttpUrl: cfg.rtHttpUrl, apiKey: cfg.apiKey, request: cfg.request });
  const speech = new SpeechStream({ transport, segmenter: FLUSHED_SEGMENTS });
  let bytes = 0;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      bytes += chunk.length;
      cb();
    },
  });
  const done = new Promise((resolve, reject) => {
    sink.on('finish', resolve);
    speech.on('error', reject);
  });
  if (onSegment) speech.on('segment-start', (s) => onSegment(s.text));
  speech.pipe(sink);
  for (const text of texts) {
    speech.write(text);
    speech.flush().catch(() => undefined);
  }
  speech.end();
  await done;
  return bytes;
}

/** One whole request of the raw client (connect, start, the segments, stop, finish). Resolves with the audio bytes. */
async function rawRequest(cfg, segments) {
  const s = new RawReliableSession({ wsUrl: cfg.wsUrl, apiKey: cfg.apiKey, request: cfg.request });
  await s.open();
  return s.speak(segments);
}

const { meter, complete } = SpeechCore.prototype;
/**
 * Word timings on (the library as it is) or off (diagnostic, to measure
 * their share: the speech core neither meters the audio's energy nor
 * estimates the timings at a segment's end).
 */
function wordTimings(on) {
  SpeechCore.prototype.meter = on ? meter : () => undefined;
  SpeechCore.prototype.complete = on
    ? complete
    : function completeWithoutWords(segment) {
        segment.completed = true;
      };
}

/** The segments SpeechStream sends for `texts` (the raw client sends the same). */
async function streamSegments(cfg, texts) {
  const segments = [];
  await streamRequest(cfg, texts, (text) => segments.push(text));
  return segments;
}

/** Whole requests, both clients interleaved (order alternating), client CPU per MB per round. */
async function measureWhole(cfg) {
  const texts = wholeRequestTexts();
  const segments = await streamSegments(cfg, texts); // also the warm-up
  await rawRequest(cfg, segments);
  wordTimings(false);
  await streamRequest(cfg, texts);
  wordTimings(true);
  const rounds = { raw: [], stream: [], streamWordsOff: [] };
  const names = Object.keys(rounds);
  for (let round = 0; round < REQUESTS; round++) {
    for (let k = 0; k < names.length; k++) {
      // Order rotated every round.
      const name = names[(k + round) % names.length];
      wordTimings(name !== 'streamWordsOff');
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const bytes = await (name === 'raw' ? rawRequest(cfg, segments) : streamRequest(cfg, texts));
      const cpu = process.cpuUsage(cpu0);
      rounds[name].push({ bytes, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, userMs: cpu.user / 1000 });
    }
  }
  const summary = (runs) => ({
    bytesPerRequest: runs[0].bytes,
    audioSecondsPerRequest: r(runs[0].bytes / BYTES_PER_AUDIO_S, 1),
    requestMs: r(median(runs.map((x) => x.ms)), 1),
    clientCpuMsPerMb: r(median(runs.map((x) => x.cpuMs / (x.bytes / MB))), 3),
    // User time alone: the system time (socket reads, timers) is most of the rest.
    clientUserCpuMsPerMb: r(median(runs.map((x) => x.userMs / (x.bytes / MB))), 3),
    clientCpuMsPerMbPerRound: runs.map((x) => r(x.cpuMs / (x.bytes / MB), 3)),
  });
  wordTimings(true);
  const overRaw = (runs) => runs.map((x, i) => x.cpuMs / x.bytes / (rounds.raw[i].cpuMs / rounds.raw[i].bytes));
  const perRound = overRaw(rounds.stream);
  return {
    rounds: REQUESTS,
    segments: segments.length,
    segmentChars: segments.map((t) => t.length),
    raw: summary(rounds.raw),
    stream: summary(rounds.stream),
    streamWordTimingsOff: summary(rounds.streamWordsOff),
    streamCpuOverRawPairedMedian: r(median(perRound), 3),
    streamCpuOverRawPerRound: perRound.map((x) => r(x, 3)),
    streamWordTimingsOffCpuOverRawPairedMedian: r(median(overRaw(rounds.streamWordsOff)), 3),
  };
}

// ---------------------------------------------------------------- instructions (callgrind)

/**
 * Client-only mode (`--client raw|stream|raw-ttfa|session-ttfa|stream-ttfa`,
 * `--server JSON`): W warm-up runs, then N measured ones of one client
 * between two calls of `os.getPriority()`, the marks callgrind cuts its count
 * at (libuv's `uv_os_getpriority`, which nothing else here calls). Prints
 * `{"bytes":B}`: the audio of the N measured runs.
 */
async function clientOnly(name, cfg) {
  const warm = INSTR_WARM;
  const n = INSTR_REQUESTS;
  if (argStr('words', 'on') === 'off') wordTimings(false);
  const texts = wholeRequestTexts();
  const segments = JSON.parse(argStr('segments', JSON.stringify(texts)));
  const clients = ttfaClients(cfg);
  const run = {
    raw: () => rawRequest(cfg, segments),
    stream: () => streamRequest(cfg, texts),
    'raw-ttfa': () => clients.raw(),
    'session-ttfa': () => clients.session(),
    'stream-ttfa': () => clients.stream(),
  }[name];
  for (let i = 0; i < warm; i++) await run();
  let bytes = 0;
  getPriority();
  for (let i = 0; i < n; i++) {
    const result = await run();
    // Whole requests resolve with their audio bytes; TTFA runs with a time.
    if (!name.endsWith('-ttfa')) bytes += result;
  }
  getPriority();
  process.stdout.write(`${JSON.stringify({ bytes })}\n`);
}

/**
 * Instructions of the measured runs of one client-only process, counted by
 * callgrind between the two marks (`--single-threaded`: no compiler or GC
 * threads, everything on the one thread counted). Warm-up runs first, so
 * the optimizing compiler's work is mostly done: the steady state a
 * long-running process pays per request.
 */
async function instructionsOf(name, cfg, extra = []) {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-callgrind-'));
  try {
    const out = join(dir, 'out');
    const args = ['--tool=callgrind', '--dump-before=uv_os_getpriority', `--callgrind-out-file=${out}`, process.execPath, '--single-threaded', join(ROOT, 'bench/client-vs-raw.mjs'), '--client', name, '--server', JSON.stringify(cfg), '--instr-warmup', String(INSTR_WARM), '--instr-requests', String(INSTR_REQUESTS), ...extra];
    const child = spawn('valgrind', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((resolve) => child.once('close', resolve));
    // Part 2: from the first mark to the second, the measured runs.
    const totals = code === 0 ? /^totals:\s*(\d+)/m.exec(readFileSync(`${out}.2`, 'utf8')) : null;
    if (!totals) throw new Error(`callgrind of --client ${name} failed (${code}): ${stderr.slice(-500)}`);
    const instructions = Number(totals[1]);
    const compiler = await compilerInstructions(`${out}.2`);
    const bytes = JSON.parse(stdout.trim().split('\n').pop()).bytes;
    const per = (n, unit) => Math.round(n / unit);
    return {
      warmupRuns: INSTR_WARM,
      runs: INSTR_REQUESTS,
      instructionsPerRun: per(instructions, INSTR_REQUESTS),
      // V8's optimizing compiler still at work in the counted runs (it differs from run to run and process to process).
      compilerInstructionsPerRun: per(compiler, INSTR_REQUESTS),
      ...(bytes > 0 && { bytesPerRun: bytes / INSTR_REQUESTS, instructionsPerMb: per(instructions, bytes / MB), instructionsPerMbWithoutCompiler: per(instructions - compiler, bytes / MB) }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Instructions of V8's optimizing compilers in a callgrind file (their functions' own cost, from callgrind_annotate). */
async function compilerInstructions(file) {
  const child = spawn('callgrind_annotate', ['--threshold=100', file], { stdio: ['ignore', 'pipe', 'ignore'] });
  let text = '';
  child.stdout.on('data', (c) => (text += c));
  await new Promise((resolve) => child.once('close', resolve));
  let sum = 0;
  for (const m of text.matchAll(/^\s*([\d,]+) \([ \d.]+%\)\s+\S*v8::internal::(?:compiler|maglev|turboshaft)::/gm)) sum += Number(m[1].replaceAll(',', ''));
  return sum;
}

async function hasValgrind() {
  const child = spawn('valgrind', ['--version'], { stdio: 'ignore' });
  return new Promise((resolve) => {
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

const CLIENT = argStr('client');
if (CLIENT) {
  await clientOnly(CLIENT, JSON.parse(argStr('server')));
  process.exit(0);
}

const { server, config, request } = await startToneBench();
const session = (wsUrl) => new ReliableSession({ wsUrl, rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, request });
const toneCfg = { wsUrl: config.wsUrl, rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, request };

// ---------------------------------------------------------------- time to first audio

/** The three clients' TTFA runs against `cfg.wsUrl`. */
function ttfaClients(cfg) {
  const ttfaSegments = segmentsOf(TTFA_TEXT);
  const session = () => new ReliableSession({ wsUrl: cfg.wsUrl, rtHttpUrl: cfg.rtHttpUrl, apiKey: cfg.apiKey, request: cfg.request });
  return {
    async raw() {
      const s = new RawReliableSession({ wsUrl: cfg.wsUrl, apiKey: cfg.apiKey, request: cfg.request });
      await s.open();
      let first;
      const t0 = performance.now();
      await s.speak(ttfaSegments, () => (first ??= performance.now()));
      return first - t0;
    },
    async session() {
      const s = session();
      await s.open();
      let first;
      s.on('audio', () => (first ??= performance.now()));
      const t0 = performance.now();
      ttfaSegments.forEach((text, i) => void s.send({ segmentId: `seg-${i}`, text }));
      await s.end();
      return first - t0;
    },
    async stream() {
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
async function measureTtfa(cfg) {
  const clients = ttfaClients(cfg);
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
    segments: segmentsOf(TTFA_TEXT).length,
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

const blastCfg = (blast) => ({ ...toneCfg, wsUrl: blast.wsUrl });
const whole = {};
const ttfa = {};
const throughput = {};
const instructions = {};
const valgrind = INSTR_REQUESTS > 0 && (await hasValgrind());
if (part('whole')) {
  whole.referenceServer = await measureWhole(toneCfg);
  if (valgrind) {
    const segments = await streamSegments(toneCfg, wholeRequestTexts());
    const raw = await instructionsOf('raw', toneCfg, ['--segments', JSON.stringify(segments)]);
    const stream = await instructionsOf('stream', toneCfg);
    const streamWordsOff = await instructionsOf('stream', toneCfg, ['--words', 'off']);
    instructions.wholeRequest = {
      raw,
      stream,
      streamWordTimingsOff: streamWordsOff,
      streamOverRaw: r(stream.instructionsPerMb / raw.instructionsPerMb, 3),
      streamOverRawWithoutCompiler: r(stream.instructionsPerMbWithoutCompiler / raw.instructionsPerMbWithoutCompiler, 3),
      streamWordTimingsOffOverRaw: r(streamWordsOff.instructionsPerMb / raw.instructionsPerMb, 3),
      streamWordTimingsOffOverRawWithoutCompiler: r(streamWordsOff.instructionsPerMbWithoutCompiler / raw.instructionsPerMbWithoutCompiler, 3),
      wordTimingShareOfStream: r(1 - streamWordsOff.instructionsPerMbWithoutCompiler / stream.instructionsPerMbWithoutCompiler, 3),
    };
  }
}
if (part('ttfa')) ttfa.referenceServer = await measureTtfa(toneCfg);
if (part('throughput')) throughput.referenceServer = await measureThroughput(config.wsUrl, THROUGHPUT_TEXT);
await server.close();
if (part('ttfa')) {
  const smallBlast = await startBlast(64 * 1024);
  try {
    ttfa.blastServer = await measureTtfa(blastCfg(smallBlast));
  } finally {
    await smallBlast.close();
  }
  if (valgrind) {
    // One 8 KiB frame per segment: a short request is mostly its first-audio path.
    const oneFrame = await startBlast(8 * 1024);
    try {
      const cfg = blastCfg(oneFrame);
      const raw = await instructionsOf('raw-ttfa', cfg);
      const sessionRun = await instructionsOf('session-ttfa', cfg);
      const stream = await instructionsOf('stream-ttfa', cfg);
      const without = (x) => x.instructionsPerRun - x.compilerInstructionsPerRun;
      instructions.shortRequest = {
        raw,
        session: sessionRun,
        stream,
        sessionOverRaw: r(sessionRun.instructionsPerRun / raw.instructionsPerRun, 3),
        streamOverRaw: r(stream.instructionsPerRun / raw.instructionsPerRun, 3),
        streamOverRawWithoutCompiler: r(without(stream) / without(raw), 3),
      };
    } finally {
      await oneFrame.close();
    }
  }
}
if (part('throughput')) {
  const bigBlast = await startBlast(8 * MB);
  try {
    throughput.blastServer = await measureThroughput(bigBlast.wsUrl, TTFA_TEXT);
  } finally {
    await bigBlast.close();
  }
}

const met = {};
if (whole.referenceServer) met.cpuPerMbWholeRequests = whole.referenceServer.streamCpuOverRawPairedMedian <= TARGET.cpuPerMbOverRaw;
// Without the compiler's work: what is left to compile after the warm-up differs between processes, not between clients.
if (instructions.wholeRequest) met.instructionsPerMbWholeRequests = instructions.wholeRequest.streamOverRawWithoutCompiler <= TARGET.cpuPerMbOverRaw;
if (ttfa.referenceServer) {
  met.addedP50 = ttfa.referenceServer.added.stream.p50Ms <= TARGET.addedP50Ms;
  met.addedP99 = ttfa.referenceServer.added.stream.p99Ms <= TARGET.addedP99Ms;
}
// Decided where the client is the bottleneck (the blast server); against the tone server its generation limits both.
if (throughput.blastServer) met.throughput = throughput.blastServer.streamShareOfRaw >= TARGET.throughputShare;

const results = {
  bench: 'client-vs-raw',
  date: new Date().toISOString(),
  machine: machine(),
  servers: {
    referenceServer: 'voxpipe serve --engine tone in a child process (loopback)',
    blastServer: 'bench/_blast-server.mjs in a child process: valid reliable-mode events, no generation; 64 KiB (TTFA), 8 KiB (short-request instructions) or 8 MiB (throughput) of PCM per segment in 8 KiB frames',
  },
  baseline: 'minimal raw client: ws + @msgpack/msgpack (one Decoder/Encoder reused, every frame decoded), same reliable exchange and pacing, the same segments (bench/_raw-client.mjs)',
  method: {
    wholeRequests: 'connect, start, ready, eight texts of ~600 characters each written and flushed, end, finish; SpeechStream (word timings on: pcm) piped into a null sink vs the raw client (and SpeechStream with word timings off, diagnostic); interleaved, order rotated; client process CPU (user + system) per MB per round, the stream over raw per round, then the median',
    instructions: 'callgrind (valgrind) instruction counts of a client-only process (node --single-threaded) against the same server in another process: W warm-up runs, then N counted between two marks, per MB (or per run for the short request); load-independent',
    ttfa: 'warm: connection open and ready before the timer; timer from handing the text over to the first audio byte; raw, ReliableSession and SpeechStream runs interleaved, order rotated every round; added = median over blocks of the per-block percentile difference; percentiles exact (type 7)',
  },
  targets: TARGET,
  whole,
  instructions,
  ttfa,
  throughput,
  met,
};
const file = writeResults('client-vs-raw', results);

const w = whole.referenceServer;
if (w) {
  console.log(`whole requests against the reference server (tone): ${w.segments} flushed segments (${w.segmentChars.join(', ')} characters), ${w.raw.audioSecondsPerRequest} s of audio each, ${REQUESTS} rounds interleaved`);
  console.log(`  raw          client CPU ${w.raw.clientCpuMsPerMb} ms/MB, user ${w.raw.clientUserCpuMsPerMb} (per round ${w.raw.clientCpuMsPerMbPerRound.join(' / ')})`);
  console.log(`  SpeechStream client CPU ${w.stream.clientCpuMsPerMb} ms/MB, user ${w.stream.clientUserCpuMsPerMb} (per round ${w.stream.clientCpuMsPerMbPerRound.join(' / ')})`);
  console.log(`  SpeechStream, word timings off (diagnostic) client CPU ${w.streamWordTimingsOff.clientCpuMsPerMb} ms/MB, user ${w.streamWordTimingsOff.clientUserCpuMsPerMb}`);
  console.log(`  SpeechStream/raw per round, median ${w.streamCpuOverRawPairedMedian}x (${w.streamCpuOverRawPerRound.join(' / ')}); word timings off ${w.streamWordTimingsOffCpuOverRawPairedMedian}x`);
}
const wi = instructions.wholeRequest;
if (wi) {
  const m = (x) => `${(x.instructionsPerMb / 1e6).toFixed(2)} M/MB (${(x.instructionsPerMbWithoutCompiler / 1e6).toFixed(2)} without the compiler)`;
  console.log(`  instructions (callgrind, ${INSTR_REQUESTS} requests per client after ${INSTR_WARM}): raw ${m(wi.raw)}, SpeechStream ${m(wi.stream)}, word timings off ${m(wi.streamWordTimingsOff)}`);
  console.log(`    SpeechStream/raw ${wi.streamOverRaw}x (${wi.streamOverRawWithoutCompiler}x without the compiler); word timings off ${wi.streamWordTimingsOffOverRaw}x (${wi.streamWordTimingsOffOverRawWithoutCompiler}x); word timings are ${(wi.wordTimingShareOfStream * 100).toFixed(1)}% of SpeechStream's instructions (without the compiler)`);
}
const row = (name, d) => `    ${name.padEnd(16)} p50 ${d.p50.toFixed(3)}  p90 ${d.p90.toFixed(3)}  p99 ${d.p99.toFixed(3)}  min ${d.min.toFixed(3)}  IQR ${d.iqr.toFixed(3)}`;
if (ttfa.referenceServer) {
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
}
const si = instructions.shortRequest;
const mi = (x) => `${(x.instructionsPerRun / 1e6).toFixed(2)} M (compiler ${(x.compilerInstructionsPerRun / 1e6).toFixed(2)})`;
if (si) console.log(`  instructions per short warm request (blast server, one 8 KiB frame per segment; callgrind): raw ${mi(si.raw)}, ReliableSession ${mi(si.session)} (${si.sessionOverRaw}x), SpeechStream ${mi(si.stream)} (${si.streamOverRaw}x; ${si.streamOverRawWithoutCompiler}x without the compiler)`);
for (const [label, t] of [['reference server (tone)', throughput.referenceServer], ['blast server (no generation: client-bound)', throughput.blastServer]]) {
  if (!t) continue;
  console.log(`throughput against the ${label}: ${t.textChars} chars, ${t.raw.audioSecondsPerRun} s of audio per run, ${ROUNDS} rounds`);
  console.log(`  raw          ${t.raw.mbPerSecond.median} MB/s (${t.raw.audioSecondsPerSecond} s of audio/s), client CPU ${t.raw.clientCpuMsPerMb} ms/MB`);
  console.log(`  SpeechStream ${t.stream.mbPerSecond.median} MB/s (${t.stream.audioSecondsPerSecond} s of audio/s), client CPU ${t.stream.clientCpuMsPerMb} ms/MB`);
  console.log(`  share of raw: ${(t.streamShareOfRaw * 100).toFixed(1)}% (paired median ${(t.streamShareOfRawPairedMedian * 100).toFixed(1)}%); CPU per MB raw/SpeechStream ${(t.rawCpuShareOfStream * 100).toFixed(1)}%; SpeechStream/raw per round, median ${t.streamCpuOverRawPairedMedian}x`);
}
const verdict = (key, text) => (key in met ? `${text} ${met[key] ? 'met' : 'MISSED'}` : undefined);
console.log(
  `targets: ${[
    verdict('cpuPerMbWholeRequests', `CPU per MB, whole requests <= ${TARGET.cpuPerMbOverRaw}x raw`),
    verdict('instructionsPerMbWholeRequests', `instructions per MB, whole requests <= ${TARGET.cpuPerMbOverRaw}x raw`),
    verdict('addedP50', `added p50 <= +${TARGET.addedP50Ms} ms`),
    verdict('addedP99', `added p99 <= +${TARGET.addedP99Ms} ms`),
    verdict('throughput', 'throughput >= 80% (client-bound)'),
  ]
    .filter(Boolean)
    .join('; ')}`,
);
console.log(`wrote ${file}`);
