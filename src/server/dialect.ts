/**
 * Dialects of the reference server. Wherever the spec leaves a
 * point open ("not shown", "exact field names: not shown", two shapes "both
 * listed"), a real deployment may take it another way. A dialect takes every
 * such point one way, so the client's suites can run against more than our
 * own choices. `reference` is this server as it always was.
 *
 * | point | spec | reference | alt | minimal |
 * |---|---|---|---|---|
 * | envelope `trace_id` | 6 (every event has it) | sent | left out (a deployment that omits it) | left out |
 * | unknown fields on events | 2.1, 9.7 (additive) | none | `server_region` on every event | none |
 * | `authenticated.quota` | 6 ("quota") | number | `{ remaining, unit }` | number |
 * | `input_ack` names | 6 ("accepted sequence and character count, buffered characters, remaining capacity") | `sequence`, `characters`, `buffered_characters`, `remaining_capacity` | `accepted_sequence`, `accepted_characters`, `buffered`, `capacity` | reference |
 * | `segment_accepted` names | 6 ("segment characters, reserved billing units") | `characters`, `reserved_units` | `segment_characters`, `reserved_billing_units` | reference |
 * | `segment_completed` units | 6 ("segment units") | `units` | `segment_units` | reference |
 * | `audio.sequence` scope | 6 ("increasing sequence") | per connection | per segment | per connection |
 * | extra event kinds | 2.1 | none | `server_stats` after each `segment_completed` | none |
 * | status manifest entry | 4.10 (fields not shown) | `index`, `audio_url` | no `index`, `url` | reference |
 * | capabilities document | 4.10 ("exact field names: not shown") | `providers[].models[].voices[]` | top-level `models[]` with `default_voice_id`, no voice lists | route absent (404) |
 * | `GET /voices` pagination | 4.8 ("response fields and filters: not shown") | `limit`/`offset`, `pagination: { limit, offset, hasMore, total }` | `page`/`pageSize`, `{ data, page, pageSize, total }` | as alt |
 * | REST error body | 7.1 (both described) | `{ error: { code, message, requestId } }` | flat `{ code, message, requestId }` | flat |
 * | async TTS at `/speech/tts/jobs` | 4.3 ("envelope shape or flat shape / minimal") | envelope (2.4) | flat (2.5) | minimal `{ id, status: 'queued' }` (2.5) |
 * | browser ticket field | 4.10 (response: "a ticket") | `ticket` | `ticket_token` | `ticket` |
 *
 * The server's strict schemas describe the `reference` dialect; the others
 * are rewrites at the boundary (the realtime send, the REST error writer,
 * the routes' views), so every rule of the service stays the same.
 *
 * Besides the three presets, `random:SEED` draws every open point from a
 * wide space (`dialect-random.ts` lists the points, `off=` and
 * `only=` switch them); `describeDialect()` prints what was drawn so a
 * seed replays.
 */

import { describeDraw, drawRandomDialect, isRandomDialectName, REFERENCE_HTTP, type HttpDraw } from './dialect-random.js';
import { encodeDrawnFrame, randomRealtime, type RealtimeRewriter } from './dialect-realtime.js';
import { encodeFrame } from '../protocol/wire.js';

export const DIALECTS = ['reference', 'alt', 'minimal'] as const;
/** A preset's name; `random:SEED` (with `:off=` or `:only=`) names a drawn dialect. */
export type DialectName = (typeof DIALECTS)[number] | `random:${string}`;

export type JobShape = 'envelope' | 'flat' | 'minimal';
export type { RealtimeRewriter } from './dialect-realtime.js';

/** The HTTP choices beyond the route views: errors, redirects, headers, encodings, WAV chunks. */
export type WireStyle = Pick<HttpDraw, 'errorContentType' | 'redirectStatus' | 'redirectLocation' | 'redirectHost' | 'retryAfter' | 'wavContentType' | 'pcmStatement' | 'mp3ContentType' | 'opusContentType' | 'gzip' | 'chunked' | 'wavChunks' | 'maxPageSize'> & {
  /** Chance of unknown fields on a JSON body (0: none). */
  unknownFields: number;
  /** Seed of the per-response draws (which unknown fields); empty for a preset, whose wire is ours. */
  seed: string;
};

