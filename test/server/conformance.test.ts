/**
 * Conformance points an independent checker found: a malformed
 * percent-encoding in a path is the client's 400, and every direct reply,
 * errors included, carries `in_reply_to` (spec 6).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeMap, encodeFrame } from '../../src/protocol/codec.js';
import { REALTIME_PATHS, SUBPROTOCOL } from '../../src/protocol/constants.js';
import { PUBLIC_VOICES } from '../../src/server/catalog.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';

const KEY = 'sk-conformance';
let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'c' }] });
});
afterAll(() => server.close());

it('a malformed percent-encoding in a path id answers 400 invalid_request, not 500', async () => {
  for (const path of ['/speech/tts/jobs/%E0%A4%A', '/tts/tasks/%zz', '/asr/tasks/%']) {
    const res = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status, path).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  }
});

/** Send `frames` in turn (the next after each server event that is not audio), return the first error event. */
async function firstError(frames: Record<string, unknown>[]): Promise<Record<string, unknown>> {
  const ws = new WebSocket(`${server.wsUrl}${REALTIME_PATHS.live}`, SUBPROTOCOL, { headers: { authorization: `Bearer ${KEY}` } });
  try {
    return await new Promise((resolve, reject) => {
      let i = 0;
      ws.on('error', reject);
      ws.on('message', (data: Buffer) => {
        const event = decodeMap(data);
        if (event['event'] === 'error') resolve(event);
        else if (i < frames.length) ws.send(encodeFrame(frames[i++]!));
      });
    });
  } finally {
    ws.terminate();
  }
}

const VOICE = PUBLIC_VOICES[0]!.voiceId;
let requests = 0;
/** A reliable start with a request id of its own (a repeated id answers request_status). */
const start = (request: Record<string, unknown> = { voice_id: VOICE, model: 'svc-s21pro-flash' }) => ({ event: 'start', event_id: 'st-1', mode: 'reliable', request_id: `c-${Date.now()}-${++requests}`, request });

describe('error replies carry in_reply_to', () => {
  it.each([
    ['start refused (unknown voice)', [start({ voice_id: 'nope', model: 'svc-s21pro-flash' })], 'st-1'],
    ['start refused by the schema (speed out of range)', [start({ voice_id: VOICE, model: 'svc-s21pro-flash', speed: 9 })], 'st-1'],
    ['text with the wrong sequence', [start(), { event: 'text', event_id: 'tx-5', sequence: 5, text: 'x' }], 'tx-5'],
    ['text too long for one frame', [start(), { event: 'text', event_id: 'tx-long', sequence: 1, text: 'x'.repeat(2_001) }], 'tx-long'],
    ['input over the simple-mode limit', [{ event: 'start', event_id: 'st-s', request: { voice_id: VOICE, model: 'svc-s21pro-flash' } }, { event: 'input', event_id: 'in-1', text: 'a'.repeat(10_001) }], 'in-1'],
  ])('%s', async (_name, frames, replyTo) => {
    const error = await firstError(frames as Record<string, unknown>[]);
    expect(error['in_reply_to']).toBe(replyTo);
  });
});
