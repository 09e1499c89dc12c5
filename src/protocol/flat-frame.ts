/**
 * The receive path's one pass: a frame that is a flat MessagePack
 * map (string keys; values nil, bool, integers, strings, binary) is checked
 * and decoded together, byte by byte, into the same plain map `decodeMap`
 * builds. Every server event the client acts on per frame (`audio`,
 * `input_ack`, `segment_completed`, ...) is such a map.
 *
 * It keeps every protection of the full path (size, value count, valid UTF-8,
 * no repeated key, no `__proto__` key, no truncation or trailing bytes) by
 * handing back `undefined` at the first thing it does not take on: a nested
 * container, an extension, a float, a problem of any kind. The caller then takes the
 * full path (pre-scan, `@msgpack/msgpack`, key count), which decodes the
 * frame or names its problem exactly as before. So this pass can only make a
 * frame cheaper, never read it differently (test/protocol/flat-frame.test.ts
 * compares the two on every frame shape).
 *
 * What makes it cheaper than pre-scan + decode: one walk instead of two, no
 * decoder state stack, keys read through a small cache of interned strings
 * whose ids make the repeated-key check one array read, the short string
 * values a request repeats in every frame (its ids, the event name, the
 * format) compared with the last one under the same key instead of decoded
 * again, and audio bytes kept as a view of the frame (no copy).
 */

/** Keys up to this many bytes are cached (the protocol's longest is 19). */
const KEY_CACHE_MAX_BYTES = 32;
/** Distinct keys cached in all (a hostile server inventing keys fills it once; later keys are decoded each time). */
const KEY_CACHE_MAX_ENTRIES = 512;
/** Largest map the pass takes on (the full path's decoder allows 64 entries). */
const MAX_ENTRIES = 64;
/** Strings up to this many bytes are decoded by a JS loop; longer ones by TextDecoder. */
const SHORT_STRING_MAX_BYTES = 64;

interface CachedKey {
  bytes: Uint8Array;
  key: string;
  id: number;
  /** The bytes (up to SHORT_STRING_MAX_BYTES) and the string of the last short string value read under this key; length -1: none yet. */
  valueBytes: Uint8Array | undefined;
  valueLength: number;
  value: string;
}

/** Cached keys by byte length. */
const keyCache: CachedKey[][] = [];
let keyCount = 0;
/** `stamps[id] === frameStamp`: the key with that id was already read in this frame. */
const stamps = /* @__PURE__ */ new Uint32Array(KEY_CACHE_MAX_ENTRIES);
let frameStamp = 0;

const fatalUtf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true });
const units: number[] = [];

/** The string at `[start, end)`, or undefined when it is not valid UTF-8. */
function readString(bytes: Uint8Array, start: number, end: number): string | undefined {
  const n = end - start;
  if (n === 0) return '';
  if (n <= SHORT_STRING_MAX_BYTES) {
    units.length = n;
    let i = 0;
    for (; i < n; i++) {
      const b = bytes[start + i]!;
      if (b >= 0x80) break;
      units[i] = b;
    }
    if (i === n) return String.fromCharCode.apply(null, units);
  }
  try {
    return fatalUtf8.decode(bytes.subarray(start, end));
  } catch {
    return undefined;
  }
}

/** The cached key at `[start, end)`, cached now if there is room; undefined when it is not ASCII or not cacheable. */
function cachedKey(bytes: Uint8Array, start: number, end: number): CachedKey | undefined {
  const n = end - start;
  if (n === 0 || n > KEY_CACHE_MAX_BYTES) return undefined;
  const bucket = keyCache[n];
  if (bucket !== undefined) {
    outer: for (let k = 0; k < bucket.length; k++) {
      const entry = bucket[k]!;
      const eb = entry.bytes;
      for (let i = 0; i < n; i++) if (eb[i] !== bytes[start + i]) continue outer;
      return entry;
    }
  }
  if (keyCount >= KEY_CACHE_MAX_ENTRIES) return undefined;
  for (let i = start; i < end; i++) if (bytes[i]! >= 0x80) return undefined;
  const key = readString(bytes, start, end)!;
  // Never cached, so the caller's check refuses it (assigning it would set the map's prototype).
  if (key === '__proto__') return undefined;
  const entry: CachedKey = { bytes: bytes.slice(start, end), key, id: keyCount++, valueBytes: undefined, valueLength: -1, value: '' };
  if (bucket === undefined) keyCache[n] = [entry];
  else bucket.push(entry);
  return entry;
}

/**
 * A short string value under a cached key: the last one read under that key
 * when the bytes are the same (ids, names and formats repeat in every frame
 * of a request), else read and kept for the next frame. Undefined when it is
 * not valid UTF-8.
 */
function repeatedValue(entry: CachedKey, bytes: Uint8Array, start: number, end: number): string | undefined {
  const n = end - start;
  let kept = entry.valueBytes;
  if (entry.valueLength === n && kept !== undefined) {
    // From the end: values that change between frames (counters in ids) differ there first.
    let i = n - 1;
    while (i >= 0 && kept[i] === bytes[start + i]) i--;
    if (i < 0) return entry.value;
  }
  const value = readString(bytes, start, end);
  if (value === undefined) return undefined;
  kept ??= entry.valueBytes = new Uint8Array(SHORT_STRING_MAX_BYTES);
  for (let i = 0; i < n; i++) kept[i] = bytes[start + i]!;
  entry.valueLength = n;
  entry.value = value;
  return value;
}

