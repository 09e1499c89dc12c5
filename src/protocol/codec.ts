/**
 * The strict half of the realtime codec: bytes in, a validated event out, or
 * a `ProtocolError` carrying the spec's code (`invalid_messagepack`,
 * `invalid_message`, `segment_too_large`, `unsupported_parameter`) and the
 * path of the offending field. Strict schemas refuse every unknown key of a
 * client event. The server reads client frames here; the client never
 * imports this module (it reads through `wire.ts`, which has no zod).
 *
 * The wire functions (`decodeMap`, `encodeFrame`, `readServerFrame`) live in
 * `wire.ts` and are re-exported, so `voxpipe/protocol` exports them as before.
 */
import type { z } from 'zod';
import { ProtocolError } from '../errors.js';
import { ErrorCode } from './constants.js';
import {
  CLIENT_EVENT_SCHEMAS,
  SERVER_EVENT_SCHEMAS,
  type ClientEvent,
  type ClientEventName,
  type ServerEvent,
  type ServerEventName,
} from './events.js';
import { decodeMap } from './wire.js';

export { decodeMap, encodeFrame, readServerFrame } from './wire.js';

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

/**
 * Validate an already decoded map as a server event (unknown fields kept):
 * the contract of what our server emits, for tests and other readers. The
 * client does not run it: it reads frames through `wire.ts`
 * (`readServerFrame`) and `server-reader.ts`, which bench/codec.mjs measures.
 */
export function parseServerEvent(map: Record<string, unknown>): ServerEvent {
  const name = eventNameOf(map);
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

/** Bytes to a server event validated against the strict schemas (tests; the client reads with `readServerFrame`), or `ProtocolError`. */
export function decodeServerEvent(bytes: Uint8Array): ServerEvent {
  return parseServerEvent(decodeMap(bytes));
}
