/**
 * Idle timeout and server-side backpressure, with the timers shortened via
 * overrideRealtimeTuning (the defaults are 60 s idle and a 30 s stall).
 */
import type { Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import { ToneEngine } from '../../../src/server/engines/tone.js';
import { overrideRealtimeTuning } from '../../../src/server/realtime/index.js';
import type { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, flush, openClient, requestStatus, sendText, startReliable, startTestServer } from './fixtures.js';

let server: ReferenceServer;
const clients: RealtimeTestClient[] = [];
let restore: (() => void) | undefined;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  restore?.();
  restore = undefined;
  await cleanUp(server, clients);
});

/** Bytes of PCM the whole segment makes with the tone engine. */
async function segmentBytes(text: string): Promise<number> {
  let n = 0;
  for await (const chunk of new ToneEngine().synthesize(text, { voice: { basePitchHz: 210, rate: 1, espeakVoice: 'en-us' } })) n += chunk.length;
  return n;
}

async function client(): Promise<RealtimeTestClient> {
  const c = await openClient(server);
  clients.push(c);
  return c;
}

describe('idle timeout', () => {
  it('finishes an idle request with reason timeout and leaves it failed_retryable', async () => {
    restore = overrideRealtimeTuning({ idleTimeoutMs: 300 });
    const c = await client();
    await startReliable(c, 'idle-1');
    expect(await c.next('finish')).toMatchObject({ reason: 'timeout', request_id: 'idle-1' });
    expect((await c.closed).code).toBe(1000);
    expect((await requestStatus(server, 'idle-1')).body).toMatchObject({ state: 'failed_retryable' });
  });

  it('closes an idle connection that never started a request', async () => {
    restore = overrideRealtimeTuning({ idleTimeoutMs: 300 });
    const c = await client();
    expect((await c.closed).code).toBe(1000);
    expect(c.all('finish')).toHaveLength(0);
  });
});

describe('server-side backpressure', () => {
  it('stops pulling engine audio while the client does not read, then fails with client_backpressure', async () => {
    restore = overrideRealtimeTuning({ backpressureHighWaterBytes: 64 * 1024, backpressureStallMs: 400 });
    const c = await client();
    await startReliable(c, 'bp-1');
    const text = 'A very long segment that would make minutes of audio if it were generated to its end. '.repeat(100);
    await sendText(c, text);
    const socket = (c.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    flush(c, 'long');
    // Let the server run into the high-water mark and stall: it fails the
    // request (seen on another connection) while this one is still not read.
    for (let waited = 0; waited < 20_000; waited += 100) {
      if ((await requestStatus(server, 'bp-1')).body?.state === 'failed_retryable') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    socket.resume();
    const error = await c.next('error');
    expect(error).toMatchObject({ code: ErrorCode.clientBackpressure, terminal: true, stage: 'delivery' });
    expect(await c.next('finish')).toMatchObject({ reason: 'error' });
    // The server stopped early instead of queueing the whole segment: what
    // arrived is the kernel's socket buffers plus the high-water mark, far
    // from the segment's ~25 MB of PCM.
    const received = c.audio('long').length;
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan((await segmentBytes(text)) / 2);
    expect((await requestStatus(server, 'bp-1')).body).toMatchObject({ state: 'failed_retryable' });
  });
});
