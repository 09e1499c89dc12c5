/**
 * Fault injection and drain: each abnormal end gives the close, error and
 * request state the client's resume logic relies on, and the holds of
 * segments that produced no audio are given back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import type { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, flush, openClient, quotaOf, REQUEST, requestStatus, sendText, speakSegment, startReliable, startTestServer, USER_A } from './fixtures.js';

let server: ReferenceServer | undefined;
const clients: RealtimeTestClient[] = [];

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(() => cleanUp(server, clients));

async function client(): Promise<RealtimeTestClient> {
  const c = await openClient(server!);
  clients.push(c);
  return c;
}

const LONG = 'Words that keep the engine busy for a good while. '.repeat(20);

/** The stored journal record, read from the store (works after the server closed). */
function stored(requestId: string): { state: string; segments: { segmentId: string; state: string; units: number }[] } {
  const records = server!.ctx.store.collection<{ requestId: string; userId: string; state: string; segments: { segmentId: string; state: string; units: number }[] }>('realtime-requests');
  const record = [...records.values()].find((r) => r.requestId === requestId && r.userId === USER_A);
  if (!record) throw new Error(`no request ${requestId}`);
  return record;
}

async function eventually(check: () => void): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      check();
      return;
    } catch (err) {
      if (i > 200) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

describe('fault injection', () => {
  it('closes with the chosen code after N audio frames; the request becomes failed_retryable', async () => {
    server!.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1013 } });
    const c = await client();
    await startReliable(c, 'f-close');
    await sendText(c, LONG);
    flush(c, 's');
    expect((await c.closed).code).toBe(1013);
    expect(c.all('audio')).toHaveLength(3);
    expect((await requestStatus(server!, 'f-close')).body).toMatchObject({ state: 'failed_retryable', retryable: true });
    // Fired once: the next connection is not cut.
    const next = await client();
    await startReliable(next, 'f-close-2');
    await speakSegment(next, 's', 'Fine.');
  });

  it('sends a retryable, terminal error event, then finish(error), then closes 1013', async () => {
    server!.faults.set({ realtimeError: { afterAudioFrames: 2 } });
    const c = await client();
    await startReliable(c, 'f-error');
    await sendText(c, LONG);
    flush(c, 's');
    const error = await c.next('error');
    expect(error).toMatchObject({ code: ErrorCode.providerUnavailable, retryable: true, terminal: true, request_id: 'f-error' });
    expect(await c.next('finish')).toMatchObject({ reason: 'error', request_id: 'f-error' });
    expect((await c.closed).code).toBe(1013);
    expect(stored('f-error').state).toBe('failed_retryable');
  });

  it('makes a non-retryable injected error end the request as failed_terminal', async () => {
    server!.faults.set({ realtimeError: { afterAudioFrames: 1, code: 'generation_failed', retryable: false } });
    const c = await client();
    await startReliable(c, 'f-error-2');
    await sendText(c, LONG);
    flush(c, 's');
    expect(await c.next('error')).toMatchObject({ code: ErrorCode.generationFailed, retryable: false, terminal: true });
    expect((await c.closed).code).toBe(1011);
    expect(stored('f-error-2').state).toBe('failed_terminal');
  });

  it('drops the TCP connection without a close frame; the request becomes failed_retryable', async () => {
    server!.faults.set({ realtimeDrop: { afterAudioFrames: 2 } });
    const c = await client();
    await startReliable(c, 'f-drop');
    await sendText(c, LONG);
    flush(c, 's');
    expect((await c.closed).code).toBe(1006);
    await eventually(() => expect(stored('f-drop').state).toBe('failed_retryable'));
  });

  it('fails the engine before any audio: generation_failed, failed_terminal, and the units are given back', async () => {
    server!.faults.set({ engineFailure: { match: 'doomed' } });
    const c = await client();
    await startReliable(c, 'f-engine');
    const quota = quotaOf(server!);
    await sendText(c, 'A doomed segment.');
    flush(c, 's');
    await c.next('segment_accepted');
    const error = await c.next('error');
    expect(error).toMatchObject({ code: ErrorCode.generationFailed, retryable: false, terminal: true, stage: 'generation' });
    expect(await c.next('finish')).toMatchObject({ reason: 'error', units: 0 });
    expect((await c.closed).code).toBe(1011);
    expect(c.all('audio')).toHaveLength(0);
    expect(quotaOf(server!)).toBe(quota);
    expect(stored('f-engine')).toMatchObject({ state: 'failed_terminal', segments: [{ segmentId: 's', state: 'failed', units: 0 }] });
    // A failed_terminal request cannot be retried.
    const retry = await client();
    retry.send({ event: 'start', mode: 'reliable', event_id: 'r', request_id: 'f-engine', retry_failed: true, request: REQUEST });
    expect(await retry.next('error')).toMatchObject({ code: ErrorCode.idempotencyConflict, terminal: true });
  });

  it('fails the engine after some chunks: the audio already sent stays charged', async () => {
    server!.faults.set({ engineFailure: { afterChunks: 5 } });
    const c = await client();
    const quota = quotaOf(server!);
    c.send({ event: 'start', request: REQUEST });
    await c.next('ready');
    c.send({ event: 'input', text: LONG });
    expect(await c.next('error')).toMatchObject({ code: ErrorCode.generationFailed, terminal: true });
    expect(await c.next('finish')).toMatchObject({ reason: 'error', units: LONG.length });
    expect(c.all('audio').length).toBeGreaterThan(0);
    expect(quotaOf(server!)).toBe(quota - LONG.length);
  });

  it('adds latency without changing the audio', async () => {
    const c = await client();
    await startReliable(c, 'f-latency-0');
    await speakSegment(c, 's', 'Same bytes.');
    server!.faults.set({ latencyMs: 2 });
    const d = await client();
    await startReliable(d, 'f-latency-1');
    await speakSegment(d, 's', 'Same bytes.');
    expect(d.audio('s').equals(c.audio('s'))).toBe(true);
  });
});

describe('drain', () => {
  it('finishes open requests with server_draining, closes 1012, and leaves them failed_retryable', async () => {
    const busy = await client();
    await startReliable(busy, 'd-1');
    await sendText(busy, LONG.repeat(5));
    flush(busy, 's');
    await busy.next('audio');
    const idle = await client();
    const quota = quotaOf(server!);
    await server!.drain();
    expect(await busy.next('finish')).toMatchObject({ reason: 'server_draining', request_id: 'd-1' });
    expect((await busy.closed).code).toBe(1012);
    expect((await idle.closed).code).toBe(1012);
    expect(idle.all('finish')).toHaveLength(0);
    expect(stored('d-1').state).toBe('failed_retryable');
    // The segment had audio: its units stay charged.
    expect(quotaOf(server!)).toBe(quota);
    server = undefined;
  });
});
