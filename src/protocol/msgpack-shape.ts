/**
 * A structural pre-scan of a MessagePack frame: walks type bytes and lengths
 * without building values, so a hostile frame (deep nesting, huge declared
 * lengths) is refused before the decoder allocates anything for it.
 */

/** Why a frame failed the scan, or null when it is well-formed within limits. */
export type ShapeProblem = 'truncated' | 'too_deep' | 'trailing_bytes' | 'reserved_type' | 'not_a_map';

/**
 * Check that `bytes` holds exactly one MessagePack value, a map at the top,
 * nested at most `maxDepth` deep. Returns the problem, or null.
 */
export function scanShape(bytes: Uint8Array, maxDepth: number): ShapeProblem | null {
  if (bytes.length === 0) return 'truncated';
  const first = bytes[0]!;
  const isMap = (first >= 0x80 && first <= 0x8f) || first === 0xde || first === 0xdf;
  if (!isMap) return 'not_a_map';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  // Values still to read at each open container level.
  const pending: number[] = [1];
  const len = bytes.length;

  const need = (n: number): boolean => pos + n <= len;
  while (pending.length > 0) {
    if (pending[pending.length - 1] === 0) {
      pending.pop();
      continue;
    }
    pending[pending.length - 1]!--;
    if (!need(1)) return 'truncated';
    const b = bytes[pos++]!;
    let children = 0;
    let skip = 0;
    if (b <= 0x7f || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) {
      // fixint, nil, bool
    } else if (b >= 0x80 && b <= 0x8f) children = (b & 0x0f) * 2;
    else if (b >= 0x90 && b <= 0x9f) children = b & 0x0f;
    else if (b >= 0xa0 && b <= 0xbf) skip = b & 0x1f;
    else {
      switch (b) {
        case 0xc4: case 0xd9: if (!need(1)) return 'truncated'; skip = bytes[pos]!; pos += 1; break;
        case 0xc5: case 0xda: if (!need(2)) return 'truncated'; skip = view.getUint16(pos); pos += 2; break;
        case 0xc6: case 0xdb: if (!need(4)) return 'truncated'; skip = view.getUint32(pos); pos += 4; break;
        case 0xc7: if (!need(2)) return 'truncated'; skip = bytes[pos]! + 1; pos += 1; break;
        case 0xc8: if (!need(3)) return 'truncated'; skip = view.getUint16(pos) + 1; pos += 2; break;
        case 0xc9: if (!need(5)) return 'truncated'; skip = view.getUint32(pos) + 1; pos += 4; break;
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
        case 0xdc: if (!need(2)) return 'truncated'; children = view.getUint16(pos); pos += 2; break;
        case 0xdd: if (!need(4)) return 'truncated'; children = view.getUint32(pos); pos += 4; break;
        case 0xde: if (!need(2)) return 'truncated'; children = view.getUint16(pos) * 2; pos += 2; break;
        case 0xdf: if (!need(4)) return 'truncated'; children = view.getUint32(pos) * 2; pos += 4; break;
        default: return 'reserved_type'; // 0xc1
      }
    }
    if (skip > 0) {
      if (!need(skip)) return 'truncated';
      pos += skip;
    }
    if (children > 0) {
      // Each child takes at least one byte: a declared count beyond the
      // remaining bytes is a lie, refused before anything is allocated.
      if (children > len - pos) return 'truncated';
      if (pending.length >= maxDepth) return 'too_deep';
      pending.push(children);
    }
  }
  return pos === len ? null : 'trailing_bytes';
}
