// Time to first audio of a turn, cold connection vs prewarmed pool:
// the same `voxpipe serve --engine tone` child, the same run, alternating
// cold and pooled turns. A turn is measured from "the agent has text to say"
// (createSpeechStream called) to the first audio byte, so the cold figure
// includes connect + authenticate + start, the pooled one only start.
// Loopback has no network to save, so the realtime socket goes through a
// proxy that delays every chunk by half of --rtt-ms each way (default 40 ms
// round trip, a nearby cloud region); --rtt-ms 0 measures plain loopback.
//   node bench/pool.mjs [--turns 40] [--rtt-ms 40]
import { createConnection, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { argInt, machine, r, startToneBench, writeResults } from './_common.mjs';

/** A TCP proxy to `port` that delays each chunk by `oneWayMs` in both directions, in order. */
async function delayProxy(port, oneWayMs) {
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port });
    const pipe = (from, to) => {
      from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), oneWayMs));
      from.on('end', () => setTimeout(() => to.end(), oneWayMs));
      from.on('error', () => to.destroy());
    };
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => { server.close(resolve); server.closeAllConnections?.(); }) };
}

const { createSpeechPool, createSpeechStream } = await import('../dist/index.js');
const turns = argInt('turns', 40);
const rttMs = argInt('rtt-ms', 40);
const { server, config: direct, model, request } = await startToneBench();
const proxy = await delayProxy(Number(new URL(direct.wsUrl).port), rttMs / 2);
// Only the realtime socket crosses the delayed link; discovery is done once, up front.
const config = { ...direct, wsUrl: `ws://127.0.0.1:${proxy.port}` };
const options = { format: 'pcm', transport: 'realtime', model: model.id, voiceId: request.voice_id, capabilities: null };

async function turn(make) {
  const t0 = performance.now();
  const speech = await make();
  speech.end('Sure, here is the answer.');
  let first;
  for await (const _ of speech) first ??= performance.now() - t0;
  return first;
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50Ms: r(at(0.5), 2), p90Ms: r(at(0.9), 2), p99Ms: r(at(0.99), 2), minMs: r(sorted[0], 2) };
}

const pool = createSpeechPool(config, { ...options, spare: 1 });
const cold = [];
const pooled = [];
try {
  // Warm up both paths once (JIT, server caches).
  await turn(() => createSpeechStream(config, options));
  await pool.ready();
  await turn(() => pool.createSpeechStream());
  for (let i = 0; i < turns; i++) {
    cold.push(await turn(() => createSpeechStream(config, options)));
    await pool.ready();
    pooled.push(await turn(() => pool.createSpeechStream()));
  }
} finally {
  pool.close();
  await proxy.close();
  await server.close();
}

const results = { bench: 'pool', turns, rttMs, cold: stats(cold), pooled: stats(pooled), poolStats: pool.stats, machine: machine() };
console.log(`time to first audio over ${turns} turns (tone engine, ${rttMs} ms round trip on the realtime socket):`);
console.log(`  cold connection  p50 ${results.cold.p50Ms} ms  p99 ${results.cold.p99Ms} ms`);
console.log(`  pooled           p50 ${results.pooled.p50Ms} ms  p99 ${results.pooled.p99Ms} ms`);
console.log(`wrote ${writeResults('pool', results)}`);
