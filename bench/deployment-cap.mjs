// 500 SpeechStreams behind one key against a deployment that runs at most 50
// generations at once per account (the reference server in this process,
// tone engine, `maxConcurrentGenerations: 50`), in two cases:
//  - told: the client is given the cap (`maxConcurrency: 50`);
//  - learnt: it is not, and learns the cap from the deployment's 429s.
// For each: whether every stream completed, the most generations the server
// ran at once for the account (none beyond the cap), the 429s the server
// answered (every refused realtime upgrade counts one; a storm would be many
// per stream), and the time each stream waited from its first write to
// `ready` (its wait for a slot, plus connect and start: p50, p90, max).
// Loopback only; stops by itself. Options: --streams N (500) --cap N (50).
// Run `npm run build` first. Writes bench/out/deployment-cap.json.
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { createSpeechStream } from '../dist/speech.js';
import { deploymentBudget } from '../dist/budget.js';
import { fetchCapabilities, defaultModelOf, defaultVoice } from '../dist/discovery.js';
import { serviceConfigOf } from '../dist/service.js';
import { startServer } from '../dist/server/index.js';
import { argInt, machine, r, writeResults } from './_common.mjs';

const STREAMS = argInt('streams', 500);
const CAP = argInt('cap', 50);
const LATENCY_MS = argInt('latency-ms', 4);
const TEXT = (i) => `Stream ${i} has a short sentence to say. And a second one after it.`;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(told) {
  const server = await startServer({ engine: 'tone', maxConcurrentGenerations: CAP, faults: LATENCY_MS > 0 ? { latencyMs: LATENCY_MS } : undefined, accounts: [{ apiKey: 'sk-bench-cap', userId: 'bench', credits: 1e12, apiQuota: 1e12 }] });
  try {
    const config = serviceConfigOf(server, 'sk-bench-cap');
    const capabilities = await fetchCapabilities(config);
    const model = defaultModelOf(capabilities);
    const voiceId = await defaultVoice(config, model, undefined, capabilities);
    const options = { transport: 'realtime', format: 'pcm', capabilities, model, voiceId, ...(told && { maxConcurrency: CAP }) };
    const t0 = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: STREAMS }, async (_, i) => {
        const speech = await createSpeechStream(config, options);
        const started = performance.now();
        let readyMs;
        speech.once('ready', () => (readyMs = performance.now() - started));
        let bytes = 0;
        const sink = new Writable({
          write(chunk, _enc, cb) {
            bytes += chunk.length;
            cb();
          },
        });
        const done = new Promise((resolve) => {
          sink.once('finish', () => resolve({ ok: bytes > 0, readyMs, bytes }));
          speech.once('error', (err) => resolve({ ok: false, readyMs, bytes, error: err.code ?? err.message }));
        });
        speech.pipe(sink);
        speech.end(TEXT(i));
        return done;
      }),
    );
    const totalMs = performance.now() - t0;
    const stats = server.concurrency.stats();
    const budget = deploymentBudget(config.baseUrl, config.apiKey).stats();
    const waits = outcomes.map((o) => o.readyMs ?? NaN).filter(Number.isFinite).sort((a, b) => a - b);
    const errors = {};
    for (const o of outcomes) if (!o.ok) errors[o.error ?? 'no audio'] = (errors[o.error ?? 'no audio'] ?? 0) + 1;
    return {
      case: told ? 'told' : 'learnt',
      streams: STREAMS,
      cap: CAP,
      completed: outcomes.filter((o) => o.ok).length,
      errors,
      serverPeak: stats.peak,
      serverAdmitted: stats.admitted,
      refused429: stats.refused,
      refusedPerStream: r(stats.refused / STREAMS, 3),
      clientLearntLimit: budget.limit,
      clientPeak: budget.peak,
      waitToReadyMs: { p50: r(percentile(waits, 50), 1), p90: r(percentile(waits, 90), 1), max: r(waits[waits.length - 1] ?? NaN, 1) },
      totalMs: r(totalMs, 0),
    };
  } finally {
    await server.close();
  }
}

const results = [];
for (const told of [true, false]) {
  const res = await run(told);
  results.push(res);
  console.log(
    `${res.case.padEnd(6)}: ${res.completed}/${res.streams} completed, server peak ${res.serverPeak} (cap ${res.cap}), ${res.refused429} x 429 (${res.refusedPerStream} per stream), ` +
      `wait to ready p50 ${res.waitToReadyMs.p50} ms p90 ${res.waitToReadyMs.p90} ms max ${res.waitToReadyMs.max} ms, all in ${res.totalMs} ms` +
      (Object.keys(res.errors).length ? `, errors ${JSON.stringify(res.errors)}` : ''),
  );
}
const file = writeResults('deployment-cap', { bench: 'deployment-cap', machine: machine(), results });
console.log(`written to ${file}`);
const bad = results.filter((res) => res.completed !== res.streams || res.serverPeak > res.cap);
process.exit(bad.length ? 1 : 0);