export interface Dialect {
  name: DialectName;
  /** Rewrites realtime events of one connection before they are encoded (stateful: sequence scope). */
  realtime(): RealtimeRewriter;
  /** Encodes one rewritten frame (a drawn dialect may write numbers in other encodings). */
  encode(frame: Record<string, unknown>): Uint8Array;
  capabilities: HttpDraw['capabilities'];
  manifest: 'reference' | 'alt';
  voicesPaging: HttpDraw['paging'];
  errorBody: 'wrapped' | 'flat';
  jobShape: JobShape;
  ticketField: string;
  /** The rest of the HTTP boundary (`dialect-http.ts`). */
  wire: WireStyle;
  /** PCM rate of all audio, the engine's output resampled; undefined: the engine's own rate. */
  sampleRate: number | undefined;
  /** Close after `finish`: code 1000, or a close frame without a status (the peer reads 1005). */
  normalClose: 1000 | 'no-status';
  /** Realtime frames delayed by up to `maxMs` (order kept), on `share` of them. */
  jitter: { maxMs: number; share: number };
}

function rename(event: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event)) out[names[k] ?? k] = v;
  return out;
}

const ALT_NAMES: Record<string, Record<string, string>> = {
  input_ack: { sequence: 'accepted_sequence', characters: 'accepted_characters', buffered_characters: 'buffered', remaining_capacity: 'capacity' },
  segment_accepted: { characters: 'segment_characters', reserved_units: 'reserved_billing_units' },
  segment_completed: { units: 'segment_units' },
};

function altRealtime(): RealtimeRewriter {
  const perSegment = new Map<string, number>();
  return (event) => {
    const { trace_id: _trace, ...rest } = event;
    let out: Record<string, unknown> = { ...rest, server_region: 'alt-1' };
    const name = String(event['event']);
    const names = ALT_NAMES[name];
    if (names) out = rename(out, names);
    if (name === 'authenticated' && typeof event['quota'] === 'number') out['quota'] = { remaining: event['quota'], unit: 'credits' };
    if (name === 'audio') {
      const segment = String(event['segment_id']);
      const n = (perSegment.get(segment) ?? 0) + 1;
      perSegment.set(segment, n);
      out['sequence'] = n;
    }
    if (name === 'segment_completed') {
      return [out, { event: 'server_stats', event_id: `${String(event['event_id'])}-stats`, timestamp: event['timestamp'], request_id: event['request_id'], queue_depth: 0, server_region: 'alt-1' }];
    }
    return [out];
  };
}

function withoutTrace(): RealtimeRewriter {
  return (event) => {
    const { trace_id: _trace, ...rest } = event;
    return [rest];
  };
}

const identity: RealtimeRewriter = (event) => [event];

/** The presets' wire: ours (only the route views differ between them). */
const REFERENCE_WIRE: WireStyle = {
  errorContentType: REFERENCE_HTTP.errorContentType,
  redirectStatus: REFERENCE_HTTP.redirectStatus,
  redirectLocation: REFERENCE_HTTP.redirectLocation,
  redirectHost: REFERENCE_HTTP.redirectHost,
  retryAfter: REFERENCE_HTTP.retryAfter,
  wavContentType: REFERENCE_HTTP.wavContentType,
  pcmStatement: REFERENCE_HTTP.pcmStatement,
  mp3ContentType: REFERENCE_HTTP.mp3ContentType,
  opusContentType: REFERENCE_HTTP.opusContentType,
  gzip: REFERENCE_HTTP.gzip,
  chunked: REFERENCE_HTTP.chunked,
  wavChunks: REFERENCE_HTTP.wavChunks,
  maxPageSize: REFERENCE_HTTP.maxPageSize,
  unknownFields: 0,
  seed: '',
};
const PRESET_REALTIME = { wire: REFERENCE_WIRE, sampleRate: undefined, normalClose: 1000, jitter: { maxMs: 0, share: 0 }, encode: encodeFrame } as const;

