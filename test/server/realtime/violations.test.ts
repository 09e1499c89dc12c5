/**
 * Every rule of the realtime protocol and the error it earns: code,
 * `terminal`, `path`, and what happens next (a non-terminal error leaves the
 * connection usable; a terminal one ends the request with `finish` reason
 * `error` and closes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import { PUBLIC_VOICES } from '../../../src/server/catalog.js';
import type { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { flush, openClient, REQUEST, sendText, speakSegment, startReliable, startTestServer, useSequence } from './fixtures.js';

let server: ReferenceServer;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Step = (c: RealtimeTestClient) => Promise<void> | void;
interface Case {
  name: string;
  /** Open a reliable request first (default true). */
  started?: boolean;
  act: Step;
  code: string;
  terminal?: boolean;
  path?: string;
  /** Check after the error (e.g. that the frame was ignored). */
  then?: Step;
}

const chloe = PUBLIC_VOICES.find((v) => v.name === 'Chloe')!; // not on lyra-v2
const longText = 'x'.repeat(2_000);

const cases: Case[] = [
  { name: 'text before start', started: false, act: (c) => c.send({ event: 'text', event_id: c.id(), sequence: 1, text: 'hi' }), code: ErrorCode.invalidState },
  { name: 'flush before start', started: false, act: (c) => c.send({ event: 'flush', event_id: c.id(), segment_id: 's' }), code: ErrorCode.invalidState },
  { name: 'stop before start', started: false, act: (c) => c.send({ event: 'stop', event_id: c.id() }), code: ErrorCode.invalidState },
  { name: 'input in reliable mode', act: (c) => c.send({ event: 'input', event_id: c.id(), text: 'hi' }), code: ErrorCode.invalidState },
  {
    name: 'a text sequence other than the next expected (frame ignored)',
    act: (c) => c.send({ event: 'text', event_id: c.id(), sequence: 2, text: 'hi' }),
    code: ErrorCode.invalidState,
    path: 'sequence',
    then: async (c) => {
      const id = c.id();
      c.send({ event: 'text', event_id: id, sequence: useSequence(c), text: 'hey' });
      expect(await c.next('input_ack', (a) => a.in_reply_to === id)).toMatchObject({ sequence: 1, buffered_characters: 3 });
    },
  },
  {
    name: 'a repeated event_id',
    act: async (c) => {
      c.send({ event: 'text', event_id: 'same', sequence: useSequence(c), text: 'a' });
      await c.next('input_ack');
      c.send({ event: 'text', event_id: 'same', sequence: 2, text: 'b' });
    },
    code: ErrorCode.invalidMessage,
    path: 'event_id',
  },
  { name: 'flush with nothing buffered', act: (c) => void flush(c, 'empty'), code: ErrorCode.emptySegment },
  { name: 'a text frame over 2,000 characters', act: (c) => c.send({ event: 'text', event_id: c.id(), sequence: 1, text: 'y'.repeat(2_001) }), code: ErrorCode.segmentTooLarge, path: 'text' },
  {
    name: 'a segment over 10,000 characters (its sequence is not consumed)',
    act: async (c) => {
      for (let i = 0; i < 5; i++) await sendText(c, longText);
      c.send({ event: 'text', event_id: c.id(), sequence: 6, text: 'z' });
    },
    code: ErrorCode.segmentTooLarge,
    path: 'text',
    then: async (c) => {
      flush(c, 'big');
      expect(await c.next('segment_accepted')).toMatchObject({ characters: 10_000 });
      const id = c.id();
      c.send({ event: 'text', event_id: id, sequence: useSequence(c), text: 'z' });
      expect(await c.next('input_ack', (a) => a.in_reply_to === id)).toMatchObject({ sequence: 6 });
    },
  },
  {
    name: 'a segment_id reused with different text',
    act: async (c) => {
      await speakSegment(c, 'dup', 'One.');
      await sendText(c, 'Two.');
      flush(c, 'dup');
    },
    code: ErrorCode.idempotencyConflict,
    terminal: true,
    path: 'segment_id',
  },
  {
    name: 'a flush of a segment still generating',
    act: async (c) => {
      await sendText(c, 'A long segment that takes a while to generate. '.repeat(20));
      flush(c, 'busy');
      await c.next('segment_accepted');
      await sendText(c, 'A long segment that takes a while to generate. '.repeat(20));
      flush(c, 'busy');
    },
    code: ErrorCode.invalidState,
    path: 'segment_id',
  },
  { name: 'a second start', act: (c) => c.send({ event: 'start', mode: 'reliable', event_id: c.id(), request_id: `r-${++counter}`, request: REQUEST }), code: ErrorCode.invalidState },
  {
    name: 'text after stop',
    act: async (c) => {
      await sendText(c, 'Some words to keep the request busy for a moment. '.repeat(10));
      flush(c, 'last');
      await c.next('segment_accepted');
      c.send({ event: 'stop', event_id: c.id() });
      c.send({ event: 'text', event_id: c.id(), sequence: 2, text: 'late' });
    },
    code: ErrorCode.invalidState,
    then: async (c) => {
      expect(await c.next('finish')).toMatchObject({ reason: 'completed' });
    },
  },
  { name: 'ping without event_id in reliable mode', act: (c) => c.send({ event: 'ping' }), code: ErrorCode.invalidMessage, path: 'event_id' },
  { name: 'an unknown voice', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, voice_id: '00000000-0000-0000-0000-000000000000' } }), code: ErrorCode.voiceNotFound, path: 'request.voice_id' },
  { name: 'an unknown model', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, model: 'gpt-4o-mini-tts' } }), code: ErrorCode.modelNotFound, path: 'request.model' },
  { name: 'a voice that does not support the model', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, voice_id: chloe.voiceId, model: 'lyra-v2' } }), code: ErrorCode.unsupportedParameter, path: 'request.voice_id' },
  { name: 'a format the provider lacks', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, model: 'aurora-tts-1', format: 'opus' } }), code: ErrorCode.unsupportedParameter, path: 'request.format' },
  { name: 'a provider parameter the provider does not list', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, model: 'aurora-tts-1', emotion: 'happy' } }), code: ErrorCode.unsupportedParameter, path: 'request.emotion' },
  { name: 'an emotion the provider does not know', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, emotion: 'smug' } }), code: ErrorCode.unsupportedParameter, path: 'request.emotion' },
  { name: 'an unknown start.request field', started: false, act: (c) => c.send({ event: 'start', request: { ...REQUEST, pitch: 2 } }), code: ErrorCode.unsupportedParameter, path: 'request.pitch' },
  { name: 'a reliable start without request_id', started: false, act: (c) => c.send({ event: 'start', mode: 'reliable', event_id: c.id(), request: REQUEST }), code: ErrorCode.invalidMessage, path: 'request_id' },
  { name: 'retry_failed in simple mode', started: false, act: (c) => c.send({ event: 'start', retry_failed: true, request: REQUEST }), code: ErrorCode.invalidMessage, path: 'retry_failed' },
  { name: 'an unknown top-level field', act: (c) => c.send({ event: 'ping', event_id: c.id(), extra: 1 }), code: ErrorCode.invalidMessage, path: 'extra' },
  { name: 'an unknown event', act: (c) => c.send({ event: 'speak', event_id: c.id() }), code: ErrorCode.invalidMessage, path: 'event' },
  { name: 'bytes that are not MessagePack', act: (c) => c.sendRaw(Uint8Array.of(0xc1, 0xc1, 0xc1)), code: ErrorCode.invalidMessagepack },
  { name: 'a MessagePack value that is not a map', act: (c) => c.sendRaw(Uint8Array.of(0x93, 1, 2, 3)), code: ErrorCode.invalidMessage },
  { name: 'a WebSocket text frame', act: (c) => c.sendRaw('{"event":"ping"}'), code: ErrorCode.invalidMessage },
];

