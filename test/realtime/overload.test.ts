/**
 * Overload is not death (src/realtime/budgets.ts): the progress
 * deadline tells a server that is behind from one that is gone. The real
 * reference server on port 0 behind a proxy (one origin for every stream):
 * the proxy holds one stream's frames, as a saturated server serves it late,
 * while other streams of this process on the same origin progress.
 *
 * - saturated: the held stream waits past its budget and completes without a
 *   resume, byte-exact;
 * - the same hold with no other stream progressing: a stall within the budget;
 * - a server gone (every stream's frames held): a stall within the budget,
 *   although other streams progressed before;
 * - a stream held for good while others progress: a stall after at most
 *   its cap of budgets (an option of the watch), then resumed, byte-exact.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OverloadWatch, PROGRESS_SLICES, serverActivity } from '../../src/realtime/budgets.js';
import type { ReliableSession } from '../../src/realtime/reliable/session.js';
import type { ReferenceServer } from '../../src/server/index.js';
import { run, SEGMENTS, session, startTestServer } from './fixtures.js';
import { startWsProxy, type WsProxy } from './ws-proxy.js';

/** The held stream's budget: small, so each case takes seconds. */
const BUDGET_MS = 400;
/** The overload cap the held stream gets (the default, 60 budgets, would make this file minutes long). */
const CAP_BUDGETS = 11;
const DETECT_MS = BUDGET_MS * (1 + 1 / PROGRESS_SLICES);
/** Slack for a loaded machine. */
const SLACK_MS = 1_500;

let server: ReferenceServer;
let proxy: WsProxy;
let reference: Buffer;

/** Connections (by the proxy's index) whose server frames are held, and what is held. */
const held = new Map<number, Buffer[]>();
const sinks = new Map<number, WebSocket>();
/** Every connection's frames held from now on (a server gone silent), until released. */
let allSilent = false;

function release(index: number): void {
  const frames = held.get(index);
  held.delete(index);
  const client = sinks.get(index);
  for (const f of frames ?? []) if (client?.readyState === WebSocket.OPEN) client.send(f);
}

beforeAll(async () => {
  server = await startTestServer();
  proxy = await startWsProxy(server.wsUrl, ({ client, upstream, index }) => {
    sinks.set(index, client);
    upstream.on('message', (data: Buffer) => {
      let queue = held.get(index);
      if (!queue && allSilent) held.set(index, (queue = []));
      if (queue) queue.push(data);
      else if (client.readyState === WebSocket.OPEN) client.send(data);
    });
    client.on('close', () => upstream.close());
  });
  reference = (await run(session(server))).audio;
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});
afterEach(() => {
  unsilence();
});

/** Every held frame goes out, in order; no new hold. */
function unsilence(): void {
  allSilent = false;
  for (const index of [...held.keys()]) release(index);
}