const TABLE: Record<(typeof DIALECTS)[number], Omit<Dialect, 'name'>> = {
  reference: { realtime: () => identity, capabilities: 'reference', manifest: 'reference', voicesPaging: 'offset', errorBody: 'wrapped', jobShape: 'envelope', ticketField: 'ticket', ...PRESET_REALTIME },
  alt: { realtime: altRealtime, capabilities: 'top-level-models', manifest: 'alt', voicesPaging: 'page', errorBody: 'flat', jobShape: 'flat', ticketField: 'ticket_token', ...PRESET_REALTIME },
  minimal: { realtime: withoutTrace, capabilities: 'absent', manifest: 'reference', voicesPaging: 'page', errorBody: 'flat', jobShape: 'minimal', ticketField: 'ticket', ...PRESET_REALTIME },
};

/** Descriptions of drawn dialects, by name (a preset describes itself by its name). */
const drawn = new Map<string, string>();

function randomDialect(name: `random:${string}`): Dialect {
  const draw = drawRandomDialect(name);
  drawn.set(name, describeDraw(name, draw));
  const h = draw.http;
  const rt = draw.realtime;
  return {
    name,
    realtime: randomRealtime(rt, draw.seed),
    encode: rt.numbers === 'varied' ? encodeDrawnFrame : encodeFrame,
    capabilities: h.capabilities,
    manifest: h.manifest,
    voicesPaging: h.paging,
    errorBody: h.errorBody,
    jobShape: h.jobShape,
    ticketField: h.ticketField,
    wire: {
      errorContentType: h.errorContentType,
      redirectStatus: h.redirectStatus,
      redirectLocation: h.redirectLocation,
      redirectHost: h.redirectHost,
      retryAfter: h.retryAfter,
      wavContentType: h.wavContentType,
      pcmStatement: h.pcmStatement,
      mp3ContentType: h.mp3ContentType,
      opusContentType: h.opusContentType,
      gzip: h.gzip,
      chunked: h.chunked,
      wavChunks: h.wavChunks,
      maxPageSize: h.maxPageSize,
      unknownFields: rt.unknownFields,
      seed: draw.seed,
    },
    sampleRate: rt.sampleRate,
    normalClose: rt.normalClose,
    jitter: rt.jitter,
  };
}

/**
 * The dialect called `name` (default `VOXPIPE_DIALECT`, else `reference`):
 * a preset, or `random:SEED[:off=POINT,...|:only=POINT,...]`.
 * @throws Error naming the dialects when `name` is not one
 */
export function dialectOf(name: string | undefined = process.env['VOXPIPE_DIALECT'] || undefined): Dialect {
  const chosen = name ?? 'reference';
  if (isRandomDialectName(chosen)) return randomDialect(chosen as `random:${string}`);
  if (!(DIALECTS as readonly string[]).includes(chosen)) throw new Error(`unknown dialect ${JSON.stringify(chosen)}; one of: ${DIALECTS.join(', ')}, or random:SEED`);
  const preset = chosen as (typeof DIALECTS)[number];
  return { name: preset, ...TABLE[preset] };
}

/**
 * What the dialect called `name` (default `VOXPIPE_DIALECT`, else
 * `reference`) takes each open point as, in one line: for a drawn dialect
 * every draw and how to replay it. For test failure messages and `serve`.
 * @throws Error when `name` is not a dialect
 */
export function describeDialect(name: string | undefined = process.env['VOXPIPE_DIALECT'] || undefined): string {
  const dialect = dialectOf(name);
  return drawn.get(dialect.name) ?? `${dialect.name} (preset; table in src/server/dialect.ts)`;
}
