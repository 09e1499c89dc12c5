/**
 * Encode and decode cost of an `audio` server event carrying 4, 16 and 32 KB
 * of audio, on the path the client really runs: `readServerFrame`
 * (protocol/wire.ts: size check, bounded pre-scan with strict UTF-8,
 * `@msgpack/msgpack` decode, duplicate-key count) then `readServerEvent`
 * (protocol/server-reader.ts, the tolerant reader; a canonical audio frame
 * goes through without a copy). Beside it: its two halves, and raw
 * `@msgpack/msgpack`. The strict zod schemas (`parseServerEvent`) are not
 * measured: only the server's tests and other readers run them.
 *
 * With `npm install --no-save msgpackr` (not a dependency: its native
 * helper's platform packages are not all on the registry this project
 * installs from, which breaks `npm ci`) it also compares msgpackr (default
 * `pack`/`unpack`, `new Packr({ useRecords: false })`, and `new Packr()`
 * whose records are not plain MessagePack), checks whether its output is
 * standard MessagePack and round-trips byte buffers exactly; without it those
 * rows are left out and the file says so.
 *
 * Run `npm run build` first. Usage: node bench/codec.mjs
 * Prints a table and writes bench/out/codec.json.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { Decoder, Encoder, decode as mpDecode, encode as mpEncode } from '@msgpack/msgpack';
import { LIMITS, decodeMap, encodeFrame, readServerFrame } from '../dist/protocol/index.js';
import { inspectShape } from '../dist/protocol/msgpack-shape.js';
import { readServerEvent } from '../dist/protocol/server-reader.js';
import { resultPath } from './_common.mjs';

let msgpackr;
try {
  msgpackr = await import('msgpackr');
} catch {
  console.error('codec bench: msgpackr is not installed (npm install --no-save msgpackr): its rows and compatibility checks are left out.');
}

const SIZES_KB = [4, 16, 32];
const WARMUP_OPS = 5_000;
const SAMPLES = 400; // timed batches per case
const TARGET_BATCH_NS = 200_000; // 0.2 ms per batch, so hrtime overhead is < 0.1 %

/** A realistic audio event with `bytes` of PCM-like audio. */
function audioEvent(bytes) {
  const audio = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) audio[i] = (i * 31 + (i >> 7)) & 0xff;
  return {
    event: 'audio',
    event_id: 'evt_01HZX3J5N8Q2',
    trace_id: 'trc_9f2c4a1b7e',
    timestamp: 1_763_000_000_123,
    request_id: 'req_7c1e5d2a',
    session_id: 'ses_4b9a0f3e',
    segment_id: 'seg_000001',
    sequence: 42,
    audio,
    format: 'pcm',
    sample_rate: 24_000,
    channels: 1,
    bit_depth: 16,
  };
}

let sink = 0; // consumed by every op so the JIT cannot drop the work
function consume(value) {
  sink ^= value === undefined || value === null ? 0 : typeof value === 'object' ? (value.length ?? 1) : 1;
}

/** Ops per batch so that one batch of `fn` lasts about TARGET_BATCH_NS. */
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

/**
 * ns/op of every case: p50 and min over batches, mean over all timed ops
 * (min is the least disturbed figure on a busy machine). Cases
 * are sampled round-robin (one batch each per round), so a change in the
 * machine's background load hits every case alike and the ratios hold.
 */
function measureAll(fns) {
  for (const fn of fns) for (let i = 0; i < WARMUP_OPS; i++) consume(fn());
  const batches = fns.map(calibrate);
  const perOp = fns.map(() => new Float64Array(SAMPLES));
  const totalNs = fns.map(() => 0);
  for (let s = 0; s < SAMPLES; s++) {
    for (let k = 0; k < fns.length; k++) {
      const fn = fns[k];
      const batch = batches[k];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < batch; i++) consume(fn());
      const ns = Number(process.hrtime.bigint() - t0);
      totalNs[k] += ns;
      perOp[k][s] = ns / batch;
    }
  }
  return fns.map((_, k) => {
    perOp[k].sort();
    return { p50: perOp[k][SAMPLES >> 1], mean: totalNs[k] / (SAMPLES * batches[k]), min: perOp[k][0], ops: SAMPLES * batches[k] };
  });
}

