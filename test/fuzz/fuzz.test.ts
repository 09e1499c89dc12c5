/**
 * Fuzzing, seeded with fast-check (VOXPIPE_FUZZ_SEED replays):
 * - 10,000 hostile frames into the reference server's realtime endpoint:
 *   random bytes, truncated MessagePack, deep nesting, huge strings, wrong
 *   types for every field, `__proto__`, overlong ids, text frames. The server
 *   never crashes, answers every refusal with an `error` event carrying one
 *   of the spec's codes, keeps its memory bounded, and a well-formed stream
 *   on another connection is unaffected.
 * - Rounds of hostile HTTP (three; `hostile-http.ts`): on every route,
 *   requests answered before their 3 MiB body is complete, from a client
 *   that keeps writing. Each client reads its whole answer and writes its
 *   whole body without EPIPE or reset; then eight 20 MiB uploads at once.
 *   Afterwards no connection is left open and the memory is where it
 *   started.
 * - 10,000 hostile frames into the client's reader: it never throws, and a
 *   frame it cannot use is `invalid_server_frame`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeMap, encodeFrame, readServerFrame } from '../../src/protocol/codec.js';
import { ErrorCode, REALTIME_PATHS, SUBPROTOCOL } from '../../src/protocol/constants.js';
import { PUBLIC_VOICES } from '../../src/server/catalog.js';
import { MAX_HELD_BODY_BYTES } from '../../src/server/http/router.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { BURST_UPLOAD_BYTES, failures, HOSTILE_BODY_BYTES, hostileCases, runCases, uploadBurst } from './hostile-http.js';

const SEED = Number(process.env['VOXPIPE_FUZZ_SEED'] ?? 424_242);
const FRAMES = Number(process.env['VOXPIPE_FUZZ_FRAMES'] ?? 10_000);
/** Rounds of hostile HTTP (`hostile-http.ts`) after the frames. */
const HTTP_ROUNDS = Number(process.env['VOXPIPE_FUZZ_HTTP_ROUNDS'] ?? 3);
/** Large uploads sent at once in each round. */
const UPLOADS_AT_ONCE = 8;
const KEY = 'sk-fuzz';
const VOICE = PUBLIC_VOICES[0]!.voiceId;
const SPEC_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

const EVENTS = ['auth', 'start', 'input', 'text', 'flush', 'stop', 'ping', 'pong', 'ready', 'nope', '__proto__', ''];
const FIELDS = ['event', 'event_id', 'request_id', 'mode', 'request', 'text', 'sequence', 'segment_id', 'commit', 'retry_failed', 'token', 'timestamp', '__proto__', 'constructor'];

/** Frames as bytes (binary) or strings (sent as text frames). */
function hostileFrames(): fc.Arbitrary<Uint8Array | string> {
  const anyValue = fc.oneof(fc.anything({ maxDepth: 3 }), fc.string({ minLength: 129, maxLength: 300 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
  const wrongTypes = fc.record({ event: fc.constantFrom(...EVENTS) }).chain((base) =>
    fc.dictionary(fc.constantFrom(...FIELDS), anyValue, { maxKeys: 6 }).map((extra) => encodeFrame({ ...extra, ...base })),
  );
  const validStart = encodeFrame({ event: 'start', event_id: 's1', mode: 'reliable', request_id: 'fuzz', request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' } });
  const truncated = fc.integer({ min: 1, max: validStart.length - 1 }).map((n) => validStart.subarray(0, n));
  const deep = fc.integer({ min: 17, max: 60 }).map((depth) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = { a: v };
    return encodeFrame({ event: 'ping', event_id: 'deep', nested: v });
  });
  const huge = fc.integer({ min: 2_001, max: 12_000 }).map((n) => encodeFrame({ event: 'text', event_id: 'h', sequence: 1, text: 'x'.repeat(n) }));
  const longIds = fc.string({ minLength: 129, maxLength: 400 }).map((id) => encodeFrame({ event: 'flush', event_id: id, segment_id: id }));
  const proto = fc.constant(Uint8Array.from([0x82, 0xa5, ...Buffer.from('event'), 0xa4, ...Buffer.from('ping'), 0xa9, ...Buffer.from('__proto__'), 0x81, 0xa1, 0x61, 0x01]));
  const text = fc.string({ maxLength: 200 });
  return fc.oneof(fc.uint8Array({ maxLength: 300 }), wrongTypes, truncated, deep, huge, longIds, proto, text);
}

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'fuzz', credits: 1e12, apiQuota: 1e12 }] });
});
afterAll(() => server.close());

