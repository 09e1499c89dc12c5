import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/protocol/codec.js';
import { inspectShape, scanShape, type ShapeProblem } from '../../src/protocol/msgpack-shape.js';
import { bytes, fixmap, str } from './frames.js';

const DEPTH = 16;

describe('scanShape', () => {
  const rows: [string, ShapeProblem | null, Uint8Array][] = [
    ['empty map', null, bytes(0x80)],
    ['map16 header', null, bytes(0xde, 0x00, 0x01, str('a'), 0xc0)],
    ['map32 header', null, bytes(0xdf, 0x00, 0x00, 0x00, 0x01, str('a'), 0xc0)],
    ['every scalar type', null, encodeFrame({ n: null, t: true, f: false, i: -1, u8: 200, u16: 60_000, u32: 4e9, u64: 2 ** 40, i8: -100, i16: -30_000, i32: -2e9, i64: -(2 ** 40), f64: 1.5, s: 'x'.repeat(40), s16: 'y'.repeat(300), b: new Uint8Array(3), a: [1, [2]] })],
    ['str8/bin8 lengths', null, bytes(fixmap(2), str('a'), 0xd9, 0x02, 0x61, 0x62, str('b'), 0xc4, 0x01, 0x00)],
    ['fixext and ext8 are walked (the decoder refuses them later)', null, bytes(fixmap(2), str('a'), 0xd4, 0x01, 0x00, str('b'), 0xc7, 0x02, 0x01, 0x00, 0x00)],
    ['empty bytes', 'truncated', new Uint8Array(0)],
    ['array', 'not_a_map', bytes(0x91, 0xc0)],
    ['string', 'not_a_map', str('x')],
    ['nil', 'not_a_map', bytes(0xc0)],
    ['bin', 'not_a_map', bytes(0xc4, 0x01, 0x00)],
    ['lone 0xc1', 'reserved_type', bytes(0xc1)],
    ['0xc1 inside', 'reserved_type', bytes(fixmap(1), str('a'), 0xc1)],
    ['truncated array (malformed beats not-a-map)', 'truncated', bytes(0x92, 0x01)],
    ['trailing nil after a map', 'trailing_bytes', bytes(0x80, 0xc0)],
    ['trailing bytes after an array', 'trailing_bytes', bytes(0x90, 0x00)],
    ['key without value', 'truncated', bytes(fixmap(1), str('a'))],
    ['str longer than the frame', 'truncated', bytes(fixmap(1), str('a'), 0xa5, 0x61)],
    ['float64 cut short', 'truncated', bytes(fixmap(1), str('a'), 0xcb, 0, 0, 0)],
    ['map32 count cut short', 'truncated', bytes(0xdf, 0x00, 0x00)],
    ['map32 declaring 2^32-1 entries', 'truncated', bytes(0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0)],
    ['array32 declaring 2^32-1 items', 'truncated', bytes(fixmap(1), str('a'), 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0)],
    ['bin32 declaring 4 GiB', 'truncated', bytes(fixmap(1), str('a'), 0xc6, 0xff, 0xff, 0xff, 0xff, 0x00)],
    // Every byte of a 32-bit length counts (lengths are read big-endian from the bytes).
    ['bin32 of 1 byte', null, bytes(fixmap(1), str('a'), 0xc6, 0x00, 0x00, 0x00, 0x01, 0x00)],
    ['bin32 declaring 2^24 + 1 bytes, 1 present', 'truncated', bytes(fixmap(1), str('a'), 0xc6, 0x01, 0x00, 0x00, 0x01, 0x00)],
    ['str16 declaring 257 bytes, 1 present', 'truncated', bytes(fixmap(1), str('a'), 0xda, 0x01, 0x01, 0x61)],
  ];
  it.each(rows)('%s -> %s', (_name, expected, frame) => {
    expect(scanShape(frame, DEPTH)).toBe(expected);
  });

  it.each([
    [1, bytes(0x80), null],
    [1, bytes(fixmap(1), str('a'), 0x90), 'too_deep'],
    [2, bytes(fixmap(1), str('a'), 0x90), null],
    [2, bytes(fixmap(1), str('a'), 0x91, 0x90), 'too_deep'],
    [3, bytes(fixmap(1), str('a'), 0x91, 0x90), null],
  ] as const)('maxDepth %i, frame %# -> %s', (maxDepth, frame, expected) => {
    expect(scanShape(frame, maxDepth)).toBe(expected);
  });

  it('refuses more than maxValues values and counts keys, values and items', () => {
    const frame = bytes(fixmap(2), str('a'), 0x92, 0x01, 0x02, str('b'), 0xc0); // map, a, [.., 1, 2], b, nil = 7
    expect(inspectShape(frame, DEPTH).values).toBe(7);
    expect(scanShape(frame, DEPTH, 7)).toBeNull();
    expect(scanShape(frame, DEPTH, 6)).toBe('too_many_values');
    expect(scanShape(frame, DEPTH)).toBeNull();
  });

  it('sums declared map entries across nesting', () => {
    const frame = encodeFrame({ a: { b: 1, c: { d: 2 } }, e: [{ f: 3 }] });
    expect(inspectShape(frame, DEPTH).mapEntries).toBe(6);
  });
});