const sameBytes = (a, b) => a.byteLength === b.byteLength && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;

/** Is msgpackr's output plain MessagePack, and do byte buffers come back exact? */
function checkCompatibility() {
  const { Packr, pack: mrPack } = msgpackr;
  const event = audioEvent(4096);
  const plain = new Packr({ useRecords: false });
  const plainNumbers = new Packr({ useRecords: false, int64AsType: 'number' });
  const records = new Packr();
  const checks = {};

  // 1. Does a standard decoder (the client's) read what msgpackr writes?
  const readsAsStandard = (bytes) => {
    const read = readServerFrame(bytes);
    if (read.kind !== 'event') return false;
    const decoded = read.event;
    return sameBytes(decoded.audio, event.audio) && decoded.sequence === event.sequence && decoded.timestamp === event.timestamp;
  };
  checks.defaultPackIsStandard = readsAsStandard(mrPack(event));
  checks.packrNoRecordsIsStandard = readsAsStandard(plain.pack(event));
  checks.packrDefaultIsStandard = readsAsStandard(records.pack(event));
  checks.packrDefaultFirstBytes = Buffer.from(records.pack(event).subarray(0, 4)).toString('hex');
  // Valid but not minimal: map16 for small maps, float64 for integers above 2^32.
  checks.packrNoRecordsSameBytesAsMsgpackMsgpack = sameBytes(plain.pack(event), mpEncode(event));

  // 2. Does msgpackr read what a standard encoder (ours) writes? uint64 (a ms timestamp) comes back as BigInt by default.
  const ours = encodeFrame(event);
  const back = plain.unpack(ours);
  checks.msgpackrReadsOurFramesByDefault = sameBytes(back.audio, event.audio) && back.timestamp === event.timestamp;
  checks.msgpackrDefaultTimestampType = typeof back.timestamp;
  const backNumbers = plainNumbers.unpack(ours);
  checks.msgpackrReadsOurFramesWithInt64AsNumber = sameBytes(backNumbers.audio, event.audio) && backNumbers.timestamp === event.timestamp;

  // 3. Byte buffers round-trip exactly (Uint8Array, Buffer, a subarray view)?
  const bufEvent = { ...event, audio: Buffer.from(event.audio) };
  const view = new Uint8Array(256).map((_, i) => i).subarray(10, 30);
  const roundTrip = (pack, unpack, value) => {
    const out = unpack(pack({ a: value })).a;
    return { exact: sameBytes(out, value), decodedAs: out.constructor.name };
  };
  checks.msgpackrUint8ArrayRoundTrip = roundTrip((v) => plain.pack(v), (b) => plain.unpack(b), event.audio);
  checks.msgpackrBufferRoundTrip = roundTrip((v) => plain.pack(v), (b) => plain.unpack(b), bufEvent.audio);
  checks.msgpackrSubarrayRoundTrip = roundTrip((v) => plain.pack(v), (b) => plain.unpack(b), view);
  checks.msgpackMsgpackUint8ArrayRoundTrip = roundTrip(encodeFrame, mpDecode, event.audio);
  checks.msgpackMsgpackBufferRoundTrip = roundTrip(encodeFrame, mpDecode, bufEvent.audio);
  checks.msgpackMsgpackSubarrayRoundTrip = roundTrip(encodeFrame, mpDecode, view);

  // 4. Other typed arrays (PCM as Int16Array): msgpackr copies element values, not bytes,
  //    into a bin of byteLength (the rest is stale buffer memory); @msgpack/msgpack writes the bytes.
  const pcm16 = new Int16Array([1, -2, 32767, -32768]);
  const pcm16Bytes = new Uint8Array(pcm16.buffer);
  checks.msgpackrInt16Array = roundTrip((v) => plain.pack(v), (b) => plain.unpack(b), pcm16);
  checks.msgpackrInt16Array.exact = sameBytes(plain.unpack(plain.pack({ a: pcm16 })).a, pcm16Bytes);
  checks.msgpackMsgpackInt16Array = roundTrip(mpEncode, mpDecode, pcm16);
  checks.msgpackMsgpackInt16Array.exact = sameBytes(mpDecode(mpEncode({ a: pcm16 })).a, pcm16Bytes);

  // 5. What our wrapper adds that msgpackr alone does not do.
  const badUtf8 = Uint8Array.from([0x81, 0xa1, 0x61, 0xa2, 0xc3, 0x28]);
  try {
    checks.msgpackrInvalidUtf8 = `accepted as ${JSON.stringify(plain.unpack(badUtf8).a)}`;
  } catch (err) {
    checks.msgpackrInvalidUtf8 = `rejected: ${err.message}`;
  }
  const protoKey = Uint8Array.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x81, 0xa1, 0x78, 0x01]);
  checks.msgpackrProtoKey = `decoded with keys ${JSON.stringify(Object.keys(plain.unpack(protoKey)))}`;
  return checks;
}

