/** Simple and reliable mode end to end over real sockets (spec 3.4b, 4.10, 6). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL, ErrorCode } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import type { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, flush, KEY_A, openClient, quotaOf, REQUEST, requestStatus, sendText, speakSegment, startReliable, startTestServer, stop, useSequence, toneAudio, VOICE_ID } from './fixtures.js';

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

describe('simple mode', () => {
  it('start, ready, input (commit false then true), audio, finish completed, close 1000', async () => {
    const c = await client();
    const quotaBefore = quotaOf(server);
    c.send({ event: 'start', event_id: 's1', request: REQUEST });
    const ready = await c.next('ready');
    expect(ready).toMatchObject({ mode: 'simple', provider: 'svc', model: DEFAULT_MODEL, voice_id: VOICE_ID, format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16, in_reply_to: 's1' });
    expect(ready.request_id.length).toBeGreaterThan(0);
    c.send({ event: 'input', text: 'Hello ', commit: false });
    c.send({ event: 'input', text: 'world.' });
    const finish = await c.next('finish');
    expect(finish).toMatchObject({ reason: 'completed', units: 12, request_id: ready.request_id, session_id: ready.session_id });
    expect((await c.closed).code).toBe(1000);

    const audio = c.all('audio');
    expect(audio.length).toBeGreaterThan(0);
    expect(audio.map((a) => a.sequence)).toEqual(audio.map((_, i) => i + 1));
    expect(new Set(audio.map((a) => a.segment_id)).size).toBe(1);
    expect(audio.every((a) => a.request_id === ready.request_id && a.format === 'pcm' && a.sample_rate === 24_000)).toBe(true);
    // The committed buffer is one segment: the engine's audio of the whole text, byte for byte.
    expect(c.audio().equals(await toneAudio('Hello world.'))).toBe(true);
    expect(quotaOf(server)).toBe(quotaBefore - 12);
    expect(c.badFrames).toEqual([]);
  });

  it('refuses an input that would pass 10,000 characters with segment_too_large, non-terminal', async () => {
    const c = await client();
    c.send({ event: 'start', request: REQUEST });
    await c.next('ready');
    c.send({ event: 'input', event_id: 'i1', text: 'a'.repeat(9_000), commit: false });
    c.send({ event: 'input', event_id: 'i2', text: 'b'.repeat(1_001), commit: false });
    expect(await c.next('error')).toMatchObject({ code: ErrorCode.segmentTooLarge, terminal: false, in_reply_to: 'i2' });
    c.send({ event: 'ping', event_id: 'p1' });
    await c.next('pong');
    expect(c.closeInfo).toBeUndefined();
  });

  it('refuses reliable-mode events in a simple request with invalid_state', async () => {
    const c = await client();
    c.send({ event: 'start', request: REQUEST });
    await c.next('ready');
    c.send({ event: 'text', event_id: 't1', sequence: 1, text: 'hi' });
    expect(await c.next('error')).toMatchObject({ code: ErrorCode.invalidState, terminal: false, in_reply_to: 't1' });
  });
});

describe('reliable mode', () => {
  it('runs start, text/input_ack, flush/segment_accepted/audio/usage/segment_completed, stop/finish', async () => {
    const c = await client();
    const quotaBefore = quotaOf(server);
    const ready = await startReliable(c, 'req-flow');
    expect(ready).toMatchObject({ mode: 'reliable', request_id: 'req-flow', format: 'pcm', sample_rate: 24_000, in_reply_to: 'start-1' });

    c.send({ event: 'text', event_id: 't1', sequence: useSequence(c), text: 'Hello there. ' });
    const ack = await c.next('input_ack');
    expect(ack).toMatchObject({ request_id: 'req-flow', sequence: 1, characters: 13, buffered_characters: 13, remaining_capacity: 10_000 - 13, in_reply_to: 't1' });
    c.send({ event: 'text', event_id: 't2', sequence: useSequence(c), text: 'How are you?' });
    expect(await c.next('input_ack')).toMatchObject({ sequence: 2, characters: 12, buffered_characters: 25, remaining_capacity: 10_000 - 25 });

    c.send({ event: 'flush', event_id: 'f1', segment_id: 'seg-1' });
    const accepted = await c.next('segment_accepted');
    expect(accepted).toMatchObject({ request_id: 'req-flow', segment_id: 'seg-1', characters: 25, reserved_units: 25, in_reply_to: 'f1' });
    const usage = await c.next('usage');
    const done = await c.next('segment_completed');
    expect(done).toMatchObject({ segment_id: 'seg-1', units: 25, in_reply_to: 'f1' });
    expect(usage).toMatchObject({ segment_id: 'seg-1', segment_units: 25, session_units: 25, quota_remaining: quotaBefore - 25 });
    const seg1 = c.audio('seg-1');
    expect(done.audio_bytes).toBe(seg1.length);
    expect(usage.audio_bytes).toBe(seg1.length);
    expect(seg1.equals(await toneAudio('Hello there. How are you?'))).toBe(true);

    // Order: accepted, then every audio frame, then usage, then completed.
    const names = c.events.map((e) => e.event).filter((n) => ['segment_accepted', 'audio', 'usage', 'segment_completed'].includes(n));
    expect(names[0]).toBe('segment_accepted');
    expect(names.slice(-2)).toEqual(['usage', 'segment_completed']);
    expect(names.slice(1, -2).every((n) => n === 'audio')).toBe(true);

    const second = await speakSegment(c, 'seg-2', 'Fine.');
    expect(second.units).toBe(5);
    const finish = await stop(c);
    expect(finish).toMatchObject({ reason: 'completed', units: 30, request_id: 'req-flow' });
    expect((await c.closed).code).toBe(1000);
    expect(quotaOf(server)).toBe(quotaBefore - 30);

    const sequences = c.all('audio').map((a) => a.sequence);
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
    expect(c.badFrames).toEqual([]);
    const status = await requestStatus(server, 'req-flow');
    expect(status.body).toMatchObject({ state: 'completed', units: 30, result_available: true, retryable: false });
  });

  it('queues a flush sent while a segment generates and runs segments in order', async () => {
    const c = await client();
    await startReliable(c, 'req-queue');
    await sendText(c, 'First segment with some words.');
    flush(c, 'a');
    await sendText(c, 'Second.');
    flush(c, 'b');
    await c.next('segment_completed', (e) => e.segment_id === 'b');
    const audio = c.all('audio');
    const lastA = audio.map((a) => a.segment_id).lastIndexOf('a');
    const firstB = audio.map((a) => a.segment_id).indexOf('b');
    expect(lastA).toBeLessThan(firstB);
    expect(c.all('segment_completed').map((e) => e.segment_id)).toEqual(['a', 'b']);
  });

  it('answers ping with pong in reply, in both modes', async () => {
    const c = await client();
    c.send({ event: 'ping', event_id: 'p0', timestamp: 123 });
    expect(await c.next('pong')).toMatchObject({ in_reply_to: 'p0', ping_timestamp: 123 });
    await startReliable(c, 'req-ping');
    c.send({ event: 'ping', event_id: 'p1' });
    expect(await c.next('pong')).toMatchObject({ in_reply_to: 'p1', request_id: 'req-ping' });
  });

  it('serves wav with the streaming header on the first audio frame only', async () => {
    const c = await client();
    c.send({ event: 'start', mode: 'reliable', event_id: 's', request_id: 'req-wav', request: { ...REQUEST, format: 'wav' } });
    expect(await c.next('ready')).toMatchObject({ format: 'wav', sample_rate: 24_000 });
    await speakSegment(c, 'one', 'Hi.');
    await speakSegment(c, 'two', 'Yo.');
    const one = c.audio('one');
    const two = c.audio('two');
    expect(one.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(one.subarray(44).equals(await toneAudio('Hi.'))).toBe(true);
    expect(two.equals(await toneAudio('Yo.'))).toBe(true);
  });

  it('keeps the key out of every event', async () => {
    const c = await client();
    await startReliable(c, 'req-key');
    await speakSegment(c, 's', 'Secret?');
    expect(JSON.stringify(c.events.filter((e) => e.event !== 'audio'))).not.toContain(KEY_A);
  });
});
