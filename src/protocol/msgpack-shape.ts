/**
 * A structural pre-scan of a MessagePack frame: walks type bytes and lengths
 * without building values, so a hostile frame (deep nesting, huge declared
 * lengths, a million tiny containers) is refused before the decoder allocates
 * anything for it. It also checks what the decoder would let through: every
 * string must be valid UTF-8 (`@msgpack/msgpack` replaces bad sequences with
 * U+FFFD; the spec requires refusing them), and no map key may be
 * `__proto__`. Doing it here keeps the codec on the decoder's public options
 * only.
 */

/** Why a frame failed the scan, or null when it is well-formed within limits. */
export type ShapeProblem = 'truncated' | 'too_deep' | 'trailing_bytes' | 'reserved_type' | 'not_a_map' | 'too_many_values' | 'invalid_utf8' | 'forbidden_key';

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
/** Below this many bytes a JS loop finds all-ASCII strings faster than a TextDecoder call (bench/codec.mjs). */
const ASCII_LOOP_MAX_BYTES = 64;
/** `__proto__` as UTF-8. */
const PROTO_KEY = [0x5f, 0x5f, 0x70, 0x72, 0x6f, 0x74, 0x6f, 0x5f, 0x5f];

function isValidUtf8(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start <= ASCII_LOOP_MAX_BYTES) {
    let ascii = true;
    for (let i = start; i < end; i++) {
      if (bytes[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return true;
  }
  try {
    fatalUtf8.decode(bytes.subarray(start, end));
    return true;
  } catch {
    return false;
  }
}

function isProtoKey(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start !== PROTO_KEY.length) return false;
  for (let i = 0; i < PROTO_KEY.length; i++) if (bytes[start + i] !== PROTO_KEY[i]) return false;
  return true;
}

/** Big-endian lengths read from the bytes (no DataView to allocate per frame; the caller checked the bounds). */
const u16 = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u32 = (b: Uint8Array, at: number): number => b[at]! * 0x1000000 + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);

const shape = (problem: ShapeProblem | null, values: number, mapEntries: number): ShapeReport => ({ problem, values, mapEntries });

/** What `inspectShape` learnt about a frame. */
export interface ShapeReport {
  /** The first problem found, or null. `not_a_map` is only reported for a well-formed frame. */
  problem: ShapeProblem | null;
  /** Values read (every key, value and array item counts once), up to where the scan stopped. */
  values: number;
  /** Sum of the declared entry counts of every map read; the codec compares it with the decoded keys to find duplicates. */
  mapEntries: number;
}

/**
 * Walk `bytes` as exactly one MessagePack value, with at most `maxDepth`
 * containers on any path (the top map is depth 1) and at most `maxValues`
 * values in all (default: no limit).
 * Malformed bytes are reported before `not_a_map`, so a frame such as a lone
 * 0xc1 is `reserved_type`, and a well-formed array is `not_a_map`.
 */
