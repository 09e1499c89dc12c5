/**
 * Hostile frames: the codec must refuse them with a ProtocolError, quickly and
 * without allocating in proportion to what the frame declares, and random or
 * mutated bytes must never surface as anything but a ProtocolError.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/errors.js';
import { decodeClientEvent, decodeServerEvent, encodeFrame, LIMITS } from '../../src/protocol/index.js';
import { bytes, fixmap, protocolErrorOf, seededRandom, str } from './frames.js';

const envelope = { event_id: 'e', trace_id: 't', timestamp: 1 };
/** A valid pong frame header with one extra field `x` whose value follows. */
const pongWithExtra = (value: Uint8Array): Uint8Array =>
  bytes(fixmap(6), str('event'), str('pong'), str('event_id'), str('e'), str('trace_id'), str('t'), str('timestamp'), 1, str('session_id'), str('s'), str('x'), value);

/** `levels` nested one-element arrays around nil. */
const nestedArrays = (levels: number): Uint8Array => bytes(new Uint8Array(levels).fill(0x91), 0xc0);

describe('hostile frames', () => {
  it('a 2 MiB frame is refused before decoding', () => {
    const frame = bytes(fixmap(2), str('event'), str('input'), str('text'), 0xdb, 0x00, 0x20, 0x00, 0x00, new Uint8Array(2 * 1024 * 1024).fill(0x61));
    const err = protocolErrorOf(() => decodeClientEvent(frame));
    expect(err.code).toBe('invalid_message');
    expect(err.message).toContain('exceeds');
  });

  it('a frame of exactly LIMITS.maxFrameBytes is accepted, one byte more is not', () => {
    const frameOf = (audioBytes: number) =>
      encodeFrame({ event: 'audio', ...envelope, request_id: 'r', session_id: 's', segment_id: 'g', sequence: 1, audio: new Uint8Array(audioBytes), format: 'pcm' });
    const overhead = frameOf(70_000).length - 70_000; // bin32 header from 64 KiB on
    const atLimit = frameOf(LIMITS.maxFrameBytes - overhead);
    expect(atLimit.length).toBe(LIMITS.maxFrameBytes);
    expect(decodeServerEvent(atLimit).event).toBe('audio');
    const over = frameOf(LIMITS.maxFrameBytes - overhead + 1);
    expect(protocolErrorOf(() => decodeServerEvent(over)).code).toBe('invalid_message');
  });

  it('100,000-deep array nesting -> invalid_messagepack', () => {
    const frame = bytes(fixmap(1), str('a'), nestedArrays(100_000));
    expect(protocolErrorOf(() => decodeClientEvent(frame)).code).toBe('invalid_messagepack');
  });

  it('100,000-deep map nesting -> invalid_messagepack', () => {
    const level = bytes(fixmap(1), str('a'));
    const frame = new Uint8Array(level.length * 100_000 + 1);
    for (let i = 0; i < 100_000; i++) frame.set(level, i * level.length);
    frame[frame.length - 1] = 0xc0;
    expect(protocolErrorOf(() => decodeServerEvent(frame)).code).toBe('invalid_messagepack');
  });

  it(`nesting of LIMITS.maxDepth (${LIMITS.maxDepth}) containers is accepted, one more is not`, () => {
    // The top map is level 1, so the extra field holds maxDepth - 1 levels.
    const ok = pongWithExtra(nestedArrays(LIMITS.maxDepth - 1));
    expect(decodeServerEvent(ok).event).toBe('pong');
    const deeper = pongWithExtra(nestedArrays(LIMITS.maxDepth));
    expect(protocolErrorOf(() => decodeServerEvent(deeper)).code).toBe('invalid_messagepack');
    const deeperEmpty = pongWithExtra(bytes(new Uint8Array(LIMITS.maxDepth - 1).fill(0x91), 0x90));
    expect(protocolErrorOf(() => decodeServerEvent(deeperEmpty)).code).toBe('invalid_messagepack');
  });

  it.each([
    ['map32 declaring 2^32-1 entries in 10 bytes', bytes(0xdf, 0xff, 0xff, 0xff, 0xff, str('a'), 0xc0, 0xc0, 0xc0)],
    ['array32 declaring 2^32-1 items', pongWithExtra(bytes(0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0))],
    ['map16 declaring 65,535 entries', pongWithExtra(bytes(0xde, 0xff, 0xff, 0xc0, 0xc0))],
    ['str32 declaring 4 GiB', bytes(fixmap(1), str('event'), 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61)],
    ['bin32 declaring 4 GiB', pongWithExtra(bytes(0xc6, 0xff, 0xff, 0xff, 0xff, 0x00))],
    ['ext32 declaring 4 GiB', pongWithExtra(bytes(0xc9, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00))],
  ])('%s -> invalid_messagepack', (_name, frame) => {
    expect(frame.length).toBeLessThan(100);
    expect(protocolErrorOf(() => decodeServerEvent(frame)).code).toBe('invalid_messagepack');
  });

  it('a frame of a million empty maps (1 MiB) is refused by the value count, before decoding', () => {
    // {x: [ [ {} x 255 ] x 4000 ]}: about 1M values in ~1 MB.
    const inner = bytes(0xdc, 0x00, 0xff, new Uint8Array(255).fill(0x80));
    const head = bytes(fixmap(1), str('x'), 0xdc, 0x0f, 0xa0);
    const frame = new Uint8Array(head.length + 4000 * inner.length);
    frame.set(head, 0);
    for (let i = 0; i < 4000; i++) frame.set(inner, head.length + i * inner.length);
    expect(frame.length).toBeLessThanOrEqual(LIMITS.maxFrameBytes);
    const err = protocolErrorOf(() => decodeClientEvent(frame));
    expect(err.code).toBe('invalid_messagepack');
    expect(err.message).toContain('too many values');
  });

  it('a server event with a few thousand values in extra fields is still accepted', () => {
    const event = { event: 'pong', ...envelope, session_id: 's', history: Array.from({ length: 3_000 }, (_, i) => i) };
    expect(decodeServerEvent(encodeFrame(event))).toStrictEqual(event);
  });
});