/** Send `frames` on one connection; resolves with the error codes the server sent and how many frames went out before it closed. */
function blast(frames: (Uint8Array | string)[]): Promise<{ codes: string[]; sent: number; other: string[] }> {
  const ws = new WebSocket(`${server.wsUrl}${REALTIME_PATHS.live}`, SUBPROTOCOL, { headers: { authorization: `Bearer ${KEY}` } });
  const codes: string[] = [];
  const other: string[] = [];
  let sent = 0;
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        other.push('text frame from the server');
        return;
      }
      const event = decodeMap(data);
      if (event['event'] === 'error') codes.push(String(event['code']));
      if (event['event'] === 'authenticated') {
        for (const f of frames) {
          if (ws.readyState !== WebSocket.OPEN) break;
          ws.send(f, { binary: typeof f !== 'string' });
          sent++;
        }
        // Everything is answered before the server handles our close.
        if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      }
    });
    ws.on('close', () => resolve({ codes, sent, other }));
  });
}

it(`server: ${FRAMES} hostile frames (seed ${SEED}) get spec error codes, no crash, bounded memory, other streams unaffected`, { timeout: 300_000 }, async () => {
  const frames = fc.sample(hostileFrames(), { numRuns: FRAMES, seed: SEED });
  const config = serviceConfigOf(server, KEY);
  const speakOnce = async () => {
    const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime' });
    speech.end('A well-formed stream next to the fuzzing. It must not notice.');
    const chunks: Buffer[] = [];
    for await (const c of speech) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const reference = await speakOnce();
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;

  const codes = new Map<string, number>();
  const other: string[] = [];
  let sent = 0;
  let connections = 0;
  const neighbour = speakOnce();
  for (let at = 0; at < frames.length; ) {
    const batch = frames.slice(at, at + 200);
    const r = await blast(batch);
    connections++;
    // A connection the server closed (a terminal refusal) takes the rest of the batch to the next one.
    at += Math.max(1, r.sent);
    sent += r.sent;
    other.push(...r.other);
    for (const c of r.codes) codes.set(c, (codes.get(c) ?? 0) + 1);
  }
  const neighbourAudio = await neighbour;
  const rssAfter = process.memoryUsage().rss;

  console.log(
    `fuzz seed ${SEED}: ${sent} frames on ${connections} connections; error codes ${[...codes].map(([c, n]) => `${c} ${n}`).join(', ')}; RSS ${Math.round(rssBefore / 2 ** 20)} -> ${Math.round(rssAfter / 2 ** 20)} MiB`,
  );
  expect(sent).toBeGreaterThanOrEqual(FRAMES);
  expect(other).toEqual([]);
  expect([...codes.keys()].filter((c) => !SPEC_CODES.has(c))).toEqual([]);
  expect(neighbourAudio.equals(reference)).toBe(true);
  // Still serving, and memory did not run away (generous: the same process runs the client too).
  expect((await speakOnce()).equals(reference)).toBe(true);
  expect(rssAfter - rssBefore).toBeLessThan(256 * 2 ** 20);
});

/** A full collection now (`--expose-gc` turned on from inside: vitest's workers do not pass it). */
const collect: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** Open TCP sockets of this process (the server's and the clients'). */
const openSockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

it(`server: ${HTTP_ROUNDS} rounds of hostile HTTP (seed ${SEED}): every early answer read by a client still writing, on every route; memory and sockets where they started`, { timeout: 300_000 }, async () => {
  collect();
  const before = { ...process.memoryUsage(), sockets: openSockets() };
  const failed: string[] = [];
  let requests = 0;
  const statuses = new Map<number, number>();
  let peakRss = before.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 5);
  for (let round = 0; round < HTTP_ROUNDS; round++) {
    const cases = hostileCases(server, KEY, SEED + round);
    const results = [...(await runCases(server, cases)), ...(await runCases(server, uploadBurst(KEY, UPLOADS_AT_ONCE), UPLOADS_AT_ONCE))];
    requests += results.length;
    for (const r of results) statuses.set(r.outcome.status, (statuses.get(r.outcome.status) ?? 0) + 1);
    failed.push(...failures(results).map((f) => `round ${round + 1}: ${f}`));
  }
  clearInterval(sampler);
  // Every connection ends (none is left waiting on a body nobody reads); the frames' connections may end meanwhile too.
  for (let i = 0; i < 100 && openSockets() > before.sockets; i++) await new Promise((r) => setTimeout(r, 50));
  collect();
  await new Promise((r) => setTimeout(r, 100)); // backing stores are freed after the collection
  collect();
  const after = { ...process.memoryUsage(), sockets: openSockets() };
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  console.log(
    `hostile HTTP seed ${SEED}: ${requests} requests (of ${HOSTILE_BODY_BYTES / 2 ** 20} MiB; ${UPLOADS_AT_ONCE} uploads of ${BURST_UPLOAD_BYTES / 2 ** 20} MiB at once) in ${HTTP_ROUNDS} rounds; statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([st, n]) => `${st} x${n}`).join(', ')}; ${failed.length} failed; ` +
      `RSS ${mib(before.rss)} -> ${mib(after.rss)} MiB (peak ${mib(peakRss)}), heap ${mib(before.heapUsed)} -> ${mib(after.heapUsed)} MiB, buffers ${mib(before.arrayBuffers)} -> ${mib(after.arrayBuffers)} MiB, sockets ${before.sockets} -> ${after.sockets}`,
  );
  expect(failed.slice(0, 20)).toEqual([]);
  expect(after.sockets).toBeLessThanOrEqual(before.sockets);
  // Nothing of a body outlives its answer. RSS may keep what the allocator took at the peak, and the peak is
  // bounded: the bodies held at once (MAX_HELD_BODY_BYTES) and the copies a multipart parse makes of them.
  expect(after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)).toBeLessThan(16 * 2 ** 20);
  expect(peakRss - before.rss).toBeLessThan(3 * MAX_HELD_BODY_BYTES);
  // Still serving.
  expect((await fetch(`${server.baseUrl}/profile`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
});

it(`client reader: ${FRAMES} hostile frames (seed ${SEED}) never throw; unusable ones are invalid_server_frame`, () => {
  const serverish = fc.oneof(
    hostileFrames().filter((f): f is Uint8Array => typeof f !== 'string'),
    fc
      .record({ event: fc.constantFrom('audio', 'ready', 'input_ack', 'segment_completed', 'finish', 'error', 'request_status', 'warning', 'x_unknown') })
      .chain((base) => fc.dictionary(fc.constantFrom('segment_id', 'sequence', 'audio', 'format', 'code', 'reason', 'state', 'units', 'quota', 'retryable'), fc.anything({ maxDepth: 2 }), { maxKeys: 6 }).map((extra) => encodeFrame({ ...extra, ...base }))),
  );
  const kinds = { event: 0, skip: 0, unusable: 0 };
  fc.assert(
    fc.property(serverish, (bytes) => {
      const read = readServerFrame(bytes);
      kinds[read.kind]++;
      if (read.kind === 'unusable') expect(read.error.code).toBe('invalid_server_frame');
    }),
    { numRuns: FRAMES, seed: SEED },
  );
  console.log(`client reader fuzz seed ${SEED}: ${FRAMES} frames; ${kinds.event} events, ${kinds.skip} skipped, ${kinds.unusable} unusable`);
});
