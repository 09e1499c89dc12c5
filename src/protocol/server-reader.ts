/**
 * The client's tolerant reader of realtime server events (spec 6) and of the
 * request-status body (spec 4.10).
 *
 * Spec 6 names several fields loosely ("accepted sequence and character
 * count", "segment units", "quota") and responses are additive (2.1, 9.7).
 * Our server is one deployment, not the spec, so the client:
 *
 * - requires only what it acts on: segment ids, audio bytes and sequence,
 *   the acked sequence, PCM layout, error code / retryable / terminal, finish
 *   reason, request state, manifest audio;
 * - reads the reasonable spellings of a loosely named field (`FIELD_ALIASES`);
 * - passes unknown enum values through as strings (a new `finish.reason`, a
 *   new `ready.format`);
 * - turns an unknown event, or a malformed event it does not need, into a
 *   `skip` with a warning instead of closing the connection;
 * - gives up on a frame only when it truly cannot use it (`unusable`, code
 *   `invalid_server_frame`): an error failover can act on, unlike
 *   `invalid_message`, which names a client bug.
 *
 * The result has the canonical shape of `ServerEvent` (the names our server
 * emits), so the state machines read one vocabulary. Fields the client does
 * not act on and the server did not send get a neutral value (empty string,
 * 0); the original fields stay on the event as well.
 *
 * The strict schemas in `events.ts` stay the contract for what our server
 * emits and what the client sends.
 */
import { ProtocolError, redactDeep } from '../errors.js';
import { asObject, bool, isObject, num, str, type JsonObject } from './fields.js';
import type { Mode } from './constants.js';
import type { RequestStatus, SegmentManifestEntry, ServerEvent } from './events.js';

/** Code of a received frame the client cannot use (not `invalid_message`: that one means the client's own frame was wrong). */
export const INVALID_SERVER_FRAME = 'invalid_server_frame';

/** Warning code of a server event skipped as unknown or not usable. */
export const IGNORED_SERVER_EVENT = 'ignored_server_event';

export type ReadResult =
  | { kind: 'event'; event: ServerEvent }
  /** Not needed and not usable, or unknown: go on, say why once. `name` is the event name, for de-duplicating warnings. */
  | { kind: 'skip'; name: string; message: string }
  | { kind: 'unusable'; error: ProtocolError };

/**
 * Spellings accepted for each canonical field, the canonical one first.
 * Anything here is a name some deployment may reasonably use where the spec
 * names the field only in prose.
 */
export const FIELD_ALIASES = {
  sequence: ['sequence', 'accepted_sequence', 'seq', 'input_sequence'],
  characters: ['characters', 'accepted_characters', 'character_count', 'chars', 'segment_characters'],
  buffered_characters: ['buffered_characters', 'buffered', 'buffered_chars'],
  remaining_capacity: ['remaining_capacity', 'capacity', 'remaining'],
  reserved_units: ['reserved_units', 'reserved_billing_units', 'billing_units', 'units'],
  units: ['units', 'segment_units', 'billing_units', 'total_units'],
  audio_bytes: ['audio_bytes', 'bytes', 'audio_size_bytes', 'audio_length'],
  segment_id: ['segment_id', 'segmentId', 'id'],
  audio_url: ['audio_url', 'url', 'audioUrl', 'download_url'],
  quota: ['remaining', 'quota_remaining', 'value', 'amount', 'balance'],
} as const;

const unusable = (name: string, what: string): ReadResult => ({
  kind: 'unusable',
  error: new ProtocolError(INVALID_SERVER_FRAME, `the server's ${name} event is unusable: ${what}`, undefined, { retryable: false }),
});
const skip = (name: string, message: string): ReadResult => ({ kind: 'skip', name, message });

/** The envelope every event has; absent parts read as neutral values. */
function envelope(map: JsonObject) {
  const out: { event_id: string; trace_id: string; timestamp: number; in_reply_to?: string } = {
    event_id: str(map, 'event_id') ?? '',
    trace_id: str(map, 'trace_id') ?? '',
    timestamp: num(map, 'timestamp') ?? 0,
  };
  const inReplyTo = str(map, 'in_reply_to');
  if (inReplyTo !== undefined) out.in_reply_to = inReplyTo;
  return out;
}

