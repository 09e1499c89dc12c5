/**
 * Reliable-mode idempotency (spec 3.5, 4.10): a repeated `start` answers
 * `request_status` without generating or charging; `retry_failed` re-executes
 * a `failed_retryable` request when the retried segments keep their ids,
 * order and text, and never charges a segment twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import type { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, flush, KEY_A, openClient, quotaOf, REQUEST, requestStatus, sendText, speakSegment, startReliable, startTestServer, stop, USER_A, toneAudio } from './fixtures.js';

let server: ReferenceServer;
const clients: RealtimeTestClient[] = [];

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(() => cleanUp(server, clients));

async function client(): Promise<RealtimeTestClient> {
  const c = await openClient(server);
  clients.push(c);
  return c;
}

const TEXT_A = 'The first segment.';
const TEXT_B = 'The second segment is long enough to be cut off in the middle of its audio.';
const TEXT_C = 'A third one.';
const [A, B, C] = [TEXT_A.length, TEXT_B.length, TEXT_C.length];

/**
 * Connection 1: segment a completes, segment b is cut by a close 1012 after
 * two of its audio frames. Returns that connection.
 */
async function failMidSegment(requestId: string): Promise<RealtimeTestClient> {
  const c = await client();
  await startReliable(c, requestId);
  await speakSegment(c, 'a', TEXT_A);
  server.faults.set({ realtimeClose: { afterAudioFrames: c.all('audio').length + 2, code: 1012 } });
  await sendText(c, TEXT_B);
  flush(c, 'b');
  expect((await c.closed).code).toBe(1012);
  return c;
}

async function waitForState(requestId: string, state: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const { body } = await requestStatus(server, requestId);
    if (body['state'] === state) return body;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`request ${requestId} never reached ${state}`);
}

describe('duplicate start', () => {
  it('answers request_status for a completed request, then closes, without generating or charging', async () => {
    const first = await client();
    await startReliable(first, 'dup-1');
    await speakSegment(first, 's1', 'Hello.');
    await stop(first);
    const quota = quotaOf(server);
    const ledgerSize = server.ctx.store.ledger.size;

    const again = await client();
    again.send({ event: 'start', mode: 'reliable', event_id: 'again', request_id: 'dup-1', request: REQUEST });
    const status = await again.next('request_status');
    expect(status).toMatchObject({ request_id: 'dup-1', state: 'completed', retryable: false, units: 6, result_available: true, in_reply_to: 'again' });
    expect((await again.closed).code).toBe(1000);
    expect(again.all('ready')).toHaveLength(0);
    expect(again.all('audio')).toHaveLength(0);
    expect(quotaOf(server)).toBe(quota);
    expect(server.ctx.store.ledger.size).toBe(ledgerSize);
  });

  it('answers request_status (retryable) for a failed_retryable request started without retry_failed', async () => {
    await failMidSegment('dup-2');
    await waitForState('dup-2', 'failed_retryable');
    const again = await client();
    again.send({ event: 'start', mode: 'reliable', event_id: 'x', request_id: 'dup-2', request: REQUEST });
    expect(await again.next('request_status')).toMatchObject({ state: 'failed_retryable', retryable: true, result_available: true });
  });

  it('refuses the same request_id with different parameters: idempotency_conflict, terminal', async () => {
    const first = await client();
    await startReliable(first, 'dup-3');
    await speakSegment(first, 's1', 'Hi.');
    await stop(first);
    const again = await client();
    again.send({ event: 'start', mode: 'reliable', event_id: 'x', request_id: 'dup-3', request: { ...REQUEST, speed: 1.5 } });
    expect(await again.next('error')).toMatchObject({ code: ErrorCode.idempotencyConflict, terminal: true, path: 'request' });
    expect((await again.closed).code).toBe(1008);
  });

  it('keeps request ids per account: the same id on another account is another request', async () => {
    const a = await client();
    await startReliable(a, 'shared-id');
    await speakSegment(a, 's1', 'Mine.');
    await stop(a);
    const b = await openClient(server, 'sk-test-realtime-bob');
    clients.push(b);
    const ready = await startReliable(b, 'shared-id');
    expect(ready.request_id).toBe('shared-id');
    expect(b.all('request_status')).toHaveLength(0);
  });
});

