/**
 * The reference server on port 0 with a fault that makes it
 * quiet or unusable where the client needs it (src/server/faults.ts). Each
 * case ends within its documented default budget (RECOVERY_DEFAULTS, with
 * 2 s of slack) with recovery byte-exact to a fault-free run, or a typed
 * error; under `auto`, failover carries the rest.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/errors.js';
import { PROGRESS_SLICES, RECOVERY_DEFAULTS } from '../../src/realtime/budgets.js';
import { connect } from '../../src/realtime/connection.js';
import type { ReliableSession } from '../../src/realtime/reliable/session.js';
import type { ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { API_KEY, run, SEGMENTS, session, startTestServer, type RunResult } from '../realtime/fixtures.js';

/** Slack over a budget for the resume itself and a loaded machine. */
const SLACK_MS = 2_000;
const DETECT = (budgetMs: number) => budgetMs * (1 + 1 / PROGRESS_SLICES);

let server: ReferenceServer;
let reference: Buffer;
/** How long a fault-free run takes here: each bound is this plus the budget plus slack. */
let cleanMs: number;

beforeAll(async () => {
  server = await startTestServer();
  const started = performance.now();
  reference = (await run(session(server))).audio;
  cleanMs = performance.now() - started;
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.faults.clear();
});

interface Timed {
  result?: RunResult;
  error?: unknown;
  ms: number;
  retryCodes: string[];
}

/** Run `s` to the end, timed, counting the errors of its retries. */
async function timed(s: ReliableSession): Promise<Timed> {
  const retryCodes: string[] = [];
  s.on('retry', (r) => retryCodes.push(r.error.code));
  const started = performance.now();
  const result = await run(s);
  return { result, ms: performance.now() - started, retryCodes };
}

/** Run `s` to its failure, timed (every send() is rejected too, and awaited here). */
async function timedFailure(s: ReliableSession): Promise<Timed> {
  const started = performance.now();
  await s.open();
  const sends = SEGMENTS.map((seg) => s.send(seg).catch((e: unknown) => e));
  const error = await s.end().then(
    () => undefined,
    (e: unknown) => e,
  );
  await Promise.all(sends);
  return { error, ms: performance.now() - started, retryCodes: [] };
}

function expectRecovered(out: Timed): RunResult {
  expect(out.error).toBeUndefined();
  const r = out.result!;
  expect(r.audio.length).toBe(reference.length);
  expect(r.audio.equals(reference)).toBe(true);
  expect(r.summary.segments.map((x) => x.segmentId)).toEqual(SEGMENTS.map((x) => x.segmentId));
  expect(r.summary.retries).toBeGreaterThan(0);
  return r;
}

describe('a quiet server is detected within its budget and resumed', () => {
  it('segment_completed withheld while pings are answered: resumed within progressTimeoutMs (5 s), byte-exact', async () => {
    server.faults.set({ withholdSegmentCompleted: {} });
    let pongs = 0;
    const s = session(server, {
      keepAliveMs: 200,
      connectionSource: (options) => connect({ ...options, onEvent: (e) => (e.event === 'pong' && pongs++, options.onEvent(e)) }),
    });
    const out = await timed(s);
    expectRecovered(out);
    expect(out.retryCodes).toEqual(['timeout']);
    // The server answered pings all along; they did not count as progress.
    expect(pongs).toBeGreaterThan(3);
    expect(out.ms).toBeLessThan(cleanMs + DETECT(RECOVERY_DEFAULTS.progressTimeoutMs) + SLACK_MS);
  });

  it('no finish after stop: settled by the status route within finishTimeoutMs (2 s), byte-exact', async () => {
    server.faults.set({ noFinishAfterStop: {} });
    const out = await timed(session(server));
    const r = expectRecovered(out);
    expect(out.retryCodes).toEqual(['timeout']);
    expect(r.summary.statusReads).toBeGreaterThan(0);
    expect(out.ms).toBeLessThan(cleanMs + DETECT(RECOVERY_DEFAULTS.finishTimeoutMs) + SLACK_MS);
  });
});

