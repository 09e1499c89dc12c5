import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/errors.js';
import {
  decodeClientEvent,
  decodeMap,
  decodeServerEvent,
  encodeFrame,
  parseClientEvent,
  parseServerEvent,
  type AudioEvent,
  type ClientEvent,
  type ServerEvent,
} from '../../src/protocol/index.js';
import { bytes, fixmap, protocolErrorOf, rawStr, str } from './frames.js';

const envelope = { event_id: 'evt_1', trace_id: 'trc_1', timestamp: 1_763_000_000_123 };
const pcm = { sample_rate: 24_000, channels: 1, bit_depth: 16 };
/** Every byte value once, so a lossy round trip would show. */
const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
const minimalRequest = { voice_id: '0b7c6a4e-1f43-4a53-9a3b-6a5c1f0e2d11', model: 'svc-s21pro-flash' };
const fullRequest = {
  ...minimalRequest,
  format: 'pcm',
  speed: 1.25,
  volume: 7.5,
  language: 'en-US',
  chunk_length: 200,
  latency: 'low' as const,
  emotion: 'calm',
  instructions: 'Read slowly.',
  optimize_instructions: true,
};

const clientEvents: [string, ClientEvent][] = [
  ['auth', { event: 'auth', token: 'tkt_abc' }],
  ['auth with event_id', { event: 'auth', token: 'tkt_abc', event_id: 'e0' }],
  ['start simple, minimal', { event: 'start', request: minimalRequest }],
  ['start simple, every request field', { event: 'start', mode: 'simple', event_id: 'e1', request: fullRequest }],
  ['start reliable', { event: 'start', mode: 'reliable', event_id: 'e1', request_id: 'req_1', request: minimalRequest }],
  ['start reliable retry', { event: 'start', mode: 'reliable', event_id: 'e1', request_id: 'req_1', retry_failed: true, request: minimalRequest }],
  ['start simple retry_failed false', { event: 'start', retry_failed: false, request: minimalRequest }],
  ['input', { event: 'input', text: 'Hello there.' }],
  ['input uncommitted', { event: 'input', text: 'Hello ', commit: false, event_id: 'e2' }],
  ['text', { event: 'text', event_id: 'e3', sequence: 1, text: 'Héllo wörld 😀 你好' }],
  ['flush', { event: 'flush', event_id: 'e4', segment_id: 'seg_1' }],
  ['stop', { event: 'stop', event_id: 'e5' }],
  ['ping simple', { event: 'ping' }],
  ['ping with id and timestamp', { event: 'ping', event_id: 'e6', timestamp: 1_763_000_000_000 }],
];

const serverEvents: [string, ServerEvent][] = [
  ['authenticated', { event: 'authenticated', ...envelope, session_id: 'ses_1', site: 'default', protocol_version: 2, quota: 99_500 }],
  ['ready simple pcm', { event: 'ready', ...envelope, in_reply_to: 'e1', mode: 'simple', request_id: 'req_1', session_id: 'ses_1', provider: 'espeak', model: 'svc-s21pro-flash', voice_id: minimalRequest.voice_id, format: 'pcm', ...pcm }],
  ['ready reliable mp3', { event: 'ready', ...envelope, mode: 'reliable', request_id: 'req_1', session_id: 'ses_1', provider: 'espeak', model: 'svc-s21pro-flash', voice_id: minimalRequest.voice_id, format: 'mp3' }],
  ['input_ack', { event: 'input_ack', ...envelope, in_reply_to: 'e3', request_id: 'req_1', sequence: 3, characters: 120, buffered_characters: 360, remaining_capacity: 9_640 }],
  ['segment_accepted', { event: 'segment_accepted', ...envelope, request_id: 'req_1', segment_id: 'seg_1', characters: 360, reserved_units: 360 }],
  ['audio pcm', { event: 'audio', ...envelope, request_id: 'req_1', session_id: 'ses_1', segment_id: 'seg_1', sequence: 1, audio: allBytes, format: 'pcm', ...pcm }],
  ['audio opus, empty payload', { event: 'audio', ...envelope, request_id: 'req_1', session_id: 'ses_1', segment_id: 'seg_1', sequence: 2, audio: new Uint8Array(0), format: 'opus' }],
  ['usage', { event: 'usage', ...envelope, request_id: 'req_1', segment_id: 'seg_1', segment_units: 360, session_units: 720, quota_remaining: 98_780, audio_bytes: 48_000 }],
  ['segment_completed', { event: 'segment_completed', ...envelope, request_id: 'req_1', segment_id: 'seg_1', units: 360, audio_bytes: 48_000 }],
  ['request_status', { event: 'request_status', ...envelope, request_id: 'req_1', state: 'completed', retryable: false, units: 720, result_available: true }],
  ['warning', { event: 'warning', ...envelope, request_id: 'req_1', code: 'client_backpressure', message: 'slow reader' }],
  ['warning without request_id', { event: 'warning', ...envelope, code: 'x', message: 'y' }],
  ['error, every field', { event: 'error', ...envelope, in_reply_to: 'e3', request_id: 'req_1', session_id: 'ses_1', code: 'segment_too_large', message: 'text too long', retryable: false, terminal: false, stage: 'validation', path: 'text' }],
  ['error, required fields only', { event: 'error', ...envelope, code: 'internal_error', message: 'boom', retryable: true, terminal: true }],
  ['finish', { event: 'finish', ...envelope, request_id: 'req_1', session_id: 'ses_1', reason: 'server_draining', units: 720 }],
  ['pong', { event: 'pong', ...envelope, in_reply_to: 'e6', session_id: 'ses_1', request_id: 'req_1' }],
];

