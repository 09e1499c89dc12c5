/**
 * Realtime billing (spec 6 rule 4, 8): one unit per character, reserved at
 * accept, committed at the first audio, refunded when a segment ends without
 * audio; the account's quota and the 100,000-unit session limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/constants.js';
import { LIMITS } from '../../../src/protocol/limits.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import type { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, flush, openClient, quotaOf, REQUEST, sendText, speakSegment, startReliable, startTestServer, stop, USER_A } from './fixtures.js';

let server: ReferenceServer | undefined;
const clients: RealtimeTestClient[] = [];
afterEach(() => cleanUp(server, clients));

async function client(): Promise<RealtimeTestClient> {
  const c = await openClient(server!);
  clients.push(c);
  return c;
}

describe('realtime billing', () => {
  it('decreases the quota by one unit per character and reports it in usage and authenticated', async () => {
    server = await startTestServer({ quotaA: 1_000 });
    const c = await client();
    expect(c.all('authenticated')[0]!.quota).toBe(1_000);
    await startReliable(c, 'b-1');
    await speakSegment(c, 's1', 'Twelve chars');
    const usage = c.all('usage')[0]!;
    expect(usage).toMatchObject({ segment_units: 12, session_units: 12, quota_remaining: 988 });
    await speakSegment(c, 's2', 'Ünïcödé 👋');
    // Characters are code points: the emoji counts once.
    expect(c.all('usage')[1]).toMatchObject({ segment_units: 9, session_units: 21, quota_remaining: 979 });
    expect(await stop(c)).toMatchObject({ units: 21 });
    expect(quotaOf(server)).toBe(979);
    expect(server.ctx.ledger.entriesOf(USER_A).every((e) => e.state === 'committed' && e.currency === 'quota')).toBe(true);
  });

  it('refuses a segment over the remaining quota with quota_exceeded, non-terminal; a smaller one still works', async () => {
    server = await startTestServer({ quotaA: 20 });
    const c = await client();
    await startReliable(c, 'b-2');
    await sendText(c, 'x'.repeat(30));
    flush(c, 'big');
    expect(await c.next('error')).toMatchObject({ code: ErrorCode.quotaExceeded, terminal: false, retryable: false });
    expect(quotaOf(server)).toBe(20);
    // The refused flush kept the buffer; stop discards it with a warning and completes.
    c.send({ event: 'stop', event_id: 'stop' });
    expect(await c.next('warning')).toMatchObject({ code: 'unflushed_text_discarded' });
    expect(await c.next('finish')).toMatchObject({ reason: 'completed', units: 0 });

    const d = await client();
    await startReliable(d, 'b-3');
    await speakSegment(d, 'small', 'x'.repeat(15));
    expect(quotaOf(server)).toBe(5);
  });

  it('refuses units past the session limit with session_limit_exceeded and gives back the holds of ungenerated segments', async () => {
    server = await startTestServer({ quotaA: 1_000_000 });
    const c = await client();
    await startReliable(c, 'b-4', { request: { ...REQUEST, speed: 2 } });
    const segments = LIMITS.sessionMaxUnits / LIMITS.segmentMaxChars;
    const text = 'x'.repeat(LIMITS.segmentMaxChars);
    for (let i = 0; i < segments; i++) {
      await sendText(c, text);
      flush(c, `s${i}`);
      await c.next('segment_accepted', (e) => e.segment_id === `s${i}`);
    }
    await sendText(c, 'one more');
    flush(c, 'over');
    expect(await c.next('error')).toMatchObject({ code: ErrorCode.sessionLimitExceeded, terminal: false });
    c.ws.terminate();
    // Segments that sent audio stay charged; the others are refunded.
    for (let i = 0; ; i++) {
      if (server.ctx.ledger.entriesOf(USER_A).every((e) => e.state !== 'held')) break;
      if (i > 500) throw new Error('holds were not released');
      await new Promise((r) => setTimeout(r, 10));
    }
    const committed = server.ctx.ledger.entriesOf(USER_A).filter((e) => e.state === 'committed');
    expect(committed.length).toBeGreaterThan(0);
    expect(committed.length).toBeLessThan(segments);
    expect(quotaOf(server)).toBe(1_000_000 - committed.length * LIMITS.segmentMaxChars);
  });

  it('charges a simple request once per committed input', async () => {
    server = await startTestServer({ quotaA: 100 });
    const c = await client();
    c.send({ event: 'start', request: REQUEST });
    await c.next('ready');
    c.send({ event: 'input', text: 'abc', commit: false });
    c.send({ event: 'input', text: 'def' });
    expect(await c.next('finish')).toMatchObject({ reason: 'completed', units: 6 });
    expect(quotaOf(server)).toBe(94);
    expect(server.ctx.ledger.entriesOf(USER_A)).toHaveLength(1);
  });
});

describe('segment hold ids', () => {
  it('charges segments whose ids only collide once joined with ":"', async () => {
    server = await startTestServer({ quotaA: 1_000 });
    const first = await client();
    await startReliable(first, 'a');
    await speakSegment(first, 'b:c', 'x'.repeat(10));
    await stop(first);
    const second = await client();
    await startReliable(second, 'a:b');
    await speakSegment(second, 'c', 'x'.repeat(10));
    await stop(second);
    expect(quotaOf(server)).toBe(980);
  });
});
