// Load and soak: N concurrent reliable realtime streams held for
// a duration against the reference server (a child process) while it
// injects realtime faults at a steady rate (close 1012/1013, TCP drop,
// retryable provider error, in turn). Every stream's audio is compared with
// the fault-free audio of its text. Reports, per time bucket: streams
// completed, byte-exact share, typed failures, p50/p99 time to first audio,
// client and server RSS; and open file descriptors at the start and the end.
//   node bench/soak.mjs [--streams 1000] [--seconds 600] [--faults-per-minute 60] [--bucket-seconds 30]
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { argInt, BENCH_KEY, machine, r, ROOT, writeResults } from './_common.mjs';

const streams = argInt('streams', 1000);
const seconds = argInt('seconds', 600);
const faultsPerMinute = argInt('faults-per-minute', 60);
const bucketSeconds = argInt('bucket-seconds', 30);
const { createSpeechStream } = await import('../dist/index.js');

const child = spawn(process.execPath, [`${ROOT}/bench/_soak-server.mjs`, BENCH_KEY, String(faultsPerMinute)], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: child.stdout });
const nextLine = () => new Promise((resolve) => lines.once('line', (l) => resolve(JSON.parse(l))));
const listening = await nextLine();
const config = { apiKey: BENCH_KEY, baseUrl: listening.baseUrl, rootUrl: listening.rootUrl, wsUrl: listening.wsUrl, rtHttpUrl: listening.rtHttpUrl };
const serverStats = async () => {
  child.stdin.write('\n');
  return nextLine();
};
const fds = () => readdirSync('/proc/self/fd').length;

const TEXTS = [
  'Sure, here is a short answer.',
  'The weather today is mild. Expect light wind in the afternoon.',
  'Your order has shipped. It should arrive on Thursday, before noon.',
  'Let me check that for you. One moment, please. Here it is.',
  'Streaming speech starts as soon as the first clause is ready.',
];

// Fault-free audio of each text: the tone engine is deterministic, so any run without a fault is the reference.
const references = new Map();
const options = { format: 'pcm', transport: 'realtime', capabilities: null, realtime: { backoff: { baseMs: 100, maxMs: 2_000 } } };
const caps = await (await import('../dist/discovery.js')).fetchCapabilities(config);
const { defaultModelOf, defaultVoice } = await import('../dist/discovery.js');
options.model = defaultModelOf(caps);
options.voiceId = await defaultVoice(config, options.model, undefined, caps);

async function speak(text) {
  const speech = await createSpeechStream(config, options);
  speech.end(text);
  const parts = [];
  for await (const c of speech) parts.push(c);
  return { audio: Buffer.concat(parts), summary: speech.summary() };
}

// Idle HTTP keep-alive sockets (the discovery reads above) close after 5 s: count descriptors once they have.
await new Promise((resolve) => setTimeout(resolve, 6_000));
const startFds = fds();
const startServer = await serverStats();
const t0 = performance.now();
const buckets = [];
const bucketAt = (ms) => {
  const i = Math.floor(ms / 1000 / bucketSeconds);
  while (buckets.length <= i) buckets.push({ fromS: buckets.length * bucketSeconds, completed: 0, byteExact: 0, typed: {}, untyped: 0, ttfa: [], clientRssMiB: 0, serverRssMiB: 0 });
  return buckets[i];
};
const totals = { started: 0, completed: 0, byteExact: 0, mismatched: 0, typed: 0, untyped: 0, resumed: 0 };
let stopping = false;

async function worker(id) {
  let n = id;
  while (!stopping) {
    const text = TEXTS[n++ % TEXTS.length];
    totals.started++;
    try {
      let reference = references.get(text);
      const { audio, summary } = await speak(text);
      const b = bucketAt(performance.now() - t0);
      totals.completed++;
      b.completed++;
      totals.resumed += summary.resumed;
      if (summary.waterfall.ttfaMs !== undefined) b.ttfa.push(summary.waterfall.ttfaMs);
      if (!reference && summary.resumed === 0 && summary.failovers === 0) references.set(text, (reference = audio));
      if (!reference || audio.equals(reference)) {
        totals.byteExact++;
        b.byteExact++;
      } else totals.mismatched++;
    } catch (err) {
      const b = bucketAt(performance.now() - t0);
      if (err && typeof err.code === 'string') {
        totals.typed++;
        b.typed[err.code] = (b.typed[err.code] ?? 0) + 1;
      } else {
        totals.untyped++;
        b.untyped++;
      }
    }
  }
}

const sampler = setInterval(async () => {
  const b = bucketAt(performance.now() - t0);
  b.clientRssMiB = Math.max(b.clientRssMiB, r(process.memoryUsage().rss / 1048576, 1));
  const s = await serverStats();
  b.serverRssMiB = Math.max(b.serverRssMiB, r(s.rss / 1048576, 1));
}, 5_000);
const deadline = setTimeout(() => (stopping = true), seconds * 1000);
await Promise.all(Array.from({ length: streams }, (_, i) => worker(i)));
clearTimeout(deadline);
clearInterval(sampler);
await new Promise((resolve) => setTimeout(resolve, 6_000)); // sockets of the last streams close, HTTP keep-alive ones included (5 s)
const endServer = await serverStats();
const endFds = fds();

const pct = (values, q) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? r(s[Math.min(s.length - 1, Math.floor(q * s.length))], 1) : null;
};
const timeline = buckets.map((b) => ({ fromS: b.fromS, completed: b.completed, byteExact: b.byteExact, typed: b.typed, untyped: b.untyped, ttfaP50Ms: pct(b.ttfa, 0.5), ttfaP99Ms: pct(b.ttfa, 0.99), clientRssMiB: b.clientRssMiB, serverRssMiB: b.serverRssMiB }));
const results = {
  bench: 'soak',
  machine: machine(),
  params: { streams, seconds, faultsPerMinute, bucketSeconds },
  totals: { ...totals, byteExactShare: totals.completed ? r(totals.byteExact / totals.completed, 4) : null, faultsArmed: endServer.faultsArmed },
  fds: { clientStart: startFds, clientEnd: endFds, serverStart: startServer.fds, serverEnd: endServer.fds },
  timeline,
};
console.log(`soak: ${streams} concurrent streams for ${seconds} s, ${faultsPerMinute} faults/min (${endServer.faultsArmed} armed)`);
console.log(`completed ${totals.completed}, byte-exact ${totals.byteExact} (${(100 * (results.totals.byteExactShare ?? 0)).toFixed(2)} %), mismatched ${totals.mismatched}, typed failures ${totals.typed}, untyped ${totals.untyped}, resumes ${totals.resumed}`);
console.log('   from s | completed | p50 TTFA | p99 TTFA | client RSS | server RSS | typed');
for (const t of timeline) console.log(`${String(t.fromS).padStart(9)} | ${String(t.completed).padStart(9)} | ${String(t.ttfaP50Ms).padStart(6)} ms | ${String(t.ttfaP99Ms).padStart(6)} ms | ${String(t.clientRssMiB).padStart(6)} MiB | ${String(t.serverRssMiB).padStart(6)} MiB | ${JSON.stringify(t.typed)}`);
console.log(`fds: client ${startFds} -> ${endFds}, server ${startServer.fds} -> ${endServer.fds}`);
console.log(`wrote ${writeResults('soak', results)}`);
child.kill('SIGTERM');