/** PCM layout, only the parts present. */
function pcm(map: JsonObject): { sample_rate?: number; channels?: number; bit_depth?: number } {
  const out: { sample_rate?: number; channels?: number; bit_depth?: number } = {};
  const rate = num(map, 'sample_rate', 'sampleRate');
  const channels = num(map, 'channels');
  const depth = num(map, 'bit_depth', 'bitDepth', 'bits_per_sample');
  if (rate !== undefined) out.sample_rate = rate;
  if (channels !== undefined) out.channels = channels;
  if (depth !== undefined) out.bit_depth = depth;
  return out;
}

/** `quota` is a number in our server; others send an object (`{ remaining, unit }`) or nothing. */
function quotaOf(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return num(asObject(value), ...FIELD_ALIASES.quota) ?? Number.NaN;
}

/** A whole number, or undefined. MessagePack int64 may decode as bigint. */
function int(map: JsonObject, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = map[k];
    if (typeof v === 'bigint') return Number(v);
  }
  const n = num(map, ...keys);
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Read one decoded frame as a server event. `map` keeps every field it had;
 * the returned event is a new object with the canonical fields set (audio
 * frames in canonical form are returned as they are, without a copy).
 */
export function readServerEvent(map: JsonObject): ReadResult {
  const read = readEvent(map);
  // Strings from the wire reach events, errors and logs: a server or proxy
  // that echoes the key back must not get it there (audio frames carry none
  // the client passes on, and stay on the fast path).
  if (read.kind === 'event' && read.event.event !== 'audio') return { kind: 'event', event: redactDeep(read.event) as ServerEvent };
  if (read.kind === 'skip') return { ...read, message: redactDeep(read.message) as string };
  return read;
}

/** `audio`, the hot path: a canonical frame goes through untouched, without a copy. */
function readAudio(map: JsonObject): ReadResult {
  const name = 'audio';
  const audio = map['audio'];
  const segmentId = str(map, ...FIELD_ALIASES.segment_id);
  const sequence = int(map, FIELD_ALIASES.sequence);
  if (!(audio instanceof Uint8Array)) return unusable(name, 'audio is not binary');
  if (segmentId === undefined) return unusable(name, 'no segment_id');
  if (sequence === undefined) return unusable(name, 'no integer sequence');
  // The hot path: a canonical frame goes through untouched.
  if (map['segment_id'] === segmentId && map['sequence'] === sequence && typeof map['format'] === 'string' && typeof map['trace_id'] === 'string') {
    return { kind: 'event', event: map as unknown as ServerEvent };
  }
  return {
    kind: 'event',
    event: {
      ...map,
      ...envelope(map),
      event: 'audio',
      request_id: str(map, 'request_id') ?? '',
      session_id: str(map, 'session_id') ?? '',
      segment_id: segmentId,
      sequence,
      audio: audio as Uint8Array<ArrayBuffer>,
      format: str(map, 'format') ?? '',
      ...pcm(map),
    },
  };
}