describe('a frame the client needs but cannot use ends the attempt at once', () => {
  it.each([
    ['an input_ack for a sequence never sent', { bogusAckSequence: {} }],
    ['a segment_completed naming a segment that matches nothing', { unknownCompletedSegmentId: {} }],
  ])('%s: resumed at once, byte-exact', async (_name, fault) => {
    server.faults.set(fault);
    const out = await timed(session(server));
    const r = expectRecovered(out);
    expect(out.retryCodes).toEqual(['invalid_server_frame']);
    expect(r.summary.statusReads).toBeGreaterThan(0);
    // No deadline waited for: well under the smallest budget.
    expect(out.ms).toBeLessThan(cleanMs + SLACK_MS);
  });
});

describe('the status route never answers', () => {
  it('transport realtime: a TimeoutError naming the route within statusTimeoutMs (3 s)', async () => {
    server.faults.set({ bogusAckSequence: {}, statusRouteHangs: { times: 100 } });
    const out = await timedFailure(session(server));
    expect(out.error).toBeInstanceOf(TimeoutError);
    expect((out.error as Error).message).toContain(`the request-status route did not answer within ${RECOVERY_DEFAULTS.statusTimeoutMs} ms`);
    expect(out.ms).toBeLessThan(cleanMs + RECOVERY_DEFAULTS.statusTimeoutMs + SLACK_MS);
  });

  it('transport auto: fails over to HTTP within statusTimeoutMs, byte-exact', async () => {
    const text = SEGMENTS.map((x) => x.text).join(' ');
    const config = serviceConfigOf(server, API_KEY);
    const speak = async () => {
      const speech = await createSpeechStream(config, { format: 'pcm', transport: 'auto', realtime: { backoff: { baseMs: 10, maxMs: 50 } } });
      const failovers: string[] = [];
      speech.on('failover', (f) => failovers.push(`${f.from}->${f.to}:${f.error.code}`));
      const started = performance.now();
      speech.end(text);
      const chunks: Buffer[] = [];
      for await (const c of speech) chunks.push(c as Buffer);
      return { audio: Buffer.concat(chunks), failovers, ms: performance.now() - started };
    };
    const clean = await speak();
    server.faults.set({ bogusAckSequence: {}, statusRouteHangs: { times: 100 } });
    const run = await speak();
    expect(run.failovers).toEqual(['realtime->sync:timeout']);
    expect(run.audio.length).toBe(clean.audio.length);
    expect(run.audio.equals(clean.audio)).toBe(true);
    expect(run.ms).toBeLessThan(clean.ms + RECOVERY_DEFAULTS.statusTimeoutMs + SLACK_MS);
  });
});

describe('a server that stalls every time', () => {
  it('transport auto: one resume, then failover at the second stall (maxStallResumes 1), byte-exact', async () => {
    const text = SEGMENTS.map((x) => x.text).join(' ');
    const config = serviceConfigOf(server, API_KEY);
    const progressTimeoutMs = 1_000;
    const speak = async () => {
      const speech = await createSpeechStream(config, { format: 'pcm', transport: 'auto', realtime: { backoff: { baseMs: 10, maxMs: 50 }, progressTimeoutMs } });
      const failovers: string[] = [];
      let retries = 0;
      speech.on('failover', (f) => failovers.push(`${f.from}->${f.to}:${f.error.code}`));
      speech.on('retry', () => retries++);
      const started = performance.now();
      speech.end(text);
      const chunks: Buffer[] = [];
      for await (const c of speech) chunks.push(c as Buffer);
      return { audio: Buffer.concat(chunks), failovers, retries, ms: performance.now() - started };
    };
    const clean = await speak();
    server.faults.set({ withholdSegmentCompleted: { times: 1_000 } });
    const run = await speak();
    expect(run.retries).toBe(1);
    expect(run.failovers).toEqual(['realtime->sync:timeout']);
    expect(run.audio.equals(clean.audio)).toBe(true);
    expect(run.ms).toBeLessThan(clean.ms + 2 * DETECT(progressTimeoutMs) + SLACK_MS);
  });
});