describe('retry_failed', () => {
  it('re-executes the cut segment after a close 1012, replays the completed one without audio, and charges nothing twice', async () => {
    const c1 = await failMidSegment('retry-1');
    const partialB = c1.audio('b');
    expect(partialB.length).toBeGreaterThan(0);
    const status = await waitForState('retry-1', 'failed_retryable');
    expect(status).toMatchObject({ retryable: true, result_available: true, units: A + B });
    const manifest = status['segments'] as { segment_id: string; state: string; units: number; audio_url?: string }[];
    expect(manifest.map((s) => [s.segment_id, s.state, s.units])).toEqual([['a', 'completed', A], ['b', 'failed', B]]);
    expect(manifest[0]!.audio_url).toBeDefined();
    expect(manifest[1]!.audio_url).toBeUndefined();
    const quotaAfterFailure = quotaOf(server);

    const c2 = await client();
    const ready = await startReliable(c2, 'retry-1', { retry_failed: true });
    expect(ready).toMatchObject({ resumed: true, segments_completed: 1 });
    // The completed segment, re-sent: answered at once, no audio, no charge.
    await sendText(c2, TEXT_A);
    flush(c2, 'a');
    const replay = await c2.next('segment_completed', (e) => e.segment_id === 'a');
    expect(replay).toMatchObject({ units: A, audio_bytes: c1.audio('a').length });
    expect(c2.all('audio')).toHaveLength(0);
    // The cut segment: generated again in full, byte-identical, not charged again.
    await sendText(c2, TEXT_B);
    flush(c2, 'b');
    expect(await c2.next('segment_accepted')).toMatchObject({ segment_id: 'b', characters: B });
    await c2.next('segment_completed', (e) => e.segment_id === 'b');
    const fullB = c2.audio('b');
    expect(fullB.equals(await toneAudio(TEXT_B))).toBe(true);
    expect(fullB.subarray(0, partialB.length).equals(partialB)).toBe(true);
    expect(quotaOf(server)).toBe(quotaAfterFailure);
    // A new segment after the journal is generated and charged.
    await speakSegment(c2, 'c', TEXT_C);
    expect(quotaOf(server)).toBe(quotaAfterFailure - C);
    expect(await stop(c2)).toMatchObject({ reason: 'completed', units: A + B + C });
    expect(await waitForState('retry-1', 'completed')).toMatchObject({ units: A + B + C });
  });

  it('charges a segment again when its first attempt failed before any audio (and was refunded)', async () => {
    const c1 = await client();
    await startReliable(c1, 'retry-refund');
    const quota = quotaOf(server);
    // Slow engine: the connection drops after the reservation and before any audio.
    server.faults.set({ latencyMs: 200 });
    await sendText(c1, 'Never spoken.');
    flush(c1, 'x');
    await c1.next('segment_accepted');
    expect(quotaOf(server)).toBe(quota - 13);
    c1.ws.terminate();
    await waitForState('retry-refund', 'failed_retryable');
    server.faults.clear();
    expect(quotaOf(server)).toBe(quota);

    const c2 = await client();
    await startReliable(c2, 'retry-refund', { retry_failed: true });
    await speakSegment(c2, 'x', 'Never spoken.');
    expect(quotaOf(server)).toBe(quota - 13);
    const refs = server.ctx.ledger.entriesOf(USER_A).filter((e) => e.refId.includes('retry-refund'));
    expect(refs.map((e) => e.state).sort()).toEqual(['committed', 'released']);
  });

  it('refuses a retried segment with changed text: idempotency_conflict, terminal, journal untouched', async () => {
    await failMidSegment('retry-2');
    await waitForState('retry-2', 'failed_retryable');
    const c2 = await client();
    await startReliable(c2, 'retry-2', { retry_failed: true });
    await sendText(c2, `${TEXT_B} (edited)`);
    flush(c2, 'b');
    expect(await c2.next('error')).toMatchObject({ code: ErrorCode.idempotencyConflict, terminal: true, retryable: false });
    expect(await c2.next('finish')).toMatchObject({ reason: 'error' });
    expect(c2.all('audio')).toHaveLength(0);
    const status = await waitForState('retry-2', 'failed_retryable');
    expect((status['segments'] as unknown[]).length).toBe(2);
  });

  it('refuses a new segment before the failed one was re-sent: idempotency_conflict', async () => {
    await failMidSegment('retry-3');
    await waitForState('retry-3', 'failed_retryable');
    const c2 = await client();
    await startReliable(c2, 'retry-3', { retry_failed: true });
    await sendText(c2, TEXT_C);
    flush(c2, 'c');
    expect(await c2.next('error')).toMatchObject({ code: ErrorCode.idempotencyConflict, terminal: true, path: 'segment_id' });
  });

  it('answers request_status when the request already completed', async () => {
    const c1 = await client();
    await startReliable(c1, 'retry-4');
    await speakSegment(c1, 's', 'Done.');
    await stop(c1);
    const c2 = await client();
    c2.send({ event: 'start', mode: 'reliable', event_id: 'r', request_id: 'retry-4', retry_failed: true, request: REQUEST });
    expect(await c2.next('request_status')).toMatchObject({ state: 'completed', units: 5 });
    expect((await c2.closed).code).toBe(1000);
  });

  it('refuses a retry while another connection runs the request: invalid_state, retryable, terminal', async () => {
    const c1 = await client();
    await startReliable(c1, 'retry-5');
    const c2 = await client();
    c2.send({ event: 'start', mode: 'reliable', event_id: 'r', request_id: 'retry-5', retry_failed: true, request: REQUEST });
    expect(await c2.next('error')).toMatchObject({ code: ErrorCode.invalidState, terminal: true, retryable: true });
    expect((await c2.closed).code).toBe(1013);
    // The running request is untouched.
    await speakSegment(c1, 's', 'Still mine.');
  });

  it('treats retry_failed with an unknown request_id as a new request', async () => {
    const c = await client();
    const ready = await startReliable(c, 'retry-new', { retry_failed: true });
    expect(ready).toMatchObject({ request_id: 'retry-new', resumed: false });
  });
});