function readEvent(map: JsonObject): ReadResult {
  const name = map['event'];
  if (typeof name !== 'string' || name === '') return unusable('(unnamed)', 'no string field event');
  if (name.length > 64) return skip(name.slice(0, 64), 'an event with an overlong name ignored');
  if (name === 'audio') return readAudio(map);
  const base = { ...map, ...envelope(map) };
  // Read once: most events carry them, absent as ''.
  const requestId = str(map, 'request_id') ?? '';
  const sessionId = str(map, 'session_id') ?? '';
  switch (name) {
    case 'ready': {
      const format = str(map, 'format', 'audio_format', 'output_format');
      if (format === undefined) return unusable(name, 'no format');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'ready',
          // An unknown mode passes through as the string it is (the session knows the mode it asked for).
          mode: (str(map, 'mode') ?? '') as Mode,
          request_id: requestId,
          session_id: sessionId,
          provider: str(map, 'provider') ?? '',
          model: str(map, 'model') ?? '',
          voice_id: str(map, 'voice_id') ?? '',
          format,
          ...pcm(map),
        },
      };
    }
    case 'input_ack': {
      const sequence = int(map, FIELD_ALIASES.sequence);
      if (sequence === undefined) return unusable(name, 'no accepted sequence');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'input_ack',
          request_id: requestId,
          sequence,
          characters: num(map, ...FIELD_ALIASES.characters) ?? 0,
          buffered_characters: num(map, ...FIELD_ALIASES.buffered_characters) ?? 0,
          remaining_capacity: num(map, ...FIELD_ALIASES.remaining_capacity) ?? 0,
        },
      };
    }
    case 'segment_accepted': {
      const segmentId = str(map, ...FIELD_ALIASES.segment_id);
      if (segmentId === undefined) return skip(name, 'segment_accepted without segment_id ignored');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'segment_accepted',
          request_id: requestId,
          segment_id: segmentId,
          characters: num(map, ...FIELD_ALIASES.characters) ?? 0,
          reserved_units: num(map, ...FIELD_ALIASES.reserved_units) ?? 0,
        },
      };
    }
    case 'segment_completed': {
      const segmentId = str(map, ...FIELD_ALIASES.segment_id);
      if (segmentId === undefined) return unusable(name, 'no segment_id');
      return {
        kind: 'event',
        event: {
          ...withoutAudioBytes(map),
          ...envelope(map),
          event: 'segment_completed',
          request_id: requestId,
          segment_id: segmentId,
          units: num(map, ...FIELD_ALIASES.units) ?? 0,
          // Unknown stays unknown (absent), never 0: 0 would be a count to reconcile against.
          ...audioBytes(map),
        },
      };
    }
    case 'usage': {
      const segmentId = str(map, ...FIELD_ALIASES.segment_id);
      if (segmentId === undefined) return skip(name, 'usage without segment_id ignored');
      return {
        kind: 'event',
        event: {
          ...withoutAudioBytes(map),
          ...envelope(map),
          event: 'usage',
          request_id: requestId,
          segment_id: segmentId,
          segment_units: num(map, 'segment_units', 'units') ?? 0,
          session_units: num(map, 'session_units') ?? 0,
          quota_remaining: num(map, 'quota_remaining', 'remaining_quota') ?? Number.NaN,
          ...audioBytes(map),
        },
      };
    }
    case 'request_status': {
      const state = str(map, 'state', 'status');
      if (state === undefined) return unusable(name, 'no state');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'request_status',
          request_id: requestId,
          state,
          retryable: bool(map, 'retryable') ?? state === 'failed_retryable',
          units: num(map, ...FIELD_ALIASES.units) ?? 0,
          result_available: bool(map, 'result_available') ?? false,
        },
      };
    }
    case 'error': {
      const { code, rawCode } = errorCodeOf(map);
      const event: ServerEvent = {
        ...base,
        event: 'error',
        code,
        message: str(map, 'message', 'error_message', 'detail') ?? '(no message)',
        // Missing flags read the careful way: not retryable, terminal.
        retryable: bool(map, 'retryable') ?? false,
        terminal: bool(map, 'terminal') ?? true,
      };
      const stage = str(map, 'stage');
      const path = str(map, 'path');
      if (requestId !== '') event.request_id = requestId;
      if (sessionId !== '') event.session_id = sessionId;
      if (stage !== undefined) event.stage = stage;
      if (path !== undefined) event.path = path;
      if (rawCode !== undefined) (event as JsonObject)['raw_code'] = rawCode;
      return { kind: 'event', event };
    }
    case 'finish': {
      const reason = str(map, 'reason', 'finish_reason');
      if (reason === undefined) return unusable(name, 'no reason');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'finish',
          request_id: requestId,
          session_id: sessionId,
          reason,
          units: num(map, ...FIELD_ALIASES.units) ?? 0,
        },
      };
    }
    case 'warning': {
      const event: ServerEvent = { ...base, event: 'warning', code: str(map, 'code') ?? 'warning', message: str(map, 'message') ?? '' };
      if (requestId !== '') event.request_id = requestId;
      return { kind: 'event', event };
    }
    case 'authenticated':
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'authenticated',
          session_id: sessionId,
          site: str(map, 'site') ?? '',
          protocol_version: num(map, 'protocol_version') ?? 0,
          quota: quotaOf(map['quota']),
        },
      };
    case 'pong': {
      const event: ServerEvent = { ...base, event: 'pong', session_id: str(map, 'session_id') ?? '' };
      if (requestId !== '') event.request_id = requestId;
      return { kind: 'event', event };
    }
    default:
      return skip(name, `unknown server event ${JSON.stringify(name).slice(0, 40)} ignored`);
  }
}

