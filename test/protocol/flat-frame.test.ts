/**
 * The receive path's one pass (src/protocol/flat-frame.ts) must read
 * every frame exactly as the full path does (pre-scan, `@msgpack/msgpack`,
 * repeated-key check): the same map, or, for anything it does not take on or
 * any problem, nothing, so `decodeMap` falls back and names the problem.
 */
import { Encoder } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { decodeFlatMap } from '../../src/protocol/flat-frame.js';
import { LIMITS } from '../../src/protocol/limits.js';
import { decodeMap, decodeMapFull } from '../../src/protocol/wire.js';
import { bytes, rawStr } from './frames.js';

const encoder = new Encoder({ ignoreUndefined: true });
const flat = (b: Uint8Array) => decodeFlatMap(b, LIMITS.maxFrameBytes, LIMITS.maxFrameValues);
const str = (s: string) => rawStr(new TextEncoder().encode(s));

/** What the full path makes of a frame: the map, or the error it throws. */
function full(b: Uint8Array): { map: Record<string, unknown> } | { error: unknown } {
  try {
    return { map: decodeMapFull(b) };
  } catch (error) {
    return { error };
  }
}

const audio = {
  event: 'audio', event_id: 'evt_01HZX3J5N8Q2', trace_id: 'trc_9f2c4a1b7e', timestamp: 1_763_000_000_123, in_reply_to: 'ev-1',
  request_id: 'req_7c1e5d2a', session_id: 'ses_4b9a0f3e', segment_id: 'seg_000001', sequence: 42,
  audio: Uint8Array.from({ length: 4096 }, (_, i) => i & 0xff), format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16,
};

const takenOn: [string, Record<string, unknown>][] = [
  ['the reference server\'s audio frame', audio],
  ['an empty map', {}],
  ['every integer width, both signs', { a: 0, b: 127, c: 128, d: 255, e: 256, f: 65_535, g: 65_536, h: 2 ** 32 - 1, i: 2 ** 32, j: 2 ** 53 - 1, k: -1, l: -32, m: -33, n: -128, o: -129, p: -32_768, q: -32_769, r: -(2 ** 31), s: -(2 ** 31) - 1, t: -(2 ** 53) + 1 }],
  ['nil and booleans', { a: null, b: true, c: false }],
  ['strings of every header, ASCII and not', { a: '', b: 'x'.repeat(31), c: 'y'.repeat(32), d: 'z'.repeat(255), e: 'w'.repeat(256), f: 'é😀 naïve', g: 'ü'.repeat(100), h: 'a'.repeat(70_000) }],
  ['binary of every header', { a: new Uint8Array(0), b: new Uint8Array(255).fill(1), c: new Uint8Array(256).fill(2), d: new Uint8Array(70_000).fill(3) }],
  ['keys named like Object.prototype', { constructor: 'c', toString: 's', hasOwnProperty: 1, valueOf: null }],
  ['a long and a non-ASCII key', { ['k'.repeat(40)]: 1, ['clé']: 2, ['k'.repeat(200)]: 3 }],
  ['an input_ack', { event: 'input_ack', event_id: 'a', trace_id: 't', timestamp: 1, request_id: 'r', sequence: 7, characters: 12, buffered_characters: 0, remaining_capacity: 100 }],
];

