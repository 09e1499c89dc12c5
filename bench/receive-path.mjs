/**
 * The client's receive path for one `audio` frame, stage by stage,
 * against the raw client's baseline in the same run: the raw client (bench/
 * _raw-client.mjs) decodes a frame with one `@msgpack/msgpack` Decoder and
 * nothing else; voxpipe's client (Node `RealtimeConnection` and the browser
 * session alike) calls `readServerFrame` of src/protocol/wire.ts (no schema
 * library): the structural pre-scan (`inspectShape`), the decode, the
 * repeated-key check, then the tolerant reader (`readServerEvent`).
 *
 * Cases are sampled round-robin in batches (as bench/codec.mjs), so a change
 * of the machine's load hits them alike and the ratios hold.
 * `--before DIR` adds `readServerFrame` of another build of
 * src/protocol/wire.ts (e.g. dist/_before/protocol, copied from the previous
 * commit's build), measured in the same run.
 *
 * Run `npm run build` first.
 * Usage: node bench/receive-path.mjs [--before DIR [--before-label TEXT]]
 * Prints a table and writes bench/out/receive-path.json.
 */
import { Decoder, Encoder } from '@msgpack/msgpack';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspectShape } from '../dist/protocol/msgpack-shape.js';
import { readServerEvent } from '../dist/protocol/server-reader.js';
import { decodeMap, decodeMapFull, readServerFrame, readServerFrameCompact } from '../dist/protocol/wire.js';
import { decodeFlatMap } from '../dist/protocol/flat-frame.js';
import { LIMITS } from '../dist/protocol/limits.js';
import { machine, r, writeResults } from './_common.mjs';

const SIZES_KB = [4, 16, 32];
const WARMUP_OPS = 5_000;
const SAMPLES = 300;
const TARGET_BATCH_NS = 200_000;

const beforeAt = process.argv.indexOf('--before');
const labelAt = process.argv.indexOf('--before-label');
const beforeLabel = labelAt < 0 ? undefined : process.argv[labelAt + 1];
const before = beforeAt < 0 ? undefined : await import(pathToFileURL(resolve(process.argv[beforeAt + 1], 'wire.js')).href);

/** The audio event the reference server sends (its field set), with `bytes` of audio. */
function audioFrame(bytes) {
  const audio = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) audio[i] = (i * 31 + (i >> 7)) & 0xff;
  return new Encoder({ ignoreUndefined: true }).encode({
    event: 'audio',
    event_id: 'evt_01HZX3J5N8Q2',
    trace_id: 'trc_9f2c4a1b7e',
    timestamp: 1_763_000_000_123,
    in_reply_to: 'ev-4b9a0f3e-12',
    request_id: 'req_7c1e5d2a',
    session_id: 'ses_4b9a0f3e',
    segment_id: 'seg_000001',
    sequence: 42,
    audio,
    format: 'pcm',
    sample_rate: 24_000,
    channels: 1,
    bit_depth: 16,
  });
}

let sink = 0;
function consume(value) {
  sink ^= value === undefined || value === null ? 0 : typeof value === 'object' ? (value.kind?.length ?? value.values ?? 1) : 1;
}

function calibrate(fn) {
  let batch = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) consume(fn());
    const ns = Number(process.hrtime.bigint() - t0);
    if (ns >= TARGET_BATCH_NS || batch >= 1 << 20) return batch;
    batch *= 2;
  }
}

function measureAll(fns) {
  for (const fn of fns) for (let i = 0; i < WARMUP_OPS; i++) consume(fn());
  const batches = fns.map(calibrate);
  const perOp = fns.map(() => new Float64Array(SAMPLES));
  for (let s = 0; s < SAMPLES; s++) {
    for (let k = 0; k < fns.length; k++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < batches[k]; i++) consume(fns[k]());
      perOp[k][s] = Number(process.hrtime.bigint() - t0) / batches[k];
    }
  }
  return perOp.map((a) => {
    a.sort();
    return { p50: a[SAMPLES >> 1], min: a[0] };
  });
}

const rawDecoder = new Decoder();
const results = [];
for (const kb of SIZES_KB) {
  const frame = audioFrame(kb * 1024);
  const decoded = decodeMap(frame);
  const cases = {
    'raw client: @msgpack/msgpack decode': () => rawDecoder.decode(frame),
    'one pass (decodeFlatMap: checks and decodes together)': () => decodeFlatMap(frame, LIMITS.maxFrameBytes, LIMITS.maxFrameValues),
    'decodeMap (the one pass; other frames: the full path)': () => decodeMap(frame),
    'readServerEvent of a decoded map': () => readServerEvent(decoded),
    'client: readServerFrame (whole path)': () => readServerFrame(frame),
    'full path: pre-scan (inspectShape)': () => inspectShape(frame, LIMITS.maxDepth, LIMITS.maxFrameValues),
    'full path: decodeMapFull (pre-scan + decode + repeated-key check)': () => decodeMapFull(frame),
    'browser: readServerFrameCompact (the full path, for the bundle budget)': () => readServerFrameCompact(frame),
  };
  if (before) cases['client before: readServerFrame (--before build)'] = () => before.readServerFrame(frame);
  const names = Object.keys(cases);
  const figures = measureAll(Object.values(cases));
  const raw = figures[0].p50;
  const rows = names.map((name, k) => ({ case: name, p50Ns: r(figures[k].p50, 0), minNs: r(figures[k].min, 0), vsRaw: r(figures[k].p50 / raw, 2) }));
  results.push({ frameKiB: kb, frameBytes: frame.byteLength, rows });
  console.log(`\naudio frame ${kb} KiB (${frame.byteLength} bytes)`);
  console.table(rows);
}
const file = writeResults('receive-path', { when: new Date().toISOString(), machine: machine(), command: process.argv.slice(1).join(' ').replace(/^.*bench\//, 'bench/'), before: beforeLabel, results, sink });
console.log(`wrote ${file}`);
