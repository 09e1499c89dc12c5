/**
 * Seeded chaos: random texts written in LLM-sized chunks, one
 * random fault from everything the reference server injects, transports
 * realtime and auto, formats pcm and wav. Every run must end byte-identical
 * to the fault-free run of the same text, or with a typed VoxpipeError; never
 * hang, never charge a realtime segment twice.
 *
 * Replay: VOXPIPE_CHAOS_SEED=<seed> (printed by every run); more runs:
 * VOXPIPE_CHAOS_RUNS=<n> (default 200).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VoxpipeError } from '../../src/errors.js';
import type { FaultPlan } from '../../src/server/faults.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream, type SpeechOptions } from '../../src/speech.js';
import { seededRandom } from '../protocol/frames.js';

const SEED = Number(process.env['VOXPIPE_CHAOS_SEED'] ?? 20_261_124);
const RUNS = Number(process.env['VOXPIPE_CHAOS_RUNS'] ?? 200);
const RUN_DEADLINE_MS = 15_000;

const WORDS = ['the', 'quick', 'answer', 'is', 'here', 'and', 'it', 'comes', 'in', 'parts', 'voice', 'stream', 'audio', 'model', 'token', 'agent', 'listens', 'then', 'speaks', 'again'];

function sentence(rand: () => number): string {
  const n = 3 + Math.floor(rand() * 9);
  const words = Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]!);
  const s = words.join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
}

function fault(rand: () => number): { name: string; plan: FaultPlan } {
  const after = 1 + Math.floor(rand() * 6);
  const kinds: (() => { name: string; plan: FaultPlan })[] = [
    () => ({ name: 'close 1012', plan: { realtimeClose: { afterAudioFrames: after, code: 1012 } } }),
    () => ({ name: 'close 1013', plan: { realtimeClose: { afterAudioFrames: after, code: 1013 } } }),
    () => ({ name: 'close 1011', plan: { realtimeClose: { afterAudioFrames: after, code: 1011 } } }),
    () => ({ name: 'drop', plan: { realtimeDrop: { afterAudioFrames: after } } }),
    () => ({ name: 'retryable error', plan: { realtimeError: { afterAudioFrames: after, retryable: true } } }),
    () => ({ name: 'engine failure', plan: { engineFailure: { afterChunks: Math.floor(rand() * 3) } } }),
    () => ({ name: 'latency', plan: { latencyMs: 1 + Math.floor(rand() * 5) } }),
  ];
  return kinds[Math.floor(rand() * kinds.length)]!();
}

/** A run may end in a typed error only when its fault cannot be recovered on its transport. */
function mayFail(transport: 'realtime' | 'auto', fault: string): boolean {
  return transport === 'realtime' && fault === 'engine failure';
}

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: 'sk-chaos', userId: 'chaos', credits: 1e12, apiQuota: 1e12 }] });
});
afterAll(() => server.close());

interface Outcome {
  audio: Buffer;
  error: unknown;
  requestId: string;
  hung: boolean;
}