const has = Object.prototype.hasOwnProperty;

/**
 * Decode `bytes` as one flat map in a single pass, or undefined when the
 * frame is anything else or has any problem (the caller takes the full path).
 * `maxBytes` and `maxValues` are the full path's limits.
 */
export function decodeFlatMap(bytes: Uint8Array, maxBytes: number, maxValues: number): Record<string, unknown> | undefined {
  const len = bytes.length;
  if (len === 0 || len > maxBytes) return undefined;
  const head = bytes[0]!;
  let entries: number;
  let pos: number;
  if (head >= 0x80 && head <= 0x8f) {
    entries = head & 0x0f;
    pos = 1;
  } else if (head === 0xde && len >= 3) {
    entries = (bytes[1]! << 8) | bytes[2]!;
    pos = 3;
  } else return undefined;
  if (entries > MAX_ENTRIES || 1 + 2 * entries > maxValues) return undefined;
  frameStamp = (frameStamp + 1) >>> 0;
  if (frameStamp === 0) {
    stamps.fill(0);
    frameStamp = 1;
  }
  const out: Record<string, unknown> = {};
  for (let e = 0; e < entries; e++) {
    // The key: a string of at most 255 bytes.
    if (pos >= len) return undefined;
    const kb = bytes[pos++]!;
    let klen: number;
    if (kb >= 0xa0 && kb <= 0xbf) klen = kb & 0x1f;
    else if (kb === 0xd9 && pos < len) klen = bytes[pos++]!;
    else return undefined;
    const kend = pos + klen;
    if (kend > len) return undefined;
    let key: string;
    const cached = cachedKey(bytes, pos, kend);
    let byKey: CachedKey | undefined;
    if (cached !== undefined) {
      if (stamps[cached.id] === frameStamp) return undefined; // repeated key
      stamps[cached.id] = frameStamp;
      key = cached.key;
      byKey = cached;
    } else {
      const decoded = readString(bytes, pos, kend);
      if (decoded === undefined || decoded === '__proto__' || has.call(out, decoded)) return undefined;
      key = decoded;
    }
    pos = kend;
    // The value.
    if (pos >= len) return undefined;
    const b = bytes[pos++]!;
    let value: unknown;
    if (b <= 0x7f) value = b;
    else if (b >= 0xe0) value = b - 0x100;
    else if (b >= 0xa0 && b <= 0xbf) {
      const end = pos + (b & 0x1f);
      if (end > len) return undefined;
      value = byKey === undefined ? readString(bytes, pos, end) : repeatedValue(byKey, bytes, pos, end);
      if (value === undefined) return undefined;
      pos = end;
    } else {
      let n = 0;
      switch (b) {
        case 0xc0: value = null; break;
        case 0xc2: value = false; break;
        case 0xc3: value = true; break;
        case 0xcc: if (pos + 1 > len) return undefined; value = bytes[pos]!; pos += 1; break;
        case 0xcd: if (pos + 2 > len) return undefined; value = (bytes[pos]! << 8) | bytes[pos + 1]!; pos += 2; break;
        case 0xce: if (pos + 4 > len) return undefined; value = u32(bytes, pos); pos += 4; break;
        case 0xcf: if (pos + 8 > len) return undefined; value = u32(bytes, pos) * 4294967296 + u32(bytes, pos + 4); pos += 8; break;
        case 0xd0: if (pos + 1 > len) return undefined; value = (bytes[pos]! << 24) >> 24; pos += 1; break;
        case 0xd1: if (pos + 2 > len) return undefined; value = (((bytes[pos]! << 8) | bytes[pos + 1]!) << 16) >> 16; pos += 2; break;
        case 0xd2: if (pos + 4 > len) return undefined; value = u32(bytes, pos) | 0; pos += 4; break;
        case 0xd3: if (pos + 8 > len) return undefined; value = (u32(bytes, pos) | 0) * 4294967296 + u32(bytes, pos + 4); pos += 8; break;
        case 0xd9: case 0xc4: if (pos + 1 > len) return undefined; n = bytes[pos]!; pos += 1; break;
        case 0xda: case 0xc5: if (pos + 2 > len) return undefined; n = (bytes[pos]! << 8) | bytes[pos + 1]!; pos += 2; break;
        case 0xdb: case 0xc6: if (pos + 4 > len) return undefined; n = u32(bytes, pos); pos += 4; break;
        default: return undefined; // floats (no event the client acts on per frame has one), arrays, maps, extensions, 0xc1: the full path
      }
      if (b === 0xd9 || b === 0xda || b === 0xdb) {
        if (pos + n > len) return undefined;
        value = byKey !== undefined && n <= SHORT_STRING_MAX_BYTES ? repeatedValue(byKey, bytes, pos, pos + n) : readString(bytes, pos, pos + n);
        if (value === undefined) return undefined;
        pos += n;
      } else if (b === 0xc4 || b === 0xc5 || b === 0xc6) {
        if (pos + n > len) return undefined;
        // A view of the frame, as the full path's decoder gives.
        value = bytes.subarray(pos, pos + n);
        pos += n;
      }
    }
    out[key] = value;
  }
  return pos === len ? out : undefined;
}

function u32(b: Uint8Array, at: number): number {
  return b[at]! * 0x1000000 + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
}