describe('request status route', () => {
  it('gives state, units and a manifest whose audio_url serves each segment exactly as streamed', async () => {
    const c = await client();
    await startReliable(c, 'status-1');
    await speakSegment(c, 'one', 'First.');
    await speakSegment(c, 'two', 'Second.');
    await stop(c);
    const { status, body } = await requestStatus(server, 'status-1');
    expect(status).toBe(200);
    expect(body).toMatchObject({ request_id: 'status-1', state: 'completed', retryable: false, units: 13, result_available: true, format: 'pcm' });
    const segments = body['segments'] as { segment_id: string; index: number; audio_url: string; audio_bytes: number; characters: number }[];
    expect(segments.map((s) => [s.segment_id, s.index, s.characters])).toEqual([['one', 0, 6], ['two', 1, 7]]);
    for (const s of segments) {
      expect(s.audio_url).toBe(`/v2/tts/requests/status-1/segments/${s.segment_id}/audio`);
      const res = await fetch(`${server.rtHttpUrl}${s.audio_url}`, { headers: { authorization: `Bearer ${KEY_A}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('audio/pcm');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.length).toBe(s.audio_bytes);
      expect(bytes.equals(c.audio(s.segment_id))).toBe(true);
    }
  });

  it('shows a running request without a manifest until a segment completes', async () => {
    const c = await client();
    await startReliable(c, 'status-2');
    expect((await requestStatus(server, 'status-2')).body).toMatchObject({ state: 'running', result_available: false, units: 0 });
    expect((await requestStatus(server, 'status-2')).body['segments']).toBeUndefined();
  });

  it('answers 404 to another account, for the status and the audio, and 401 without a key', async () => {
    const c = await client();
    await startReliable(c, 'status-3');
    await speakSegment(c, 'one', 'Private.');
    await stop(c);
    expect((await requestStatus(server, 'status-3', 'sk-test-realtime-bob')).status).toBe(404);
    const audio = await fetch(`${server.rtHttpUrl}/v2/tts/requests/status-3/segments/one/audio`, { headers: { authorization: 'Bearer sk-test-realtime-bob' } });
    expect(audio.status).toBe(404);
    expect((await requestStatus(server, 'no-such-request')).status).toBe(404);
    const anonymous = await fetch(`${server.rtHttpUrl}/v2/tts/requests/status-3`);
    expect(anonymous.status).toBe(401);
  });
});
