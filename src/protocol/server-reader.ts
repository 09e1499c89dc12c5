/**
 * The client's tolerant reader of realtime server events (spec 6) and of the
 * request-status body (spec 4.10).
 *
 * Spec 6 names several fields only in prose ("accepted sequence and
 * character count", "segment units", "quota") and responses are additive
 * (2.1, 9.7). Our server is one deployment, not the spec, so the client
 * needs little, and finds it by meaning where it can, with names as hints:
 *
 * - every name below is looked for as written, in another case or with other
 *   separators, after a prefix word, and in a nested map (`field-finder.ts`);
 * - unknown enum values pass through as strings (a new `finish.reason`, a new
 *   `ready.format`);
 * - an unknown event, or a malformed event it does not need, is a `skip`
 *   with a warning instead of a close; a needed field it cannot find by any
 *   name comes back in `missing` (one warning per kind, from the connection)
 *   and the event goes on with its degraded meaning;
 * - a frame is given up (`unusable`, code `invalid_server_frame`: an error
 *   failover can act on, unlike `invalid_message`, which names a client bug)
 *   only when nothing of its meaning is left.
 *
 * What the client acts on, why, and what it does when the field is not found:
 *
 * | event | field | why the client needs it | not found |
 * |---|---|---|---|
 * | any | `event` | which event this is | `unusable` (nothing to go on) |
 * | `ready` | `format` | the stream's container | `unusable` |
 * | `ready`, `audio` | `sample_rate`, `channels`, `bit_depth` | PCM layout of the audio | the other event's, else the session's default (24 kHz mono 16-bit); a WAV or encoded stream's own header says it |
 * | `input_ack` | `sequence` | which `text` frame is acknowledged | the ack answers the oldest text frame not yet acknowledged (acks come in order); only a sequence the client never sent is an error, in the machine |
 * | `segment_accepted` | `segment_id` | the segment's accepted mark | `skip` (only a latency mark is lost) |
 * | `audio` | `audio` | the bytes | the frame's one binary field; else `unusable` |
 * | `audio` | `segment_id`, `sequence` | the ledger and the reorder window | `unusable` (spec 6 rule 2 names both) |
 * | `segment_completed` | `segment_id` | ends the segment whose `flush` is out | `''`: the machine takes the one segment open; its byte count is left out (it names no segment) |
 * | `segment_completed`, `usage` | `audio_bytes` | reconciles the bytes received | absent: nothing to reconcile against |
 * | `usage` | `segment_id` | whose usage | `skip` |
 * | `request_status` | `state` | what a repeated `start` answers | `unusable` |
 * | `error` | `code`, `retryable`, `terminal` | the typed error and whether to resume | `server_error` with the raw value kept; not retryable; terminal |
 * | `finish` | `reason` | done, or failed | `unusable` |
 * | request status (HTTP) | `state`, `segments[].segment_id`, `audio_url` | resume or fetch the rest | an error; entries without an id left out |
 *
 * Everything else (`characters`, `units`, `quota`) is informational: read
 * when found, a neutral value (empty string, 0, NaN) when not; the fields
 * the spec names exactly and the client only passes on (the envelope,
 * `mode`, `provider`, `model`, `voice_id`, `site`, `stage`, `path`) are
 * read under that name alone. The result has the canonical shape of `ServerEvent` (the names
 * our server emits), so the machines read one vocabulary; the original
 * fields stay on the event as well.
 *
 * The strict schemas in `events.ts` stay the contract for what our server
 * emits and what the client sends.
 */
import { ProtocolError, redactDeep } from '../errors.js';
import { asObject, isObject, type JsonObject } from './fields.js';
import { as, fieldNames, findField, type FieldNames } from './field-finder.js';
import type { Mode } from './constants.js';
import type { RequestStatus, SegmentManifestEntry, ServerEvent } from './events.js';

/** Code of a received frame the client cannot use (not `invalid_message`: that one means the client's own frame was wrong). */
export const INVALID_SERVER_FRAME = 'invalid_server_frame';

/** Warning code of a server event skipped as unknown or not usable. */
export const IGNORED_SERVER_EVENT = 'ignored_server_event';

/** Warning code of a needed field found under no name: the event was read by its meaning. */
export const FIELD_NOT_FOUND = 'server_field_not_found';