const CLIENT = 'ours readServerFrame (scan+decode+reader: the client)';
const DECODE_MAP = 'ours decodeMap (scan+decode, no reader)';
const READER = 'ours readServerEvent (reader on a decoded map)';
const RAW_DECODE = '@msgpack/msgpack Decoder.decode (no validation)';
const OUR_ENCODE = 'ours encodeFrame (@msgpack/msgpack)';
const SWAP = 'msgpackr unpack + our scan + reader (a swap)';

/** The measured cases for one event: ours and raw @msgpack/msgpack, then msgpackr's when it is installed. */
function casesFor(event) {
  const rawDecoder = new Decoder();
  const rawEncoder = new Encoder();
  const ours = encodeFrame(event);
  const decoded = decodeMap(ours);
  const cases = [
    ['encode', OUR_ENCODE, () => encodeFrame(event)],
    ['encode', '@msgpack/msgpack Encoder.encode', () => rawEncoder.encode(event)],
    ['decode', CLIENT, () => readServerFrame(ours)],
    ['decode', DECODE_MAP, () => decodeMap(ours)],
    ['decode', READER, () => readServerEvent(decoded)],
    ['decode', RAW_DECODE, () => rawDecoder.decode(ours)],
  ];
  if (!msgpackr) return { ours, cases };
  const { Packr, pack: mrPack, unpack: mrUnpack } = msgpackr;
  const plain = new Packr({ useRecords: false });
  const records = new Packr();
  const fromPlain = plain.pack(event);
  const fromDefault = mrPack(event);
  const fromRecords = records.pack(event);
  cases.push(
    ['encode', 'msgpackr pack (default, no records)', () => mrPack(event)],
    ['encode', 'msgpackr Packr({useRecords:false}).pack', () => plain.pack(event)],
    ['encode', 'msgpackr new Packr().pack (records)', () => records.pack(event)],
    ['decode', 'msgpackr unpack (default)', () => mrUnpack(fromDefault)],
    ['decode', 'msgpackr Packr({useRecords:false}).unpack', () => plain.unpack(fromPlain)],
    ['decode', 'msgpackr new Packr().unpack (records)', () => records.unpack(fromRecords)],
    [
      'decode',
      SWAP,
      () => {
        const shape = inspectShape(fromPlain, LIMITS.maxDepth, LIMITS.maxFrameValues);
        if (shape.problem !== null) throw new Error(shape.problem);
        return readServerEvent(plain.unpack(fromPlain));
      },
    ],
  );
  return { ours, cases };
}