describe('decodeFlatMap (the one pass)', () => {
  it.each(takenOn)('%s: decoded in one pass, the same map as the full path', (_name, value) => {
    const frame = encoder.encode(value);
    const one = flat(frame);
    expect(one).toBeDefined();
    expect(one).toEqual(decodeMapFull(frame));
    expect(Object.keys(one!)).toEqual(Object.keys(decodeMapFull(frame)));
  });

  it('keeps audio bytes as a view of the frame, not a copy', () => {
    const frame = encoder.encode(audio);
    const one = flat(frame)!;
    const view = one['audio'] as Uint8Array;
    expect(view.buffer).toBe(frame.buffer);
    expect(view.byteLength).toBe(4096);
    frame[view.byteOffset + 5] = 0xee;
    expect(view[5]).toBe(0xee);
  });

  it('reads a frame the same way many times over (the key cache)', () => {
    const frame = encoder.encode(audio);
    for (let i = 0; i < 3; i++) expect(flat(frame)).toEqual(decodeMapFull(frame));
  });

  it('reads a value as sent when the last one under its key differed in any one byte, or was not UTF-8 (the value cache)', () => {
    const base = 'seg_000001-ev-42';
    const values = [base, base, ...Array.from(base, (_, i) => `${base.slice(0, i)}#${base.slice(i + 1)}`), base, `${base}x`, base.slice(1), '', 'é', base];
    for (const segment_id of values) {
      const frame = encoder.encode({ ...audio, segment_id, event: segment_id.length % 2 === 0 ? 'audio' : 'usage' });
      expect(flat(frame)).toEqual(decodeMapFull(frame));
    }
    expect(flat(bytes(0x81, str('segment_id'), rawStr([0xc3, 0x28])))).toBeUndefined();
    expect(flat(bytes(0x81, str('segment_id'), rawStr([0xc3, 0x28])))).toBeUndefined();
    const after = encoder.encode({ segment_id: base });
    expect(flat(after)).toEqual({ segment_id: base });
  });

  const declined: [string, Uint8Array][] = [
    ['a nested map', encoder.encode({ a: { b: 1 } })],
    ['an array', encoder.encode({ a: [1, 2] })],
    ['a float', encoder.encode({ a: 1.5 })],
    ['an extension (timestamp)', encoder.encode({ a: new Date(0) })],
    ['not a map', encoder.encode([1, 2])],
    ['a number key', bytes(0x81, 0x01, 0x02)],
    ['a repeated key', bytes(0x82, str('event'), str('stop'), str('event'), str('ping'))],
    ['a repeated uncached key', bytes(0x82, str('k'.repeat(40)), 1, str('k'.repeat(40)), 2)],
    ['a __proto__ key', bytes(0x81, str('__proto__'), 0x01)],
    ['an invalid UTF-8 value', bytes(0x81, str('a'), rawStr([0xc3, 0x28]))],
    ['an invalid UTF-8 key', bytes(0x81, rawStr([0xff]), 0x01)],
    ['a lone surrogate encoded in UTF-8', bytes(0x81, str('a'), rawStr([0xed, 0xa0, 0x80]))],
    ['trailing bytes', bytes(encoder.encode({ a: 1 }), 0x00)],
    ['a map declaring more entries than it has', bytes(0x83, str('a'), 0x01)],
    ['a reserved type', bytes(0x81, str('a'), 0xc1)],
    ['a frame over the size limit', bytes(0x81, str('a'), 0xc6, 0x00, 0x10, 0x00, 0x00, new Uint8Array(1024 * 1024))],
    ['an empty frame', new Uint8Array(0)],
  ];

  it.each(declined)('%s: left to the full path, which decides', (_name, frame) => {
    expect(flat(frame)).toBeUndefined();
    const expected = full(frame);
    if ('map' in expected) expect(decodeMap(frame)).toEqual(expected.map);
    else expect(() => decodeMap(frame)).toThrow((expected.error as Error).message);
  });

  it('declines every truncation of a frame it takes on, as the full path refuses it', () => {
    const frame = encoder.encode({ ...audio, audio: new Uint8Array(40).fill(9), big: 2 ** 40, neg: -70_000, long: 'é'.repeat(40) });
    for (let cut = 0; cut < frame.length; cut++) {
      const part = frame.subarray(0, cut);
      expect(flat(part), `cut at ${cut}`).toBeUndefined();
      expect(() => decodeMapFull(part), `cut at ${cut}`).toThrow();
    }
  });
});