export function inspectShape(bytes: Uint8Array, maxDepth: number, maxValues = Number.POSITIVE_INFINITY): ShapeReport {
  // The loop's state lives in locals no closure captures (so they stay in
  // registers); the report is built once, where the scan ends.
  let values = 0;
  let mapEntries = 0;
  if (bytes.length === 0) return shape('truncated', values, mapEntries);
  const first = bytes[0]!;
  const isMap = (first >= 0x80 && first <= 0x8f) || first === 0xde || first === 0xdf;
  let pos = 0;
  // Values still to read at each open container level, and whether it is a map.
  const pending: number[] = [1];
  const inMap: boolean[] = [false];
  const len = bytes.length;

  while (pending.length > 0) {
    const left = pending[pending.length - 1]!;
    if (left === 0) {
      pending.pop();
      inMap.pop();
      continue;
    }
    // A map's children alternate key, value: with an even count left, a key comes.
    const isKey = inMap[inMap.length - 1]! && left % 2 === 0;
    pending[pending.length - 1] = left - 1;
    if (pos + 1 > len) return shape('truncated', values, mapEntries);
    // Counting every value bounds the objects the decoder will build: a 1 MiB
    // frame of empty maps would otherwise become a million objects.
    if (++values > maxValues) return shape('too_many_values', values, mapEntries);
    const b = bytes[pos++]!;
    let children = 0;
    let skip = 0;
    let container = false;
    let map = false;
    let str = false;
    if (b <= 0x7f || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) {
      // fixint, nil, bool
    } else if (b >= 0x80 && b <= 0x8f) {
      children = (b & 0x0f) * 2;
      mapEntries += b & 0x0f;
      container = true;
      map = true;
    } else if (b >= 0x90 && b <= 0x9f) {
      children = b & 0x0f;
      container = true;
    }
    else if (b >= 0xa0 && b <= 0xbf) {
      skip = b & 0x1f;
      str = true;
    }
    else {
      switch (b) {
        case 0xc4: case 0xd9: if (pos + 1 > len) return shape('truncated', values, mapEntries); skip = bytes[pos]!; pos += 1; str = b === 0xd9; break;
        case 0xc5: case 0xda: if (pos + 2 > len) return shape('truncated', values, mapEntries); skip = u16(bytes, pos); pos += 2; str = b === 0xda; break;
        case 0xc6: case 0xdb: if (pos + 4 > len) return shape('truncated', values, mapEntries); skip = u32(bytes, pos); pos += 4; str = b === 0xdb; break;
        case 0xc7: if (pos + 2 > len) return shape('truncated', values, mapEntries); skip = bytes[pos]! + 1; pos += 1; break;
        case 0xc8: if (pos + 3 > len) return shape('truncated', values, mapEntries); skip = u16(bytes, pos) + 1; pos += 2; break;
        case 0xc9: if (pos + 5 > len) return shape('truncated', values, mapEntries); skip = u32(bytes, pos) + 1; pos += 4; break;
        case 0xca: skip = 4; break;
        case 0xcb: skip = 8; break;
        case 0xcc: case 0xd0: skip = 1; break;
        case 0xcd: case 0xd1: skip = 2; break;
        case 0xce: case 0xd2: skip = 4; break;
        case 0xcf: case 0xd3: skip = 8; break;
        case 0xd4: skip = 2; break;
        case 0xd5: skip = 3; break;
        case 0xd6: skip = 5; break;
        case 0xd7: skip = 9; break;
        case 0xd8: skip = 17; break;
        case 0xdc: if (pos + 2 > len) return shape('truncated', values, mapEntries); children = u16(bytes, pos); pos += 2; container = true; break;
        case 0xdd: if (pos + 4 > len) return shape('truncated', values, mapEntries); children = u32(bytes, pos); pos += 4; container = true; break;
        case 0xde: if (pos + 2 > len) return shape('truncated', values, mapEntries); children = u16(bytes, pos) * 2; pos += 2; mapEntries += children / 2; container = true; map = true; break;
        case 0xdf: if (pos + 4 > len) return shape('truncated', values, mapEntries); children = u32(bytes, pos) * 2; pos += 4; mapEntries += children / 2; container = true; map = true; break;
        default: return shape('reserved_type', values, mapEntries); // 0xc1
      }
    }
    if (skip > 0) {
      if (pos + skip > len) return shape('truncated', values, mapEntries);
      if (str) {
        if (!isValidUtf8(bytes, pos, pos + skip)) return shape('invalid_utf8', values, mapEntries);
        if (isKey && isProtoKey(bytes, pos, pos + skip)) return shape('forbidden_key', values, mapEntries);
      }
      pos += skip;
    }
    if (container) {
      // Each child takes at least one byte: a declared count beyond the
      // remaining bytes is a lie, refused before anything is allocated.
      if (children > len - pos) return shape('truncated', values, mapEntries);
      // pending holds the root slot plus one entry per open container, so its
      // length is this container's nesting level (the top map is level 1).
      if (pending.length > maxDepth) return shape('too_deep', values, mapEntries);
      if (children > 0) {
        pending.push(children);
        inMap.push(map);
      }
    }
  }
  if (pos !== len) return shape('trailing_bytes', values, mapEntries);
  return shape(isMap ? null : 'not_a_map', values, mapEntries);
}

/**
 * Check that `bytes` holds exactly one MessagePack value, a map at the top,
 * with at most `maxDepth` containers on any path (the top map is depth 1) and
 * at most `maxValues` values in all (default: no limit). Returns the problem,
 * or null.
 */
export function scanShape(bytes: Uint8Array, maxDepth: number, maxValues = Number.POSITIVE_INFINITY): ShapeProblem | null {
  return inspectShape(bytes, maxDepth, maxValues).problem;
}