describe('round trips', () => {
  it.each(clientEvents)('client event %s: encodeFrame then decodeClientEvent gives it back', (_name, event) => {
    expect(decodeClientEvent(encodeFrame(event))).toStrictEqual(event);
  });

  it.each(serverEvents)('server event %s: encodeFrame then decodeServerEvent gives it back', (_name, event) => {
    expect(decodeServerEvent(encodeFrame(event))).toStrictEqual(event);
  });

  it('covers every client and server event name of the spec', () => {
    expect(new Set(clientEvents.map(([, e]) => e.event))).toEqual(new Set(['auth', 'start', 'input', 'text', 'flush', 'stop', 'ping']));
    expect(new Set(serverEvents.map(([, e]) => e.event))).toEqual(
      new Set(['authenticated', 'ready', 'input_ack', 'segment_accepted', 'audio', 'usage', 'segment_completed', 'request_status', 'warning', 'error', 'finish', 'pong']),
    );
  });

  it.each([4 * 1024, 16 * 1024, 32 * 1024, 1000 * 1024])('audio of %i bytes from a Buffer comes back byte-exact', (size) => {
    const audio = Buffer.alloc(size);
    for (let i = 0; i < size; i++) audio[i] = (i * 7919 + (i >> 8)) & 0xff;
    const frame = encodeFrame({ event: 'audio', ...envelope, request_id: 'r', session_id: 's', segment_id: 'g', sequence: 9, audio, format: 'wav' });
    const decoded = decodeServerEvent(frame) as AudioEvent;
    expect(decoded.audio).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(decoded.audio.buffer, decoded.audio.byteOffset, decoded.audio.byteLength).equals(audio)).toBe(true);
  });

  it('decodes audio as a view into the frame (no copy): keep a copy if the frame buffer is reused', () => {
    const frame = encodeFrame({ event: 'audio', ...envelope, request_id: 'r', session_id: 's', segment_id: 'g', sequence: 1, audio: allBytes, format: 'pcm' });
    const decoded = decodeServerEvent(frame) as AudioEvent;
    expect(decoded.audio.buffer).toBe(frame.buffer);
  });

  it('decodes a frame that is a view into a larger buffer', () => {
    const frame = encodeFrame({ event: 'stop', event_id: 'e5' });
    const padded = new Uint8Array(frame.length + 8).fill(0xc1);
    padded.set(frame, 4);
    expect(decodeClientEvent(padded.subarray(4, 4 + frame.length))).toStrictEqual({ event: 'stop', event_id: 'e5' });
  });

  it('encodeFrame leaves out undefined properties', () => {
    const frame = encodeFrame({ event: 'stop', event_id: 'e5', extra: undefined });
    expect(decodeClientEvent(frame)).toStrictEqual({ event: 'stop', event_id: 'e5' });
  });

  it('parseClientEvent and parseServerEvent validate already decoded maps', () => {
    expect(parseClientEvent({ event: 'stop', event_id: 'e5' })).toStrictEqual({ event: 'stop', event_id: 'e5' });
    expect(protocolErrorOf(() => parseClientEvent({ event: 'stop' })).path).toBe('event_id');
    const pong = { event: 'pong', ...envelope, session_id: 's' };
    expect(parseServerEvent(pong)).toStrictEqual(pong);
  });

  it('decodeMap returns the map without applying a schema', () => {
    expect(decodeMap(encodeFrame({ anything: [1, 'two'], nested: { ok: true } }))).toStrictEqual({ anything: [1, 'two'], nested: { ok: true } });
  });
});