/** Fallback of an `error` event with no usable code; the server's value is kept as `raw_code`. */
export const UNKNOWN_SERVER_ERROR = 'server_error';

function errorCodeOf(map: JsonObject): { code: string; rawCode?: unknown } {
  const code = str(map, 'code', 'error_code');
  if (code !== undefined && code.trim() !== '') return { code };
  return { code: UNKNOWN_SERVER_ERROR, rawCode: map['code'] ?? null };
}

/** `audio_bytes` under any of its names, when the deployment says it (a non-negative whole number); nothing otherwise. */
function audioBytes(map: JsonObject): { audio_bytes?: number } {
  const n = num(map, ...FIELD_ALIASES.audio_bytes);
  return n !== undefined && Number.isSafeInteger(n) && n >= 0 ? { audio_bytes: n } : {};
}

/** The frame's own fields but its audio bytes (which `audioBytes()` reads under any name). */
function withoutAudioBytes(map: JsonObject): JsonObject {
  const { audio_bytes: _dropped, ...rest } = map;
  return rest;
}

/** A manifest entry, or undefined when it names no segment. */
function manifestEntry(value: unknown): SegmentManifestEntry | undefined {
  if (!isObject(value)) return undefined;
  const segmentId = str(value, ...FIELD_ALIASES.segment_id);
  if (segmentId === undefined) return undefined;
  const entry: SegmentManifestEntry = {
    ...value,
    segment_id: segmentId,
    index: num(value, 'index', 'position', 'order') ?? Number.NaN,
    // Unknown states pass through; the machine acts only on `completed`.
    state: (str(value, 'state', 'status') ?? '') as SegmentManifestEntry['state'],
    characters: num(value, ...FIELD_ALIASES.characters) ?? 0,
    units: num(value, ...FIELD_ALIASES.units) ?? 0,
  };
  delete entry.audio_bytes;
  Object.assign(entry, audioBytes(value));
  delete entry.audio_url;
  const url = str(value, ...FIELD_ALIASES.audio_url);
  if (url !== undefined) entry.audio_url = url;
  return entry;
}

/**
 * Read the body of `GET {rt_http_url}/v2/tts/requests/{id}`: `state` is
 * required; manifest entries that name no segment are left out, an entry
 * without `index` keeps the order it was listed in.
 */
export function readRequestStatus(body: unknown): RequestStatus | ProtocolError {
  const map = asObject(isObject(body) && isObject(body['data']) && !('state' in body) ? body['data'] : body);
  const state = str(map, 'state', 'status');
  if (state === undefined) return new ProtocolError(INVALID_SERVER_FRAME, 'the request-status body has no state');
  const out: RequestStatus = {
    ...map,
    request_id: str(map, 'request_id', 'requestId', 'id') ?? '',
    state,
    retryable: bool(map, 'retryable') ?? state === 'failed_retryable',
    units: num(map, ...FIELD_ALIASES.units) ?? 0,
    result_available: bool(map, 'result_available', 'resultAvailable') ?? false,
  };
  const format = str(map, 'format');
  if (format !== undefined) out.format = format;
  const segments = map['segments'] ?? map['manifest'];
  if (Array.isArray(segments)) out.segments = segments.map(manifestEntry).filter((e): e is SegmentManifestEntry => e !== undefined);
  else delete out.segments;
  return out;
}
