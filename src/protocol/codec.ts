/**
 * The one MessagePack codec of the realtime protocol. Bytes in, a validated
 * event out, or a `ProtocolError` carrying the spec's code (`invalid_messagepack`,
 * `invalid_message`, `segment_too_large`, `unsupported_parameter`) and the
 * path of the offending field.
 *
 * Decoding is bounded: a structural pre-scan refuses frames over the size
 * limit, nested deeper than LIMITS.maxDepth, holding more than
 * LIMITS.maxFrameValues values or declaring more items than they carry, before
 * the decoder allocates; strings must be valid UTF-8; a map must not repeat a
 * key; map keys `__proto__` and `constructor` never reach an object's
 * prototype (`__proto__` is refused as `invalid_message` wherever it appears,
 * strict schemas refuse every unknown key).
 *
 * `@msgpack/msgpack` is the implementation (standard MessagePack, `bin`
 * decoded as a view without copying); bench/codec.mjs compares it with
 * msgpackr, and only this module would change if the other won.
 */
import { Decoder, Encoder } from '@msgpack/msgpack';
import type { z } from 'zod';
import { ProtocolError } from '../errors.js';
import { isAudioFormat } from './audio.js';
import { ErrorCode } from './constants.js';
import {
  CLIENT_EVENT_SCHEMAS,
  SERVER_EVENT_SCHEMAS,
  type ClientEvent,
  type ClientEventName,
  type ServerEvent,
  type ServerEventName,
} from './events.js';
import { LIMITS } from './limits.js';
import { inspectShape } from './msgpack-shape.js';
import { INVALID_SERVER_FRAME, readServerEvent, type ReadResult } from './server-reader.js';

/** Bounded by the limits; UTF-8 and `__proto__` keys are checked by the pre-scan (msgpack-shape.ts). */
const decoder = new Decoder({
  maxStrLength: LIMITS.maxFrameBytes,
  maxBinLength: LIMITS.maxFrameBytes,
  maxArrayLength: 4_096,
  maxMapLength: 64,
  maxExtLength: 0,
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
  for (const key of Object.keys(value)) {
    n += 1 + countDecodedKeys((value as Record<string, unknown>)[key]);
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

/** Turn the first zod issue into a ProtocolError with the spec's code. */
function toProtocolError(error: z.ZodError, eventName: string): ProtocolError {
  const issue = error.issues[0]!;
  const path = issue.path.map(String);
  let code: ErrorCode = ErrorCode.invalidMessage;
  let field = path.join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    field = [...path, key].join('.');
    if (path[0] === 'request') code = ErrorCode.unsupportedParameter;
    return new ProtocolError(code, `${eventName}: unknown field ${field}`, field);
  }
  if (issue.code === 'custom' && typeof issue.params?.['code'] === 'string') code = issue.params['code'] as ErrorCode;
  if (path[0] === 'request' && path[1] === 'format' && issue.code === 'invalid_value') code = ErrorCode.unsupportedParameter;
  return new ProtocolError(code, `${eventName}: ${field || 'frame'} ${issue.message}`, field || undefined);
}

function eventNameOf(map: Record<string, unknown>): string {
  const name = map['event'];
  if (typeof name !== 'string') throw new ProtocolError(ErrorCode.invalidMessage, 'frame has no string field event', 'event');
  return name;
}

/** Validate an already decoded map as a client event. */
export function parseClientEvent(map: Record<string, unknown>): ClientEvent {
  const name = eventNameOf(map);
  const schema = Object.hasOwn(CLIENT_EVENT_SCHEMAS, name) ? CLIENT_EVENT_SCHEMAS[name as ClientEventName] : undefined;
  if (!schema) throw new ProtocolError(ErrorCode.invalidMessage, `unknown client event ${JSON.stringify(name).slice(0, 40)}`, 'event');
  const result = schema.safeParse(map);
  if (!result.success) throw toProtocolError(result.error, name);
  return result.data as ClientEvent;
}

const AUDIO_STRINGS = ['event_id', 'trace_id', 'request_id', 'session_id', 'segment_id'] as const;
const AUDIO_OPTIONAL_NUMBERS = ['sample_rate', 'channels', 'bit_depth'] as const;

/** Whether `map` satisfies AudioEventSchema (checked by hand for speed; test/protocol pins the equivalence). */
function isWellFormedAudio(map: Record<string, unknown>): boolean {
  for (const key of AUDIO_STRINGS) if (typeof map[key] !== 'string') return false;
  if (!Number.isFinite(map['timestamp']) || !Number.isFinite(map['sequence'])) return false;
  if (!(map['audio'] instanceof Uint8Array)) return false;
  if (!isAudioFormat(map['format'])) return false;
  if (map['in_reply_to'] !== undefined && typeof map['in_reply_to'] !== 'string') return false;
  for (const key of AUDIO_OPTIONAL_NUMBERS) if (map[key] !== undefined && !Number.isFinite(map[key])) return false;
  return true;
}

/** Validate an already decoded map as a server event (unknown fields kept). */
export function parseServerEvent(map: Record<string, unknown>): ServerEvent {
  const name = eventNameOf(map);
  // The hot path: most frames are audio. A well-formed one is accepted as it
  // is (the same rules as AudioEventSchema, without building a copy); anything
  // else goes through the schema, which names the problem.
  if (name === 'audio' && isWellFormedAudio(map)) return map as unknown as ServerEvent;
  const schema = Object.hasOwn(SERVER_EVENT_SCHEMAS, name) ? SERVER_EVENT_SCHEMAS[name as ServerEventName] : undefined;
  if (!schema) throw new ProtocolError(ErrorCode.invalidMessage, `unknown server event ${JSON.stringify(name).slice(0, 40)}`, 'event');
  const result = schema.safeParse(map);
  if (!result.success) throw toProtocolError(result.error, name);
  return result.data as ServerEvent;
}

/** Bytes to a validated client event (server side), or `ProtocolError`. */
export function decodeClientEvent(bytes: Uint8Array): ClientEvent {
  return parseClientEvent(decodeMap(bytes));
}

/** Bytes to a validated server event (client side), or `ProtocolError`. */
export function decodeServerEvent(bytes: Uint8Array): ServerEvent {
  return parseServerEvent(decodeMap(bytes));
}

/**
 * Bytes to a server event through the client's tolerant reader
 * (`server-reader.ts`): a frame that does not decode is `unusable`.
 */
export function readServerFrame(bytes: Uint8Array): ReadResult {
  let map: Record<string, unknown>;
  try {
    map = decodeMap(bytes);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: 'unusable', error: new ProtocolError(INVALID_SERVER_FRAME, `the server sent an undecodable frame: ${message}`, undefined, { cause: err }) };
  }
  return readServerEvent(map);
}
