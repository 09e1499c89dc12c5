// Reference server, realtime reliable mode: time from sending `flush` to the
// first `audio` frame of that segment, over a loopback WebSocket, for the
// `tone` engine and for warm `espeak` (when installed). One connection, one
// request, segments sent one after another (text, input_ack, flush, first
// audio, segment_completed), as a reliable client does.
// The server runs in its own process, as it does for a real client: in one
// process the client could not read the first frame until the server's
// event-loop turn (which goes on generating the segment) had ended.
// Targets: p50 < 5 ms with tone, < 20 ms with warm espeak.
// Run `npm run build` first; this imports the compiled code from dist/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { decodeServerEvent, encodeFrame, REALTIME_PATHS, SUBPROTOCOL, DEFAULT_MODEL } from '../dist/protocol/index.js';
import { espeakAvailable } from '../dist/server/engines/index.js';
import { PUBLIC_VOICES } from '../dist/server/catalog.js';
import { writeResults } from './_common.mjs';

const SEGMENTS = 200;
const WARM_UP_SEGMENTS = 20;
const API_KEY = 'sk-bench-server-flush';
const TARGET_P50_MS = { tone: 5, espeak: 20 };
// Sentence-sized segments, as the client's segmenter produces them.
const TEXTS = [
  'Hello there, how are you doing today?',
  'The quick brown fox jumps over the lazy dog.',
  'Realtime speech starts before the text has ended.',
  'Every segment is billed once, even when it is retried.',
];

/**
 * A minimal raw client. Every event is kept with its arrival time, and
 * `next(predicate)` takes the first unread match, so an event that arrives
 * in the same socket read as the one awaited is never lost.
 */
function openClient(wsUrl) {
  const ws = new WebSocket(`${wsUrl}${REALTIME_PATHS.live}`, [SUBPROTOCOL], { headers: { Authorization: `Bearer ${API_KEY}` }, perMessageDeflate: false });
  const inbox = [];
  let wake;
  ws.on('message', (data) => {
    const at = performance.now();
    const event = decodeServerEvent(data);
    if (event.event === 'error') console.error('server error:', event.code, event.message);
    // Audio payloads are not needed here; keep the inbox small.
    if (event.event === 'audio') delete event.audio;
    inbox.push({ event, at });
    wake?.();
  });
  const next = async (predicate) => {
    for (;;) {
      const i = inbox.findIndex((m) => predicate(m.event));
      if (i >= 0) return inbox.splice(0, i + 1).at(-1);
      await new Promise((resolve) => (wake = resolve));
    }
  };
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', async () => {
      await next((e) => e.event === 'authenticated');
      resolve({ ws, next, send: (e) => ws.send(encodeFrame(e)) });
    });
  });
}

/** Start the reference server in a child process; resolves with its URLs and a stop function. */
function startServerProcess(engine) {
  const serverModule = new URL('../dist/server/index.js', import.meta.url).href;
  const script = `
    const { startServer } = await import(${JSON.stringify(serverModule)});
    const server = await startServer({ engine: ${JSON.stringify(engine)}, accounts: [{ apiKey: ${JSON.stringify(API_KEY)}, userId: 'bench', apiQuota: 1_000_000_000 }] });
    process.stdout.write(JSON.stringify({ wsUrl: server.wsUrl, sampleRate: server.ctx.engine.sampleRate }) + '\\n');
    process.stdin.on('end', async () => { await server.close(); process.exit(0); });
    process.stdin.resume();
  `;
  // A file, not `--input-type=module -e`: worker threads inherit execArgv, and
  // the espeak worker's eval'd CommonJS source would then be read as ESM.
  const dir = mkdtempSync(join(os.tmpdir(), 'voxpipe-bench-'));
  const file = join(dir, 'server.mjs');
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      const info = JSON.parse(line);
      resolve({
        ...info,
        stop: () => new Promise((done) => {
          child.removeAllListeners('exit');
          child.once('exit', () => {
            rmSync(dir, { recursive: true, force: true });
            done();
          });
          child.stdin.end();
        }),
      });
    });
  });
}

async function benchEngine(engine) {
  const server = await startServerProcess(engine);
  try {
    const client = await openClient(server.wsUrl);
    const voice = PUBLIC_VOICES[0].voiceId;
    client.send({ event: 'start', mode: 'reliable', event_id: 'start', request_id: `bench-${engine}`, request: { voice_id: voice, model: DEFAULT_MODEL, format: 'pcm' } });
    await client.next((e) => e.event === 'ready');
    const histogram = createHistogram();
    const samples = [];
    let sequence = 0;
    for (let i = 0; i < WARM_UP_SEGMENTS + SEGMENTS; i++) {
      const text = TEXTS[i % TEXTS.length];
      client.send({ event: 'text', event_id: `t${i}`, sequence: ++sequence, text });
      await client.next((e) => e.event === 'input_ack');
      const segmentId = `s${i}`;
      const sentAt = performance.now();
      client.send({ event: 'flush', event_id: `f${i}`, segment_id: segmentId });
      const { at } = await client.next((e) => e.event === 'audio' && e.segment_id === segmentId);
      await client.next((e) => e.event === 'segment_completed' && e.segment_id === segmentId);
      if (i < WARM_UP_SEGMENTS) continue;
      const ms = at - sentAt;
      samples.push(ms);
      histogram.record(Math.max(1, Math.round(ms * 1e6)));
    }
    client.ws.terminate();
    const pct = (p) => Number((histogram.percentile(p) / 1e6).toFixed(3));
    const sorted = [...samples].sort((a, b) => a - b);
    const result = {
      engine,
      sampleRate: server.sampleRate,
      segments: SEGMENTS,
      p50Ms: pct(50),
      p90Ms: pct(90),
      p99Ms: pct(99),
      minMs: Number(sorted[0].toFixed(3)),
      maxMs: Number(sorted.at(-1).toFixed(3)),
      meanMs: Number((samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3)),
      targetP50Ms: TARGET_P50_MS[engine],
    };
    result.targetMet = result.p50Ms < result.targetP50Ms;
    return result;
  } finally {
    await server.stop();
  }
}

const results = { tone: await benchEngine('tone') };
if (await espeakAvailable()) results.espeak = await benchEngine('espeak');
else results.espeak = { skipped: 'optional package @echogarden/espeak-ng-emscripten is not installed' };

const report = {
  bench: 'server-flush',
  description: 'reliable mode: flush sent -> first audio frame received, loopback WebSocket, server in its own process, pcm, one segment at a time',
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model,
  // Other work on the machine skews the tail: keep the load next to the figures.
  loadAverage1m: Number(os.loadavg()[0].toFixed(2)),
  results,
};

for (const r of Object.values(results)) {
  if (r.skipped) {
    console.log(`espeak: skipped (${r.skipped})`);
    continue;
  }
  console.log(`${r.engine.padEnd(6)} flush -> first audio over ${r.segments} segments: p50 ${r.p50Ms} ms, p90 ${r.p90Ms} ms, p99 ${r.p99Ms} ms (min ${r.minMs}, max ${r.maxMs}); target p50 < ${r.targetP50Ms} ms: ${r.targetMet ? 'met' : 'NOT met'}`);
}
console.log(`wrote ${writeResults('server-flush', report)}`);