/** Whether msgpackr would be worth a swap: speed ratios and the compatibility checks. */
function msgpackrVerdict(p50, c) {
  const ratios = SIZES_KB.map((kb) => ({
    audioKB: kb,
    encodeMsgpackrOverOurs: +(p50('encode', 'msgpackr Packr({useRecords:false}).pack', kb) / p50('encode', OUR_ENCODE, kb)).toFixed(2),
    rawDecodeMsgpackrOverMsgpackMsgpack: +(p50('decode', 'msgpackr Packr({useRecords:false}).unpack', kb) / p50('decode', RAW_DECODE, kb)).toFixed(2),
    fullDecodeSwapOverOurs: +(p50('decode', SWAP, kb) / p50('decode', CLIENT, kb)).toFixed(2),
  }));
  const encodeFaster = ratios.every((r) => r.encodeMsgpackrOverOurs < 1) ? 'msgpackr' : ratios.every((r) => r.encodeMsgpackrOverOurs > 1) ? '@msgpack/msgpack' : 'mixed';
  const decodeFaster = ratios.every((r) => r.rawDecodeMsgpackrOverMsgpackMsgpack < 1) ? 'msgpackr' : ratios.every((r) => r.rawDecodeMsgpackrOverMsgpackMsgpack > 1) ? '@msgpack/msgpack' : 'mixed';
  const failures = [];
  if (!c.packrNoRecordsIsStandard) failures.push('useRecords:false output is not read by a standard decoder');
  if (!c.packrDefaultIsStandard) failures.push('new Packr() (records, the class default) writes non-standard record extensions');
  if (!c.msgpackrReadsOurFramesByDefault) failures.push(`reads standard uint64 as ${c.msgpackrDefaultTimestampType} unless int64AsType:'number'`);
  for (const key of ['msgpackrUint8ArrayRoundTrip', 'msgpackrBufferRoundTrip', 'msgpackrSubarrayRoundTrip', 'msgpackrInt16Array']) {
    if (!c[key].exact) failures.push(`${key.replace('msgpackr', '').replace('RoundTrip', '')} bytes do not round-trip exactly`);
  }
  if (c.msgpackrInvalidUtf8.startsWith('accepted')) failures.push('accepts invalid UTF-8 silently (U+FFFD)');
  const bytesExact = c.msgpackrUint8ArrayRoundTrip.exact && c.msgpackrBufferRoundTrip.exact && c.msgpackrSubarrayRoundTrip.exact;
  const standardWhenConfigured = c.packrNoRecordsIsStandard && c.msgpackrReadsOurFramesWithInt64AsNumber;
  const qualifies = standardWhenConfigured && bytesExact && c.msgpackrInt16Array.exact;
  const worthIt = ratios.every((r) => r.fullDecodeSwapOverOurs < 0.8 && r.encodeMsgpackrOverOurs < 0.8);
  const keep = qualifies && worthIt ? 'msgpackr' : '@msgpack/msgpack';
  const list = (key) => ratios.map((r) => r[key]).join(' / ');
  const summary =
    `encode: ${encodeFaster} faster (msgpackr / ours p50 = ${list('encodeMsgpackrOverOurs')} at ${SIZES_KB.join('/')} KB); ` +
    `raw decode: ${decodeFaster} faster (msgpackr / @msgpack/msgpack p50 = ${list('rawDecodeMsgpackrOverMsgpackMsgpack')}); ` +
    `msgpackr + our scan + reader / the client's decode = ${list('fullDecodeSwapOverOurs')} (the swap skips our strict UTF-8 and duplicate-key checks). ` +
    `msgpackr ${qualifies ? 'qualifies' : 'does not qualify'}: standard with useRecords:false and int64AsType:'number' ${standardWhenConfigured}, ` +
    `Uint8Array/Buffer/subarray exact ${bytesExact}, Int16Array exact ${c.msgpackrInt16Array.exact}` +
    `${failures.length ? ` (problems: ${failures.join('; ')})` : ''}. Keep ${keep}.`;
  return { encodeFaster, decodeFaster, ratios, msgpackrStandardWhenConfigured: standardWhenConfigured, msgpackrUint8ArrayAndBufferExact: bytesExact, msgpackrQualifies: qualifies, msgpackrProblems: failures, keep, summary };
}

