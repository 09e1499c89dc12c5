/**
 * Every realtime limit of spec section 8 (and 4.10), checked through the codec:
 * exactly at the limit is accepted, one past it is rejected with the spec's code.
 * Characters are Unicode code points, so limits are also probed with emoji
 * (two UTF-16 units, four UTF-8 bytes each).
 */
import { describe, expect, it } from 'vitest';
import { decodeClientEvent, encodeFrame, LIMITS } from '../../src/protocol/index.js';
import { protocolErrorOf } from './frames.js';

const EMOJI = '😀';
const req = { voice_id: 'v', model: 'm' };

interface Case {
  name: string;
  event: Record<string, unknown>;
  /** null: accepted. */
  code: string | null;
  path?: string;
}

const a = (n: number): string => 'a'.repeat(n);
const e = (n: number): string => EMOJI.repeat(n);
const textEv = (text: unknown) => ({ event: 'text', event_id: 'e', sequence: 1, text });
const inputEv = (text: unknown) => ({ event: 'input', text });
const seqEv = (sequence: unknown) => ({ event: 'text', event_id: 'e', sequence, text: 'a' });
const startWith = (field: string, value: unknown) => ({ event: 'start', request: { ...req, [field]: value } });

const cases: Case[] = [
  // text frame: 2,000 characters
  { name: 'text frame of 2,000 ASCII characters', event: textEv(a(2000)), code: null },
  { name: 'text frame of 2,000 emoji (4,000 UTF-16 units)', event: textEv(e(2000)), code: null },
  { name: 'text frame of 1,999 ASCII + 1 emoji', event: textEv(a(1999) + EMOJI), code: null },
  { name: 'text frame of 2,001 ASCII characters', event: textEv(a(2001)), code: 'segment_too_large', path: 'text' },
  { name: 'text frame of 2,001 emoji', event: textEv(e(2001)), code: 'segment_too_large', path: 'text' },
  { name: 'text frame of 1 character', event: textEv('a'), code: null },
  { name: 'empty text frame', event: textEv(''), code: 'invalid_message', path: 'text' },
  // simple input: 10,000 characters per request (one frame cannot exceed it)
  { name: 'input of 10,000 ASCII characters', event: inputEv(a(10_000)), code: null },
  { name: 'input of 10,000 emoji', event: inputEv(e(10_000)), code: null },
  { name: 'input of 10,001 characters', event: inputEv(a(10_001)), code: 'segment_too_large', path: 'text' },
  { name: 'input of 10,001 emoji', event: inputEv(e(10_001)), code: 'segment_too_large', path: 'text' },
  { name: 'empty input', event: inputEv(''), code: 'invalid_message', path: 'text' },
  // sequence: a positive integer
  { name: 'sequence 1', event: seqEv(1), code: null },
  { name: 'sequence 2^53-1', event: seqEv(Number.MAX_SAFE_INTEGER), code: null },
  { name: 'sequence 0', event: seqEv(0), code: 'invalid_message', path: 'sequence' },
  { name: 'sequence -1', event: seqEv(-1), code: 'invalid_message', path: 'sequence' },
  { name: 'sequence 1.5', event: seqEv(1.5), code: 'invalid_message', path: 'sequence' },
  { name: 'sequence 2^53 (not a safe integer)', event: seqEv(2 ** 53), code: 'invalid_message', path: 'sequence' },
  { name: 'sequence NaN', event: seqEv(Number.NaN), code: 'invalid_message', path: 'sequence' },
  // chunk_length: integer 50 to 1000
  { name: 'chunk_length 49', event: startWith('chunk_length', 49), code: 'invalid_message', path: 'request.chunk_length' },
  { name: 'chunk_length 50', event: startWith('chunk_length', 50), code: null },
  { name: 'chunk_length 1000', event: startWith('chunk_length', 1000), code: null },
  { name: 'chunk_length 1001', event: startWith('chunk_length', 1001), code: 'invalid_message', path: 'request.chunk_length' },
  { name: 'chunk_length 100.5', event: startWith('chunk_length', 100.5), code: 'invalid_message', path: 'request.chunk_length' },
  { name: 'chunk_length "100"', event: startWith('chunk_length', '100'), code: 'invalid_message', path: 'request.chunk_length' },
  // volume: 0 to 10
  { name: 'volume -0.01', event: startWith('volume', -0.01), code: 'invalid_message', path: 'request.volume' },
  { name: 'volume 0', event: startWith('volume', 0), code: null },
  { name: 'volume 0.5', event: startWith('volume', 0.5), code: null },
  { name: 'volume 10', event: startWith('volume', 10), code: null },
  { name: 'volume 10.01', event: startWith('volume', 10.01), code: 'invalid_message', path: 'request.volume' },
  { name: 'volume Infinity', event: startWith('volume', Number.POSITIVE_INFINITY), code: 'invalid_message', path: 'request.volume' },
  { name: 'volume NaN', event: startWith('volume', Number.NaN), code: 'invalid_message', path: 'request.volume' },
  // speed: 0.5 to 2
  { name: 'speed 0.49', event: startWith('speed', 0.49), code: 'invalid_message', path: 'request.speed' },
  { name: 'speed 0.5', event: startWith('speed', 0.5), code: null },
  { name: 'speed 2', event: startWith('speed', 2), code: null },
  { name: 'speed 2.01', event: startWith('speed', 2.01), code: 'invalid_message', path: 'request.speed' },
  { name: 'speed 0', event: startWith('speed', 0), code: 'invalid_message', path: 'request.speed' },
  // language: 1 to 32 characters
  { name: 'language of 0 characters', event: startWith('language', ''), code: 'invalid_message', path: 'request.language' },
  { name: 'language of 1 character', event: startWith('language', 'x'), code: null },
  { name: 'language of 32 characters', event: startWith('language', a(32)), code: null },
  { name: 'language of 32 emoji', event: startWith('language', e(32)), code: null },
  { name: 'language of 33 characters', event: startWith('language', a(33)), code: 'invalid_message', path: 'request.language' },
  // ids: 1 to 128 characters
  { name: 'request_id of 0 characters', event: { event: 'start', mode: 'reliable', event_id: 'e', request_id: '', request: req }, code: 'invalid_message', path: 'request_id' },
  { name: 'request_id of 1 character', event: { event: 'start', mode: 'reliable', event_id: 'e', request_id: 'r', request: req }, code: null },
  { name: 'request_id of 128 characters', event: { event: 'start', mode: 'reliable', event_id: 'e', request_id: a(128), request: req }, code: null },
  { name: 'request_id of 128 emoji', event: { event: 'start', mode: 'reliable', event_id: 'e', request_id: e(128), request: req }, code: null },
  { name: 'request_id of 129 characters', event: { event: 'start', mode: 'reliable', event_id: 'e', request_id: a(129), request: req }, code: 'invalid_message', path: 'request_id' },
  { name: 'segment_id of 0 characters', event: { event: 'flush', event_id: 'e', segment_id: '' }, code: 'invalid_message', path: 'segment_id' },
  { name: 'segment_id of 128 characters', event: { event: 'flush', event_id: 'e', segment_id: a(128) }, code: null },
  { name: 'segment_id of 129 characters', event: { event: 'flush', event_id: 'e', segment_id: a(129) }, code: 'invalid_message', path: 'segment_id' },
  { name: 'segment_id of 129 emoji', event: { event: 'flush', event_id: 'e', segment_id: e(129) }, code: 'invalid_message', path: 'segment_id' },
  { name: 'event_id of 0 characters', event: { event: 'stop', event_id: '' }, code: 'invalid_message', path: 'event_id' },
  { name: 'event_id of 128 characters', event: { event: 'stop', event_id: a(128) }, code: null },
  { name: 'event_id of 129 characters', event: { event: 'stop', event_id: a(129) }, code: 'invalid_message', path: 'event_id' },
  { name: 'voice_id of 0 characters', event: { event: 'start', request: { ...req, voice_id: '' } }, code: 'invalid_message', path: 'request.voice_id' },
  { name: 'voice_id of 129 characters', event: { event: 'start', request: { ...req, voice_id: a(129) } }, code: 'invalid_message', path: 'request.voice_id' },
  { name: 'model of 129 characters', event: { event: 'start', request: { ...req, model: a(129) } }, code: 'invalid_message', path: 'request.model' },
  // formats of 4.10
  ...['mp3', 'wav', 'opus', 'pcm'].map((format): Case => ({ name: `format ${format}`, event: startWith('format', format), code: null })),
  { name: 'format MP3 (case matters)', event: startWith('format', 'MP3'), code: 'unsupported_parameter', path: 'request.format' },
  // auth token
  { name: 'token of 0 characters', event: { event: 'auth', token: '' }, code: 'invalid_message', path: 'token' },
];

describe('limits of spec section 8 through decodeClientEvent', () => {
  it.each(cases)('$name -> $code', (row) => {
    const frame = encodeFrame(row.event);
    if (row.code === null) {
      expect(decodeClientEvent(frame)).toStrictEqual(row.event);
    } else {
      const err = protocolErrorOf(() => decodeClientEvent(frame));
      expect({ code: err.code, path: err.path }).toEqual({ code: row.code, path: row.path });
    }
  });

  it('uses the numbers of section 8', () => {
    expect(LIMITS).toMatchObject({
      textFrameMaxChars: 2_000,
      segmentMaxChars: 10_000,
      simpleRequestMaxChars: 10_000,
      idMinChars: 1,
      idMaxChars: 128,
      chunkLengthMin: 50,
      chunkLengthMax: 1_000,
      volumeMin: 0,
      volumeMax: 10,
      speedMin: 0.5,
      speedMax: 2,
      languageMinChars: 1,
      languageMaxChars: 32,
    });
  });
});