async function speak(text: string, chunks: string[], options: SpeechOptions): Promise<Outcome> {
  const speech = await createSpeechStream(serviceConfigOf(server, 'sk-chaos'), { ...options, realtime: { backoff: { baseMs: 5, maxMs: 40 }, progressTimeoutMs: 3_000 } });
  const out: Buffer[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), RUN_DEADLINE_MS)));
  const work = (async () => {
    for (const c of chunks) speech.write(c);
    speech.end();
    for await (const c of speech) out.push(c as Buffer);
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
  const result = await Promise.race([work, deadline]);
  clearTimeout(timer);
  if (result === 'hung') speech.destroy();
  void text;
  return { audio: Buffer.concat(out), error: result === 'hung' ? undefined : result, requestId: speech.summary().requestId, hung: result === 'hung' };
}

/** Committed realtime charges of one request, by segment id. */
function chargesBySegment(requestId: string): Map<string, number> {
  const prefix = `rt:chaos:${requestId}:`;
  const counts = new Map<string, number>();
  for (const e of server.ctx.ledger.entriesOf('chaos')) {
    if (!e.refId.startsWith(prefix) || e.state === 'released') continue;
    const segment = e.refId.slice(prefix.length);
    counts.set(segment, (counts.get(segment) ?? 0) + 1);
  }
  return counts;
}

it(`chaos: ${RUNS} seeded runs (seed ${SEED}) end byte-exact or typed, never hang, never charge twice`, { timeout: 600_000 }, async () => {
  const tally = { completed: 0, byteExact: 0, typed: 0, doubleCharges: 0, hangs: 0, untyped: 0 };
  const failures: string[] = [];
  const typedBy = new Map<string, number>();
  const baselines = new Map<string, Buffer>();
  for (let i = 0; i < RUNS; i++) {
    const rand = seededRandom(SEED + i);
    const text = Array.from({ length: 2 + Math.floor(rand() * 3) }, () => sentence(rand)).join(' ');
    const chunks: string[] = [];
    for (let at = 0; at < text.length; ) {
      const n = 1 + Math.floor(rand() * 12);
      chunks.push(text.slice(at, at + n));
      at += n;
    }
    const format = rand() < 0.5 ? 'pcm' : 'wav';
    const transport = rand() < 0.5 ? 'realtime' : 'auto';
    const f = fault(rand);
    const label = `run ${i} (seed ${SEED + i}): ${transport} ${format}, ${f.name}`;
    const base = { format, transport, segmenter: { targetChars: 40, firstMinChars: 20 } } as const;

    const key = `${format}|${text}`;
    let expected = baselines.get(key);
    if (!expected) {
      const clean = await speak(text, [text], { ...base, transport: 'realtime' });
      expect(clean.error, `baseline of ${label}`).toBeUndefined();
      expected = clean.audio;
      baselines.set(key, expected);
    }

    server.faults.set(f.plan);
    const run = await speak(text, chunks, base);
    server.faults.clear();

    if (run.hung) {
      tally.hangs++;
      failures.push(`${label}: hung`);
      continue;
    }
    for (const [segment, n] of chargesBySegment(run.requestId)) {
      if (n > 1) {
        tally.doubleCharges++;
        failures.push(`${label}: segment ${segment} charged ${n} times`);
      }
    }
    if (run.error === undefined) {
      tally.completed++;
      if (run.audio.equals(expected)) tally.byteExact++;
      else failures.push(`${label}: completed with ${run.audio.length} bytes, expected ${expected.length} byte-identical`);
    } else if (run.error instanceof VoxpipeError && run.error.code !== '') {
      tally.typed++;
      const why = `${run.error.code} (${transport}, ${f.name})`;
      typedBy.set(why, (typedBy.get(why) ?? 0) + 1);
      // Every fault but one is recoverable: closes 1011/1012/1013, drops and
      // retryable errors resume, latency is only slow. A provider failure is
      // terminal for the realtime transport alone; `auto` fails over.
      if (!mayFail(transport, f.name)) failures.push(`${label}: ended with ${run.error.code} where the fault is recoverable`);
    } else {
      tally.untyped++;
      failures.push(`${label}: ended with an untyped ${String(run.error)}`);
    }
  }
  console.log(`chaos seed ${SEED}: ${RUNS} runs, completed ${tally.completed}, byte-exact ${tally.byteExact}, typed failures ${tally.typed}, double charges ${tally.doubleCharges}, hangs ${tally.hangs}, untyped ${tally.untyped}`);
  for (const [why, n] of typedBy) console.log(`  typed: ${n} x ${why}`);
  expect(failures).toEqual([]);
  expect(tally.completed + tally.typed).toBe(RUNS);
  // A floor, so a client that fails every run with a typed error cannot pass:
  // only realtime runs with a provider failure (about 1 in 14) may fail.
  expect(tally.byteExact).toBeGreaterThanOrEqual(Math.floor(RUNS * 0.8));
});