describe('reliable-mode rule violations', () => {
  it.each(cases)('$name → $code', async (tc) => {
    const c = await openClient(server);
    try {
      if (tc.started ?? true) await startReliable(c, `viol-${++counter}`);
      await tc.act(c);
      const error = await c.next('error');
      expect(error.code).toBe(tc.code);
      expect(error.terminal).toBe(tc.terminal ?? false);
      expect(typeof error.retryable).toBe('boolean');
      expect(error.session_id).toMatch(/^sess_/);
      if (tc.path !== undefined) expect(error.path).toBe(tc.path);
      if (tc.terminal) {
        expect(await c.next('finish')).toMatchObject({ reason: 'error' });
        expect((await c.closed).code).toBe(1008);
      } else {
        await tc.then?.(c);
        if (!c.closeInfo && !c.all('finish').length) {
          // Still usable: a ping is answered.
          const id = c.id('ping');
          c.send({ event: 'ping', event_id: id });
          await c.next('pong', (p) => p.in_reply_to === id);
        }
      }
      expect(c.badFrames).toEqual([]);
    } finally {
      c.ws.terminate();
    }
  });

  it('accepts a corrected start after a refused one', async () => {
    const c = await openClient(server);
    try {
      c.send({ event: 'start', mode: 'reliable', event_id: 'bad', request_id: 'fix-me', request: { ...REQUEST, model: 'nope' } });
      expect(await c.next('error')).toMatchObject({ code: ErrorCode.modelNotFound, in_reply_to: 'bad' });
      c.send({ event: 'start', mode: 'reliable', event_id: 'good', request_id: 'fix-me', request: REQUEST });
      expect(await c.next('ready')).toMatchObject({ request_id: 'fix-me', in_reply_to: 'good' });
    } finally {
      c.ws.terminate();
    }
  });
});