describe('server events keep unknown fields (responses are additive)', () => {
  it.each(serverEvents)('%s with extra fields decodes and keeps them', (_name, event) => {
    const extended = { ...event, future_field: 'x', future_map: { a: [1, 2, { b: null }] }, future_bin: Uint8Array.of(1, 2) };
    expect(decodeServerEvent(encodeFrame(extended))).toStrictEqual(extended);
  });
});

/** A frame, which side decodes it, and the code and path expected. */
interface Rejection {
  name: string;
  frame: Uint8Array;
  side?: 'client' | 'server';
  code: string;
  path?: string;
}

function decodeAs(row: Rejection): () => unknown {
  return row.side === 'server' ? () => decodeServerEvent(row.frame) : () => decodeClientEvent(row.frame);
}

const stopFrame = encodeFrame({ event: 'stop', event_id: 'e5' });

const framing: Rejection[] = [
  { name: 'array', frame: encodeFrame([{ event: 'stop', event_id: 'e5' }]), code: 'invalid_message' },
  { name: 'string', frame: str('stop'), code: 'invalid_message' },
  { name: 'nil', frame: bytes(0xc0), code: 'invalid_message' },
  { name: 'bin holding a valid frame', frame: encodeFrame(stopFrame), code: 'invalid_message' },
  { name: 'integer', frame: bytes(42), code: 'invalid_message' },
  { name: 'boolean', frame: bytes(0xc3), code: 'invalid_message' },
  { name: 'array on the server side', frame: encodeFrame([]), side: 'server', code: 'invalid_message' },
  { name: 'empty frame', frame: new Uint8Array(0), code: 'invalid_messagepack' },
  { name: 'truncated by one byte', frame: stopFrame.subarray(0, stopFrame.length - 1), code: 'invalid_messagepack' },
  { name: 'truncated map header', frame: bytes(0xde, 0x00), code: 'invalid_messagepack' },
  { name: 'map with a key and no value', frame: bytes(fixmap(1), str('event')), code: 'invalid_messagepack' },
  { name: 'trailing byte', frame: bytes(stopFrame, 0xc0), code: 'invalid_messagepack' },
  { name: 'two maps in one frame', frame: bytes(stopFrame, stopFrame), code: 'invalid_messagepack' },
  { name: 'reserved 0xc1 as the frame', frame: bytes(0xc1), code: 'invalid_messagepack' },
  { name: 'reserved 0xc1 as a value', frame: bytes(fixmap(2), str('event'), str('stop'), str('event_id'), 0xc1), code: 'invalid_messagepack' },
  { name: 'reserved 0xc1 as a key', frame: bytes(fixmap(1), 0xc1, 0xc0), code: 'invalid_messagepack' },
  { name: 'truncated array (not a map and malformed)', frame: bytes(0x92, 0x01), code: 'invalid_messagepack' },
  // Legal MessagePack, so it decodes; a timestamp extension where the schema wants a number is the wrong type.
  { name: 'extension value where a number belongs', frame: bytes(fixmap(2), str('event'), str('ping'), str('timestamp'), 0xd6, 0xff, 0, 0, 0, 0), code: 'invalid_message' },
  { name: 'truncated on the server side', frame: stopFrame.subarray(0, 3), side: 'server', code: 'invalid_messagepack' },
];