/** Streams through the proxy, one after the other, until `stop()`: the server's other traffic. */
function otherStreams(count: number): { stop: () => Promise<void>; runs: () => number } {
  let stopped = false;
  let runs = 0;
  const loops = Array.from({ length: count }, async () => {
    while (!stopped) {
      await run(session(server, { wsUrl: proxy.wsUrl }));
      runs++;
    }
  });
  return {
    runs: () => runs,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/**
 * The held stream: opened through the proxy while no other stream connects
 * (so the newest connection is its own), then its frames held (`hold`).
 */
async function heldStream(hold = true): Promise<{ s: ReliableSession; index: number; retryAt: () => number | undefined; started: number }> {
  const s = session(server, { wsUrl: proxy.wsUrl, progressTimeoutMs: BUDGET_MS, overload: new OverloadWatch(serverActivity(proxy.wsUrl), CAP_BUDGETS) });
  await s.open();
  const index = Math.max(...sinks.keys());
  if (hold) held.set(index, []);
  const started = performance.now();
  let retryAt: number | undefined;
  s.on('retry', () => (retryAt ??= performance.now() - started));
  return { s, index, retryAt: () => retryAt, started };
}

describe('the progress deadline tells overload from silence', () => {
  it('saturated: other streams on the server progress, the held stream waits past its budget and completes without a resume, byte-exact', async () => {
    const victim = await heldStream();
    const others = otherStreams(2);
    const HOLD_MS = BUDGET_MS * 6;
    const releaseTimer = setTimeout(() => release(victim.index), HOLD_MS);
    const result = await run(victim.s);
    clearTimeout(releaseTimer);
    await others.stop();
    expect(others.runs()).toBeGreaterThan(0);
    expect(performance.now() - victim.started).toBeGreaterThanOrEqual(HOLD_MS - 50);
    expect(result.events.retry).toBe(0);
    expect(result.summary.retries).toBe(0);
    expect(result.audio.equals(reference)).toBe(true);
  });

  it('the same hold with no other stream progressing: a stall within the budget, then resumed, byte-exact', async () => {
    const victim = await heldStream();
    const result = await run(victim.s);
    expect(victim.retryAt()).toBeDefined();
    expect(victim.retryAt()!).toBeLessThanOrEqual(DETECT_MS + SLACK_MS);
    expect(result.audio.equals(reference)).toBe(true);
  });

  it('a server gone silent for every stream (after the others progressed): a stall within the budget', async () => {
    const victim = await heldStream(false);
    const others = otherStreams(2);
    // Let the others progress first, so the server's activity counter has moved.
    while (others.runs() === 0) await new Promise((r) => setTimeout(r, 20));
    allSilent = true;
    const started = performance.now();
    let retryAt: number | undefined;
    victim.s.on('retry', () => (retryAt ??= performance.now() - started));
    const outcome = run(victim.s).then(
      (r) => r,
      (e: unknown) => e,
    );
    const deadline = performance.now() + DETECT_MS + SLACK_MS + 1_000;
    while (retryAt === undefined && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    unsilence();
    await outcome;
    await others.stop();
    expect(retryAt).toBeDefined();
    expect(retryAt!).toBeLessThanOrEqual(DETECT_MS + SLACK_MS);
  });

  it('held for good while others progress: bounded, a stall after at most its cap of budgets, then resumed, byte-exact', async () => {
    const victim = await heldStream();
    const others = otherStreams(2);
    const result = await run(victim.s);
    await others.stop();
    const retryAt = victim.retryAt();
    expect(retryAt).toBeDefined();
    // Busy slices are not quiet (well past one budget), but they are capped.
    expect(retryAt!).toBeGreaterThan(DETECT_MS * 2);
    // The cap is counted in slices, whose timers each run late on a loaded
    // machine (at load 20 the 44 slices of 100 ms took 8 s): bounded, with room.
    expect(retryAt!).toBeLessThanOrEqual((BUDGET_MS * CAP_BUDGETS + DETECT_MS) * 2.5 + SLACK_MS);
    expect(result.audio.equals(reference)).toBe(true);
  });
});

describe('the status route under overload', () => {
  it('unanswered while the server serves other streams: read again (not the end of the request), then resumed, byte-exact', async () => {
    // The victim first, alone, so the newest proxy connection is its own.
    const victim = session(server, { wsUrl: proxy.wsUrl, statusTimeoutMs: 300 });
    await victim.open();
    const index = Math.max(...sinks.keys());
    const others = otherStreams(2);
    // Its status reads hang twice (the route of a saturated server); the others never read it.
    server.faults.set({ statusRouteHangs: { times: 2 } });
    victim.once('audio', () => sinks.get(index)?.close(1012, 'service restart'));
    let result: Awaited<ReturnType<typeof run>>;
    try {
      result = await run(victim);
    } finally {
      await others.stop();
      server.faults.clear();
    }
    expect(others.runs()).toBeGreaterThan(0);
    expect(result.events.resumed).toBe(1);
    // Two reads unanswered, the third answered.
    expect(result.summary.statusReads).toBeGreaterThanOrEqual(3);
    expect(result.audio.equals(reference)).toBe(true);
  });
});

describe('the activity is shared by server origin', () => {
  it('two sessions on one origin share one counter; another origin has its own', async () => {
    const { serverActivity } = await import('../../src/realtime/budgets.js');
    expect(serverActivity(`${proxy.wsUrl}/v2/tts/live`)).toBe(serverActivity(proxy.wsUrl));
    expect(serverActivity(server.wsUrl)).not.toBe(serverActivity(proxy.wsUrl));
    expect(SEGMENTS.length).toBeGreaterThan(0);
  });
});