export type ReadResult =
  /** `missing`: a needed field found under no name (`event.field`), read by its meaning instead; the caller warns once per kind. */
  | { kind: 'event'; event: ServerEvent; missing?: string }
  /** Not needed and not usable, or unknown: go on, say why once. `name` is the event name, for de-duplicating warnings. */
  | { kind: 'skip'; name: string; message: string }
  | { kind: 'unusable'; error: ProtocolError };

/**
 * Every name the reader knows for each canonical field, the canonical one
 * first: the one table of names (a deployment may use any of them, or
 * another case, prefix or nesting of them: `field-finder.ts`). The tests
 * check that the drawn dialects spell needed fields outside it.
 */
export const FIELD_ALIASES = {
  request_id: ['request_id', 'requestId'],
  session_id: ['session_id', 'sessionId'],
  sequence: ['sequence', 'accepted_sequence', 'seq', 'input_sequence'],
  characters: ['characters', 'accepted_characters', 'character_count', 'chars', 'segment_characters'],
  buffered_characters: ['buffered_characters', 'buffered', 'buffered_chars'],
  remaining_capacity: ['remaining_capacity', 'capacity', 'remaining'],
  reserved_units: ['reserved_units', 'reserved_billing_units', 'billing_units', 'units'],
  units: ['units', 'segment_units', 'billing_units', 'total_units'],
  segment_units: ['segment_units', 'units'],
  session_units: ['session_units'],
  quota_remaining: ['quota_remaining', 'remaining_quota'],
  audio_bytes: ['audio_bytes', 'bytes', 'audio_size_bytes', 'audio_length'],
  audio: ['audio'],
  segment_id: ['segment_id', 'segmentId', 'id'],
  audio_url: ['audio_url', 'url', 'audioUrl', 'download_url'],
  index: ['index', 'position', 'order'],
  format: ['format', 'audio_format', 'output_format'],
  sample_rate: ['sample_rate', 'sampleRate'],
  channels: ['channels'],
  bit_depth: ['bit_depth', 'bitDepth', 'bits_per_sample'],
  quota: ['quota'],
  /** Inside an `authenticated.quota` object. */
  quota_amount: ['remaining', 'quota_remaining', 'value', 'amount', 'balance'],
  state: ['state', 'status'],
  retryable: ['retryable'],
  terminal: ['terminal'],
  result_available: ['result_available', 'resultAvailable'],
  segments: ['segments', 'manifest'],
  code: ['code', 'error_code'],
  message: ['message', 'error_message', 'detail'],
  reason: ['reason', 'finish_reason'],
} as const;

type Field = keyof typeof FIELD_ALIASES;
const NAMES: Record<Field, FieldNames> = fieldNames(FIELD_ALIASES);

const str = (map: JsonObject, field: Field): string | undefined => findField(map, NAMES[field], as.str);
/** A field the client only passes on, under the spec's own name. */
const own = (map: JsonObject, key: string): string | undefined => as.str(map[key]);
const num = (map: JsonObject, field: Field): number | undefined => findField(map, NAMES[field], as.num);
const int = (map: JsonObject, field: Field): number | undefined => findField(map, NAMES[field], as.int);
const bool = (map: JsonObject, field: Field): boolean | undefined => findField(map, NAMES[field], as.bool);

const unusable = (name: string, what: string): ReadResult => ({
  kind: 'unusable',
  error: new ProtocolError(INVALID_SERVER_FRAME, `the server's ${name} event is unusable: ${what}`, undefined, { retryable: false }),
});
const skip = (name: string, message: string): ReadResult => ({ kind: 'skip', name, message });

/** The envelope every event has; absent parts read as neutral values. */
function envelope(map: JsonObject) {
  const out: { event_id: string; trace_id: string; timestamp: number; in_reply_to?: string } = {
    event_id: own(map, 'event_id') ?? '',
    trace_id: own(map, 'trace_id') ?? '',
    timestamp: as.num(map['timestamp']) ?? 0,
  };
  const inReplyTo = own(map, 'in_reply_to');
  if (inReplyTo !== undefined) out.in_reply_to = inReplyTo;
  return out;
}

/** PCM layout, only the parts present. */
function pcm(map: JsonObject): { sample_rate?: number; channels?: number; bit_depth?: number } {
  const out: { sample_rate?: number; channels?: number; bit_depth?: number } = {};
  const rate = num(map, 'sample_rate');
  const channels = num(map, 'channels');
  const depth = num(map, 'bit_depth');
  if (rate !== undefined) out.sample_rate = rate;
  if (channels !== undefined) out.channels = channels;
  if (depth !== undefined) out.bit_depth = depth;
  return out;
}