describe('frames that are not one well-formed MessagePack map', () => {
  it.each(framing)('$name -> $code', (row) => {
    const err = protocolErrorOf(decodeAs(row));
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.code).toBe(row.code);
  });
});

const req = minimalRequest;
const fieldRejections: Rejection[] = [
  // event name
  { name: 'no event field', frame: encodeFrame({ text: 'hi' }), code: 'invalid_message', path: 'event' },
  { name: 'event is not a string', frame: encodeFrame({ event: 5 }), code: 'invalid_message', path: 'event' },
  { name: 'unknown client event', frame: encodeFrame({ event: 'speak' }), code: 'invalid_message', path: 'event' },
  { name: 'server event sent as a client event', frame: encodeFrame({ event: 'ready', ...envelope }), code: 'invalid_message', path: 'event' },
  { name: 'inherited name toString', frame: encodeFrame({ event: 'toString' }), code: 'invalid_message', path: 'event' },
  { name: 'unknown server event', frame: encodeFrame({ event: 'speak', ...envelope }), side: 'server', code: 'invalid_message', path: 'event' },
  { name: 'client event sent as a server event', frame: encodeFrame({ event: 'stop', event_id: 'e' }), side: 'server', code: 'invalid_message', path: 'event' },
  // unknown fields
  { name: 'unknown top-level field on stop', frame: encodeFrame({ event: 'stop', event_id: 'e', foo: 1 }), code: 'invalid_message', path: 'foo' },
  { name: 'unknown top-level field on start', frame: encodeFrame({ event: 'start', request: req, voice_id: 'v' }), code: 'invalid_message', path: 'voice_id' },
  { name: 'unknown top-level field on text', frame: encodeFrame({ event: 'text', event_id: 'e', sequence: 1, text: 'a', commit: true }), code: 'invalid_message', path: 'commit' },
  { name: 'unknown top-level field on auth', frame: encodeFrame({ event: 'auth', token: 't', api_key: 'k' }), code: 'invalid_message', path: 'api_key' },
  { name: 'unknown request field', frame: encodeFrame({ event: 'start', request: { ...req, pitch: 3 } }), code: 'unsupported_parameter', path: 'request.pitch' },
  { name: 'camelCase request field', frame: encodeFrame({ event: 'start', request: { ...req, chunkLength: 100 } }), code: 'unsupported_parameter', path: 'request.chunkLength' },
  { name: 'unsupported format', frame: encodeFrame({ event: 'start', request: { ...req, format: 'flac' } }), code: 'unsupported_parameter', path: 'request.format' },
  // missing fields
  { name: 'start without request', frame: encodeFrame({ event: 'start' }), code: 'invalid_message', path: 'request' },
  { name: 'request without voice_id', frame: encodeFrame({ event: 'start', request: { model: 'm' } }), code: 'invalid_message', path: 'request.voice_id' },
  { name: 'request without model', frame: encodeFrame({ event: 'start', request: { voice_id: 'v' } }), code: 'invalid_message', path: 'request.model' },
  { name: 'text without sequence', frame: encodeFrame({ event: 'text', event_id: 'e', text: 'a' }), code: 'invalid_message', path: 'sequence' },
  { name: 'text without event_id', frame: encodeFrame({ event: 'text', sequence: 1, text: 'a' }), code: 'invalid_message', path: 'event_id' },
  { name: 'flush without segment_id', frame: encodeFrame({ event: 'flush', event_id: 'e' }), code: 'invalid_message', path: 'segment_id' },
  { name: 'stop without event_id', frame: encodeFrame({ event: 'stop' }), code: 'invalid_message', path: 'event_id' },
  { name: 'auth without token', frame: encodeFrame({ event: 'auth' }), code: 'invalid_message', path: 'token' },
  { name: 'input without text', frame: encodeFrame({ event: 'input' }), code: 'invalid_message', path: 'text' },
  // wrong types
  { name: 'event_id is a number', frame: encodeFrame({ event: 'stop', event_id: 7 }), code: 'invalid_message', path: 'event_id' },
  { name: 'text is bytes', frame: encodeFrame({ event: 'input', text: new TextEncoder().encode('hi') }), code: 'invalid_message', path: 'text' },
  { name: 'text is a number', frame: encodeFrame({ event: 'text', event_id: 'e', sequence: 1, text: 12 }), code: 'invalid_message', path: 'text' },
  { name: 'sequence is a string', frame: encodeFrame({ event: 'text', event_id: 'e', sequence: '1', text: 'a' }), code: 'invalid_message', path: 'sequence' },
  { name: 'commit is a number', frame: encodeFrame({ event: 'input', text: 'a', commit: 1 }), code: 'invalid_message', path: 'commit' },
  { name: 'request is a string', frame: encodeFrame({ event: 'start', request: 'voice' }), code: 'invalid_message', path: 'request' },
  { name: 'request is an array', frame: encodeFrame({ event: 'start', request: [req] }), code: 'invalid_message', path: 'request' },
  { name: 'voice_id is a number', frame: encodeFrame({ event: 'start', request: { ...req, voice_id: 1 } }), code: 'invalid_message', path: 'request.voice_id' },
  { name: 'speed is a string', frame: encodeFrame({ event: 'start', request: { ...req, speed: '1' } }), code: 'invalid_message', path: 'request.speed' },
  { name: 'volume is nil', frame: encodeFrame({ event: 'start', request: { ...req, volume: null } }), code: 'invalid_message', path: 'request.volume' },
  { name: 'optimize_instructions is a string', frame: encodeFrame({ event: 'start', request: { ...req, optimize_instructions: 'true' } }), code: 'invalid_message', path: 'request.optimize_instructions' },
  { name: 'latency outside its values', frame: encodeFrame({ event: 'start', request: { ...req, latency: 'instant' } }), code: 'invalid_message', path: 'request.latency' },
  { name: 'mode outside its values', frame: encodeFrame({ event: 'start', mode: 'turbo', request: req }), code: 'invalid_message', path: 'mode' },
  { name: 'retry_failed is a string', frame: encodeFrame({ event: 'start', mode: 'reliable', event_id: 'e', request_id: 'r', retry_failed: 'yes', request: req }), code: 'invalid_message', path: 'retry_failed' },
  { name: 'ping timestamp is a string', frame: encodeFrame({ event: 'ping', timestamp: 'now' }), code: 'invalid_message', path: 'timestamp' },
  { name: 'token is a map', frame: encodeFrame({ event: 'auth', token: { t: 1 } }), code: 'invalid_message', path: 'token' },
  // mode rules of start
  { name: 'reliable start without event_id', frame: encodeFrame({ event: 'start', mode: 'reliable', request_id: 'r', request: req }), code: 'invalid_message', path: 'event_id' },
  { name: 'reliable start without request_id', frame: encodeFrame({ event: 'start', mode: 'reliable', event_id: 'e', request: req }), code: 'invalid_message', path: 'request_id' },
  { name: 'retry_failed true in default (simple) mode', frame: encodeFrame({ event: 'start', retry_failed: true, request: req }), code: 'invalid_message', path: 'retry_failed' },
  { name: 'retry_failed true in explicit simple mode', frame: encodeFrame({ event: 'start', mode: 'simple', event_id: 'e', request_id: 'r', retry_failed: true, request: req }), code: 'invalid_message', path: 'retry_failed' },
  // server events
  { name: 'server event without trace_id', frame: encodeFrame({ event: 'pong', event_id: 'e', timestamp: 1, session_id: 's' }), side: 'server', code: 'invalid_message', path: 'trace_id' },
  { name: 'server event timestamp is a string', frame: encodeFrame({ event: 'pong', ...envelope, timestamp: '1', session_id: 's' }), side: 'server', code: 'invalid_message', path: 'timestamp' },
  { name: 'audio payload is a string', frame: encodeFrame({ event: 'audio', ...envelope, request_id: 'r', session_id: 's', segment_id: 'g', sequence: 1, audio: 'AAAA', format: 'pcm' }), side: 'server', code: 'invalid_message', path: 'audio' },
  { name: 'finish reason outside its values', frame: encodeFrame({ event: 'finish', ...envelope, request_id: 'r', session_id: 's', reason: 'done', units: 1 }), side: 'server', code: 'invalid_message', path: 'reason' },
  { name: 'error without terminal', frame: encodeFrame({ event: 'error', ...envelope, code: 'x', message: 'y', retryable: false }), side: 'server', code: 'invalid_message', path: 'terminal' },
  { name: 'request_status state outside its values', frame: encodeFrame({ event: 'request_status', ...envelope, request_id: 'r', state: 'done', retryable: false, units: 0, result_available: false }), side: 'server', code: 'invalid_message', path: 'state' },
];

