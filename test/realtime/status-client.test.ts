/**
 * The recovery's HTTP reads: a status read against a
 * server that never answers ends with a TimeoutError within its deadline,
 * even when a garbage collection runs while it waits (Node 20 loses the
 * timeout of `AbortSignal.any([signal, AbortSignal.timeout()])` after a GC).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/errors.js';
import { fetchRequestStatus, fetchSegmentAudio } from '../../src/realtime/status-client.js';

let silent: Server;
let rtHttpUrl: string;

beforeAll(async () => {
  // Accepts every request and never answers.
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  rtHttpUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

/**
 * `gc()` without `--expose-gc` on the command line (a global execArgv flag
 * would be passed on to worker threads, which refuse it): set the flag at run
 * time and take the function from a fresh context.
 */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Force collections while a read waits. */
function collectGarbageFor(ms: number): void {
  const gc = exposeGc();
  const timer = setInterval(() => gc(), 20);
  setTimeout(() => clearInterval(timer), ms);
}

describe('request-status reads', () => {
  it('time out after timeoutMs although the GC ran mid-wait', async () => {
    const caller = new AbortController(); // a caller signal that never fires: the combined-signal case
    collectGarbageFor(400);
    const started = performance.now();
    const result = await fetchRequestStatus('req-x', { rtHttpUrl, apiKey: 'sk-x', timeoutMs: 300, signal: caller.signal });
    expect(result.kind).toBe('error');
    expect(result.kind === 'error' && result.error).toBeInstanceOf(TimeoutError);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('segment audio downloads have the same deadline', async () => {
    collectGarbageFor(400);
    const result = await fetchSegmentAudio('/audio/x', { rtHttpUrl, timeoutMs: 300 });
    expect(result.kind === 'error' && result.error).toBeInstanceOf(TimeoutError);
  });

  it('the caller aborting ends the read at once', async () => {
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 50);
    const result = await fetchRequestStatus('req-x', { rtHttpUrl, timeoutMs: 10_000, signal: caller.signal });
    expect(result.kind).toBe('error');
    expect(result.kind === 'error' && result.error).not.toBeInstanceOf(TimeoutError);
  });
});
