/**
 * Dialects of the reference server (issue 9). Wherever the spec leaves a
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
 */

export const DIALECTS = ['reference', 'alt', 'minimal'] as const;
export type DialectName = (typeof DIALECTS)[number];

export type JobShape = 'envelope' | 'flat' | 'minimal';

export interface Dialect {
  name: DialectName;
  /** Rewrites realtime events of one connection before they are encoded (stateful: sequence scope). */
  realtime(): RealtimeRewriter;
  capabilities: 'reference' | 'top-level-models' | 'absent';
  manifest: 'reference' | 'alt';
  voicesPaging: 'offset' | 'page';
  errorBody: 'wrapped' | 'flat';
  jobShape: JobShape;
  ticketField: 'ticket' | 'ticket_token';
}

/** Turns one event into the frames to send (usually one; none drops it; more adds events). */
export type RealtimeRewriter = (event: Record<string, unknown>) => Record<string, unknown>[];

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

const TABLE: Record<DialectName, Omit<Dialect, 'name'>> = {
  reference: { realtime: () => identity, capabilities: 'reference', manifest: 'reference', voicesPaging: 'offset', errorBody: 'wrapped', jobShape: 'envelope', ticketField: 'ticket' },
  alt: { realtime: altRealtime, capabilities: 'top-level-models', manifest: 'alt', voicesPaging: 'page', errorBody: 'flat', jobShape: 'flat', ticketField: 'ticket_token' },
  minimal: { realtime: withoutTrace, capabilities: 'absent', manifest: 'reference', voicesPaging: 'page', errorBody: 'flat', jobShape: 'minimal', ticketField: 'ticket' },
};

/**
 * The dialect called `name` (default `VOXPIPE_DIALECT`, else `reference`).
 * @throws Error naming the dialects when `name` is not one
 */
export function dialectOf(name: string | undefined = process.env['VOXPIPE_DIALECT'] || undefined): Dialect {
  const chosen = name ?? 'reference';
  if (!(DIALECTS as readonly string[]).includes(chosen)) throw new Error(`unknown dialect ${JSON.stringify(chosen)}; one of: ${DIALECTS.join(', ')}`);
  return { name: chosen as DialectName, ...TABLE[chosen as DialectName] };
}