/** `quota` is a number in our server; others send an object (`{ remaining, unit }`) or nothing. */
function quotaOf(map: JsonObject): number {
  const value = findField(map, NAMES.quota, (v) => (v === undefined || v === null ? undefined : v));
  const n = as.num(value);
  if (n !== undefined) return n;
  return num(asObject(value), 'quota_amount') ?? Number.NaN;
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
  if (read.kind === 'event' && read.event.event !== 'audio') return { ...read, event: redactDeep(read.event) as ServerEvent };
  if (read.kind === 'skip') return { ...read, message: redactDeep(read.message) as string };
  return read;
}

/** The audio bytes: under a name the reader knows, else the frame's one binary field. */
function audioBytesOf(map: JsonObject): Uint8Array | undefined {
  const named = findField(map, NAMES.audio, as.bytes);
  if (named !== undefined) return named;
  let found: Uint8Array | undefined;
  for (const key in map) {
    const v = map[key];
    if (!(v instanceof Uint8Array)) continue;
    if (found !== undefined) return undefined; // two: which one is audio is not known
    found = v;
  }
  return found;
}

/** `audio`, the hot path: a canonical frame goes through untouched, without a copy. */
function readAudio(map: JsonObject): ReadResult {
  const name = 'audio';
  // The hot path: a canonical frame goes through untouched.
  const canonicalAudio = map['audio'];
  if (
    canonicalAudio instanceof Uint8Array &&
    typeof map['segment_id'] === 'string' &&
    map['segment_id'] !== '' &&
    Number.isSafeInteger(map['sequence']) &&
    typeof map['format'] === 'string' &&
    typeof map['trace_id'] === 'string'
  ) {
    return { kind: 'event', event: map as unknown as ServerEvent };
  }
  const audio = audioBytesOf(map);
  if (audio === undefined) return unusable(name, 'no binary audio');
  const segmentId = str(map, 'segment_id');
  const sequence = int(map, 'sequence');
  if (segmentId === undefined) return unusable(name, 'no segment_id');
  if (sequence === undefined) return unusable(name, 'no integer sequence');
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
      const format = str(map, 'format');
      if (format === undefined) return unusable(name, 'no format');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'ready',
          // An unknown mode passes through as the string it is (the session knows the mode it asked for).
          mode: (own(map, 'mode') ?? '') as Mode,
          request_id: requestId,
          session_id: sessionId,
          provider: own(map, 'provider') ?? '',
          model: own(map, 'model') ?? '',
          voice_id: own(map, 'voice_id') ?? '',
          format,
          ...pcm(map),
        },
      };
    }
    case 'input_ack': {
      // A hint: acks come in order, so one without a sequence answers the oldest text frame unacknowledged.
      const sequence = int(map, 'sequence');
      const event: ServerEvent = {
        ...base,
        event: 'input_ack',
        request_id: requestId,
        characters: num(map, 'characters') ?? 0,
        buffered_characters: num(map, 'buffered_characters') ?? 0,
        remaining_capacity: num(map, 'remaining_capacity') ?? 0,
      };
      if (sequence !== undefined) return { kind: 'event', event: { ...event, sequence } };
      delete (event as JsonObject)['sequence'];
      return { kind: 'event', event, missing: 'input_ack.sequence' };
    }
    case 'segment_accepted': {
      const segmentId = str(map, 'segment_id');
      if (segmentId === undefined) return skip(name, 'segment_accepted without segment_id ignored');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'segment_accepted',
          request_id: requestId,
          segment_id: segmentId,
          characters: num(map, 'characters') ?? 0,
          reserved_units: num(map, 'reserved_units') ?? 0,
        },
      };
    }
    case 'segment_completed': {
      const segmentId = str(map, 'segment_id');
      const event: ServerEvent = {
        ...withoutAudioBytes(map),
        ...envelope(map),
        event: 'segment_completed',
        request_id: requestId,
        // '' names no segment: the machine takes the one whose flush is out.
        segment_id: segmentId ?? '',
        units: num(map, 'units') ?? 0,
        // Unknown stays unknown (absent), never 0: 0 would be a count to reconcile against.
        ...(segmentId !== undefined && audioBytes(map)),
      };
      return segmentId === undefined ? { kind: 'event', event, missing: 'segment_completed.segment_id' } : { kind: 'event', event };
    }
    case 'usage': {
      const segmentId = str(map, 'segment_id');
      if (segmentId === undefined) return skip(name, 'usage without segment_id ignored');
      return {
        kind: 'event',
        event: {
          ...withoutAudioBytes(map),
          ...envelope(map),
          event: 'usage',
          request_id: requestId,
          segment_id: segmentId,
          segment_units: num(map, 'segment_units') ?? 0,
          session_units: num(map, 'session_units') ?? 0,
          quota_remaining: num(map, 'quota_remaining') ?? Number.NaN,
          ...audioBytes(map),
        },
      };
    }
    case 'request_status': {
      const state = str(map, 'state');
      if (state === undefined) return unusable(name, 'no state');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'request_status',
          request_id: requestId,
          state,
          retryable: bool(map, 'retryable') ?? state === 'failed_retryable',
          units: num(map, 'units') ?? 0,
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
        message: str(map, 'message') ?? '(no message)',
        // Missing flags read the careful way: not retryable, terminal.
        retryable: bool(map, 'retryable') ?? false,
        terminal: bool(map, 'terminal') ?? true,
      };
      const stage = own(map, 'stage');
      const path = own(map, 'path');
      if (requestId !== '') event.request_id = requestId;
      if (sessionId !== '') event.session_id = sessionId;
      if (stage !== undefined) event.stage = stage;
      if (path !== undefined) event.path = path;
      if (rawCode !== undefined) (event as JsonObject)['raw_code'] = rawCode;
      return { kind: 'event', event };
    }
    case 'finish': {
      const reason = str(map, 'reason');
      if (reason === undefined) return unusable(name, 'no reason');
      return {
        kind: 'event',
        event: {
          ...base,
          event: 'finish',
          request_id: requestId,
          session_id: sessionId,
          reason,
          units: num(map, 'units') ?? 0,
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
          site: own(map, 'site') ?? '',
          protocol_version: as.num(map['protocol_version']) ?? 0,
          quota: quotaOf(map),
        },
      };
    case 'pong': {
      const event: ServerEvent = { ...base, event: 'pong', session_id: sessionId };
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
  const code = str(map, 'code');
  if (code !== undefined && code.trim() !== '') return { code };
  return { code: UNKNOWN_SERVER_ERROR, rawCode: map['code'] ?? null };
}

/** `audio_bytes` under any of its names, when the deployment says it (a non-negative whole number); nothing otherwise. */
function audioBytes(map: JsonObject): { audio_bytes?: number } {
  const n = num(map, 'audio_bytes');
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
  const segmentId = str(value, 'segment_id');
  if (segmentId === undefined) return undefined;
  const entry: SegmentManifestEntry = {
    ...value,
    segment_id: segmentId,
    index: num(value, 'index') ?? Number.NaN,
    // Unknown states pass through; the machine acts only on `completed`.
    state: (str(value, 'state') ?? '') as SegmentManifestEntry['state'],
    characters: num(value, 'characters') ?? 0,
    units: num(value, 'units') ?? 0,
  };
  delete entry.audio_bytes;
  Object.assign(entry, audioBytes(value));
  delete entry.audio_url;
  const url = str(value, 'audio_url');
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
  const state = str(map, 'state');
  if (state === undefined) return new ProtocolError(INVALID_SERVER_FRAME, 'the request-status body has no state');
  const out: RequestStatus = {
    ...map,
    // The body's own `id` is the request's (a manifest entry's is its segment's).
    request_id: str(map, 'request_id') ?? (typeof map['id'] === 'string' ? map['id'] : ''),
    state,
    retryable: bool(map, 'retryable') ?? state === 'failed_retryable',
    units: num(map, 'units') ?? 0,
    result_available: bool(map, 'result_available') ?? false,
  };
  const format = str(map, 'format');
  if (format !== undefined) out.format = format;
  const segments = findField(map, NAMES.segments, (v) => (Array.isArray(v) ? v : undefined));
  if (Array.isArray(segments)) out.segments = segments.map(manifestEntry).filter((e): e is SegmentManifestEntry => e !== undefined);
  else delete out.segments;
  return out;
}