const KNOWN_CODES = new Set(['invalid_messagepack', 'invalid_message', 'segment_too_large', 'unsupported_parameter']);

/** Decode with both decoders; anything thrown must be a ProtocolError with a spec code. */
function decodeBothSides(frame: Uint8Array): { decoded: number; codes: Set<string> } {
  let decoded = 0;
  const codes = new Set<string>();
  for (const decode of [decodeClientEvent, decodeServerEvent]) {
    try {
      decode(frame);
      decoded++;
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw new Error(`non-ProtocolError for frame ${Buffer.from(frame).toString('hex')}: ${String(err)}`, { cause: err });
      codes.add(err.code);
    }
  }
  return { decoded, codes };
}

describe('random and mutated frames (seeded)', () => {
  it('1,000 random frames each decode or throw ProtocolError', () => {
    const random = seededRandom(0x5eed);
    const codes = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const frame = new Uint8Array(Math.floor(random() * 96));
      for (let j = 0; j < frame.length; j++) frame[j] = Math.floor(random() * 256);
      // Half of them start like a map, so the walk goes past the first byte.
      if (i % 2 === 0 && frame.length > 0) frame[0] = 0x80 | Math.floor(random() * 16);
      for (const code of decodeBothSides(frame).codes) codes.add(code);
    }
    expect([...codes].every((c) => KNOWN_CODES.has(c))).toBe(true);
    expect(codes.has('invalid_messagepack')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('1,000 mutations of valid frames each decode or throw ProtocolError', () => {
    const random = seededRandom(0xc0dec);
    const seeds = [
      encodeFrame({ event: 'start', mode: 'reliable', event_id: 'e1', request_id: 'req_1', request: { voice_id: 'v', model: 'm', speed: 1.5, chunk_length: 200, format: 'pcm' } }),
      encodeFrame({ event: 'text', event_id: 'e3', sequence: 7, text: 'Héllo 😀 wörld' }),
      encodeFrame({ event: 'audio', ...envelope, request_id: 'r', session_id: 's', segment_id: 'g', sequence: 1, audio: new Uint8Array(64).fill(7), format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16 }),
      encodeFrame({ event: 'error', ...envelope, code: 'x', message: 'y', retryable: false, terminal: true }),
    ];
    let decoded = 0;
    const codes = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const frame = Uint8Array.from(seeds[i % seeds.length]!);
      const at = Math.floor(random() * frame.length);
      const mutation = i % 4;
      let mutated: Uint8Array;
      if (mutation === 0) {
        frame[at] = Math.floor(random() * 256);
        mutated = frame;
      } else if (mutation === 1) {
        frame[at] = frame[at]! ^ (1 << Math.floor(random() * 8));
        mutated = frame;
      } else if (mutation === 2) {
        mutated = frame.subarray(0, at);
      } else {
        mutated = bytes(frame.subarray(0, at), Math.floor(random() * 256), frame.subarray(at));
      }
      const result = decodeBothSides(mutated);
      decoded += result.decoded;
      for (const code of result.codes) codes.add(code);
    }
    expect([...codes].every((c) => KNOWN_CODES.has(c))).toBe(true);
    // Some mutations (a changed character or number) stay valid events.
    expect(decoded).toBeGreaterThan(0);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