describe('fields: unknown, missing, wrong type', () => {
  it.each(fieldRejections)('$name -> $code at $path', (row) => {
    const err = protocolErrorOf(decodeAs(row));
    expect({ code: err.code, path: err.path }).toEqual({ code: row.code, path: row.path });
  });
});

describe('strings must be valid UTF-8', () => {
  const invalid: [string, number[]][] = [
    ['lone continuation byte', [0x80]],
    ['truncated two-byte sequence', [0x61, 0xc3]],
    ['overlong encoding of NUL', [0xc0, 0x80]],
    ['overlong encoding of "/"', [0xe0, 0x80, 0xaf]],
    ['UTF-16 surrogate encoded (CESU-8)', [0xed, 0xa0, 0x80]],
    ['code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['byte 0xFF', [0x68, 0x69, 0xff]],
  ];

  it.each(invalid)('%s in a text value -> invalid_message', (_name, payload) => {
    const frame = bytes(fixmap(3), str('event'), str('input'), str('text'), rawStr(payload), str('commit'), 0xc3);
    expect(protocolErrorOf(() => decodeClientEvent(frame)).code).toBe('invalid_message');
  });

  it.each(invalid)('%s in a map key -> invalid_message', (_name, payload) => {
    const frame = bytes(fixmap(2), str('event'), str('stop'), rawStr(payload), str('e'));
    expect(protocolErrorOf(() => decodeClientEvent(frame)).code).toBe('invalid_message');
  });

  it.each(invalid)('%s in a nested request value -> invalid_message', (_name, payload) => {
    const frame = bytes(fixmap(2), str('event'), str('start'), str('request'), fixmap(2), str('voice_id'), rawStr(payload), str('model'), str('m'));
    expect(protocolErrorOf(() => decodeClientEvent(frame)).code).toBe('invalid_message');
  });

  it.each(invalid)('%s in a server event value -> invalid_message', (_name, payload) => {
    const frame = bytes(fixmap(5), str('event'), str('pong'), str('event_id'), str('e'), str('trace_id'), rawStr(payload), str('timestamp'), 1, str('session_id'), str('s'));
    expect(protocolErrorOf(() => decodeServerEvent(frame)).code).toBe('invalid_message');
  });

  // Short strings are checked by an ASCII loop, long ones by TextDecoder: probe both sides of the switch.
  it.each([1, 63, 64, 65, 300, 5000])('a %i-byte string ending in a bad byte -> invalid_message; all-ASCII is accepted', (length) => {
    const ascii = new Uint8Array(length).fill(0x61);
    const bad = Uint8Array.from(ascii);
    bad[length - 1] = 0xff;
    const frameOf = (payload: Uint8Array) => bytes(fixmap(2), str('event'), str('input'), str('text'), rawStr(payload));
    expect(protocolErrorOf(() => decodeClientEvent(frameOf(bad))).code).toBe('invalid_message');
    expect(decodeClientEvent(frameOf(ascii))).toStrictEqual({ event: 'input', text: 'a'.repeat(length) });
  });

  it('accepts hand-built valid 1- to 4-byte sequences', () => {
    const payload = [0x41, 0xc3, 0xa9, 0xe4, 0xbd, 0xa0, 0xf0, 0x9f, 0x98, 0x80]; // "Aé你😀"
    const frame = bytes(fixmap(2), str('event'), str('input'), str('text'), rawStr(payload));
    expect(decodeClientEvent(frame)).toStrictEqual({ event: 'input', text: 'Aé你😀' });
  });
});

describe('prototype pollution', () => {
  const protoKey: Rejection[] = [
    { name: '__proto__ at the top of a client event', frame: bytes(fixmap(3), str('event'), str('stop'), str('event_id'), str('e'), str('__proto__'), fixmap(1), str('polluted'), 0xc3), code: 'invalid_message', path: '__proto__' },
    { name: '__proto__ inside start.request', frame: bytes(fixmap(2), str('event'), str('start'), str('request'), fixmap(3), str('voice_id'), str('v'), str('model'), str('m'), str('__proto__'), fixmap(1), str('polluted'), 0xc3), code: 'invalid_message', path: '__proto__' },
    { name: '__proto__ in a server event (loose schema)', frame: bytes(fixmap(6), str('event'), str('pong'), str('event_id'), str('e'), str('trace_id'), str('t'), str('timestamp'), 1, str('session_id'), str('s'), str('__proto__'), fixmap(1), str('polluted'), 0xc3), side: 'server', code: 'invalid_message', path: '__proto__' },
    { name: '__proto__ nested in a server extra field', frame: bytes(fixmap(6), str('event'), str('pong'), str('event_id'), str('e'), str('trace_id'), str('t'), str('timestamp'), 1, str('session_id'), str('s'), str('extra'), fixmap(1), str('__proto__'), fixmap(1), str('polluted'), 0xc3), side: 'server', code: 'invalid_message', path: '__proto__' },
    { name: 'constructor at the top of a client event', frame: encodeFrame({ event: 'stop', event_id: 'e', constructor: { prototype: { polluted: true } } }), code: 'invalid_message', path: 'constructor' },
    { name: 'constructor inside start.request', frame: encodeFrame({ event: 'start', request: { ...req, constructor: { prototype: { polluted: true } } } }), code: 'unsupported_parameter', path: 'request.constructor' },
    { name: 'prototype key on a client event', frame: encodeFrame({ event: 'stop', event_id: 'e', prototype: { polluted: true } }), code: 'invalid_message', path: 'prototype' },
  ];

  it.each(protoKey)('$name -> $code at $path, Object.prototype untouched', (row) => {
    const err = protocolErrorOf(decodeAs(row));
    expect({ code: err.code, path: err.path }).toEqual({ code: row.code, path: row.path });
    expect((({}) as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  });

  it('a text value "__proto__" is only text', () => {
    expect(decodeClientEvent(encodeFrame({ event: 'input', text: '__proto__' }))).toStrictEqual({ event: 'input', text: '__proto__' });
  });

  it('a constructor field on a server event stays an own data property', () => {
    const frame = encodeFrame({ event: 'pong', ...envelope, session_id: 's', constructor: { prototype: { polluted: true } } });
    const decoded = decodeServerEvent(frame) as Record<string, unknown>;
    expect(Object.hasOwn(decoded, 'constructor')).toBe(true);
    expect(decoded['constructor']).toStrictEqual({ prototype: { polluted: true } });
    expect((({}) as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype.constructor).toBe(Object);
  });
});

describe('a map must not repeat a key', () => {
  const duplicates: Rejection[] = [
    { name: 'event twice (stop, then ping)', frame: bytes(fixmap(3), str('event'), str('stop'), str('event_id'), str('e'), str('event'), str('ping')), code: 'invalid_message' },
    { name: 'text twice', frame: bytes(fixmap(3), str('event'), str('input'), str('text'), str('a'), str('text'), str('b')), code: 'invalid_message' },
    { name: 'voice_id twice inside request', frame: bytes(fixmap(2), str('event'), str('start'), str('request'), fixmap(3), str('voice_id'), str('v'), str('model'), str('m'), str('voice_id'), str('w')), code: 'invalid_message' },
    { name: 'integer key 1 and string key "1" in a server extra', frame: bytes(fixmap(6), str('event'), str('pong'), str('event_id'), str('e'), str('trace_id'), str('t'), str('timestamp'), 1, str('session_id'), str('s'), str('x'), fixmap(2), 0x01, 0xc0, str('1'), 0xc0), side: 'server', code: 'invalid_message' },
  ];
  it.each(duplicates)('$name -> $code', (row) => {
    expect(protocolErrorOf(decodeAs(row)).code).toBe(row.code);
  });

  it('the same key in two different maps is fine', () => {
    const event = { event: 'pong', ...envelope, session_id: 's', a: { session_id: 'inner', event: 'x' } };
    expect(decodeServerEvent(encodeFrame(event))).toStrictEqual(event);
  });
});
