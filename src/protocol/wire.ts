/**
 * The wire half of the realtime codec, with no schema library: MessagePack
 * bytes to a bounded plain map (`decodeMap`), events to bytes (`encodeFrame`),
 * and a server frame through the client's tolerant reader (`readServerFrame`).
 * This is all the client (Node and browser) imports: the strict zod schemas
 * (`codec.ts`, `events.ts`) are for what the server accepts and for tests, so
 * the browser bundle carries no zod (scripts/build-browser.mjs holds its budget).
 *
 * Decoding is bounded: a structural pre-scan refuses frames over the size
 * limit, nested deeper than LIMITS.maxDepth, holding more than
 * LIMITS.maxFrameValues values or declaring more items than they carry, before
 * the decoder allocates; strings must be valid UTF-8; a map must not repeat a
 * key; map keys `__proto__` and `constructor` never reach an object's
 * prototype (`__proto__` is refused as `invalid_message` wherever it appears).
 *
 * `@msgpack/msgpack` is the implementation (standard MessagePack, `bin`
 * decoded as a view without copying); bench/codec.mjs compares it with
 * msgpackr, and only this module would change if the other won.
 */
import { Decoder, Encoder, ExtData, ExtensionCodec, decodeTimestampExtension, encodeTimestampExtension, EXT_TIMESTAMP } from '@msgpack/msgpack';
import { ProtocolError } from '../errors.js';
import { ErrorCode } from './constants.js';
import { LIMITS } from './limits.js';
import { decodeFlatMap } from './flat-frame.js';
import { inspectShape } from './msgpack-shape.js';
import { INVALID_SERVER_FRAME, readServerEvent, type ReadResult } from './server-reader.js';

/**
 * Extension values are legal MessagePack (a deployment may put a timestamp
 * extension in a field the client never reads): a timestamp decodes to a
 * `Date`, any other type, or a timestamp of a size the spec of MessagePack
 * does not define, to an `ExtData` holding a view of its bytes. None throws:
 * a value the client does not read must not end a frame.
 */
const extensions = new ExtensionCodec();
extensions.register({
  type: EXT_TIMESTAMP,
  encode: encodeTimestampExtension,
  decode: (data: Uint8Array, type: number) => {
    try {
      return decodeTimestampExtension(data);
    } catch {
      return new ExtData(type, data);
    }
  },
});

/** Bounded by the limits; UTF-8 and `__proto__` keys are checked by the pre-scan (msgpack-shape.ts). */
const decoder = new Decoder({
  maxStrLength: LIMITS.maxFrameBytes,
  maxBinLength: LIMITS.maxFrameBytes,
  maxArrayLength: 4_096,
  maxMapLength: 64,
  maxExtLength: LIMITS.maxFrameBytes,
  extensionCodec: extensions,
});

/** Own keys of every decoded map in `value` (maps decode to plain objects). */
function countDecodedKeys(value: unknown): number {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const item of value) n += countDecodedKeys(item);
    return n;
  }
  // Extension values (Date, ExtData) are not maps.
  if (Object.getPrototypeOf(value) !== Object.prototype) return 0;
  // for-in over a plain object is its own enumerable keys (Object.prototype
  // has none) without building the key array Object.keys would, per frame.
  for (const key in value) {
    n += 1;
    const item = (value as Record<string, unknown>)[key];
    // Most values of a frame are scalars or the audio bytes: no call for them.
    if (item !== null && typeof item === 'object' && !(item instanceof Uint8Array)) n += countDecodedKeys(item);
  }
  return n;
}

const encoder = new Encoder({ ignoreUndefined: true });

/** Encode an event (client or server) as one MessagePack frame. */
export function encodeFrame(event: object): Uint8Array {
  return encoder.encode(event);
}

/** Decode a frame into a plain map, or throw `ProtocolError`. No schema applied. */
export function decodeMap(bytes: Uint8Array): Record<string, unknown> {
  // Flat maps (every event the client acts on per frame) in one pass; any
  // other frame, or any problem, takes the full path (flat-frame.ts).
  return decodeFlatMap(bytes, LIMITS.maxFrameBytes, LIMITS.maxFrameValues) ?? decodeMapFull(bytes);
}

/**
 * `decodeMap` without the one pass: pre-scan, decode, repeated-key check,
 * for every frame. The same result or the same error; used where code size
 * counts more than speed (the browser bundle's budget).
 */
export function decodeMapFull(bytes: Uint8Array): Record<string, unknown> {
  if (bytes.byteLength > LIMITS.maxFrameBytes) {
    throw new ProtocolError(ErrorCode.invalidMessage, `frame of ${bytes.byteLength} bytes exceeds ${LIMITS.maxFrameBytes}`);
  }
  const shape = inspectShape(bytes, LIMITS.maxDepth, LIMITS.maxFrameValues);
  const problem = shape.problem;
  if (problem === 'not_a_map') throw new ProtocolError(ErrorCode.invalidMessage, 'frame is not a MessagePack map');
  // Well-formed MessagePack with content the protocol forbids.
  if (problem === 'invalid_utf8') throw new ProtocolError(ErrorCode.invalidMessage, 'string is not valid UTF-8');
  if (problem === 'forbidden_key') throw new ProtocolError(ErrorCode.invalidMessage, 'forbidden key __proto__', '__proto__');
  if (problem !== null) throw new ProtocolError(ErrorCode.invalidMessagepack, `malformed MessagePack (${problem.replaceAll('_', ' ')})`);
  let value: unknown;
  try {
    value = decoder.decode(bytes);
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    throw new ProtocolError(ErrorCode.invalidMessagepack, `malformed MessagePack: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) {
    throw new ProtocolError(ErrorCode.invalidMessage, 'frame is not a MessagePack map');
  }
  // A repeated key silently keeps its last value, so two readers of one frame
  // could disagree on what it says (`event: stop` then `event: ping`): refuse.
  if (countDecodedKeys(value) !== shape.mapEntries) {
    throw new ProtocolError(ErrorCode.invalidMessage, 'a map repeats a key');
  }
  return value as Record<string, unknown>;
}

/**
 * Bytes to a server event through the client's tolerant reader
 * (`server-reader.ts`): a frame that does not decode is `unusable`.
 */
export function readServerFrame(bytes: Uint8Array): ReadResult {
  const flat = decodeFlatMap(bytes, LIMITS.maxFrameBytes, LIMITS.maxFrameValues);
  return flat === undefined ? readServerFrameCompact(bytes) : readServerEvent(flat);
}

/**
 * `readServerFrame` through the full path only (`decodeMapFull`): what the
 * browser bundle uses, so the one pass (1.2 KiB gzipped) stays out of its
 * 30 KiB budget. Same results, slower per frame (bench/receive-path.mjs).
 */
export function readServerFrameCompact(bytes: Uint8Array): ReadResult {
  let map: Record<string, unknown>;
  try {
    map = decodeMapFull(bytes);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: 'unusable', error: new ProtocolError(INVALID_SERVER_FRAME, `the server sent an undecodable frame: ${message}`, undefined, { cause: err }) };
  }
  return readServerEvent(map);
}