function main() {
  const compatibility = msgpackr ? checkCompatibility() : 'skipped: msgpackr is not installed';
  const rows = [];
  for (const kb of SIZES_KB) {
    const { ours, cases } = casesFor(audioEvent(kb * 1024));
    // The client must read the frame as the audio event it is, or the figures are of something else.
    const read = readServerFrame(ours);
    if (read.kind !== 'event' || read.event.event !== 'audio' || read.event.audio.byteLength !== kb * 1024) throw new Error(`the client did not read the ${kb} KB audio frame: ${read.kind}`);
    const results = measureAll(cases.map(([, , fn]) => fn));
    cases.forEach(([op, name], k) => {
      const m = results[k];
      rows.push({ op, codec: name, audioKB: kb, frameBytes: ours.length, p50Ns: Math.round(m.p50), meanNs: Math.round(m.mean), minNs: Math.round(m.min), ops: m.ops });
    });
  }

  console.log(`codec bench: audio event, node ${process.version}, ${SAMPLES} round-robin batches of ~${TARGET_BATCH_NS / 1000} us per case after ${WARMUP_OPS} warm-up ops; load average ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPUs`);
  console.log('op      KB  codec                                                   p50 ns/op  mean ns/op  min ns/op');
  for (const r of rows) {
    console.log(`${r.op.padEnd(7)} ${String(r.audioKB).padStart(2)}  ${r.codec.padEnd(55)} ${String(r.p50Ns).padStart(9)}  ${String(r.meanNs).padStart(10)}  ${String(r.minNs).padStart(9)}`);
  }
  if (msgpackr) console.log('\ncompatibility:', JSON.stringify(compatibility, null, 2));

  const p50 = (op, codec, kb) => rows.find((r) => r.op === op && r.codec === codec && r.audioKB === kb).p50Ns;
  const client = SIZES_KB.map((kb) => ({
    audioKB: kb,
    clientDecodeP50Ns: p50('decode', CLIENT, kb),
    decodeMapP50Ns: p50('decode', DECODE_MAP, kb),
    readerP50Ns: p50('decode', READER, kb),
    clientOverRawDecode: +(p50('decode', CLIENT, kb) / p50('decode', RAW_DECODE, kb)).toFixed(2),
  }));
  const verdict = {
    client,
    summary:
      `the client's decode of an audio frame (readServerFrame) p50 ${client.map((c) => `${c.clientDecodeP50Ns} ns`).join(' / ')} at ${SIZES_KB.join('/')} KB, ` +
      `${client.map((c) => c.clientOverRawDecode).join(' / ')}x a bare @msgpack/msgpack decode; the tolerant reader's share ${client.map((c) => `${c.readerP50Ns} ns`).join(' / ')}.`,
    msgpackr: msgpackr ? msgpackrVerdict(p50, compatibility) : 'skipped: msgpackr is not installed',
  };
  console.log('\nverdict:', verdict.summary);
  if (msgpackr) console.log('msgpackr:', verdict.msgpackr.summary);

  const out = resultPath('codec.json');
  writeFileSync(
    out,
    `${JSON.stringify({ bench: 'codec', node: process.version, cpus: os.cpus().length, loadAverage1m: +os.loadavg()[0].toFixed(2), date: new Date().toISOString(), warmupOps: WARMUP_OPS, samples: SAMPLES, unit: 'ns/op', rows, compatibility, verdict }, null, 2)}\n`,
  );
  console.log(`\nwrote ${out} (sink ${sink & 1})`);
}

main();
