/**
 * Generative dialects: `random:SEED` draws every point the
 * spec leaves open from a wide space, so the client suites explore legal
 * deployments instead of three fixed ones. Each point is drawn from its own
 * seeded stream (`rng(seed, point)`), so switching one point off (`off=`) or
 * drawing only some (`only=`) leaves the draws of the others as they were:
 *
 *     random:SEED                    every point drawn
 *     random:SEED:off=frames,rate    those points as the reference dialect takes them
 *     random:SEED:only=rate          only that point drawn
 *
 * The same spelling replays the same deployment (the per-connection choices,
 * e.g. where an unknown event goes, come from a stream seeded by the dialect
 * and the connection's number). `describe()` prints the draw.
 *
 * Field names are drawn outside the client: this module never reads the
 * client's alias table, and spells every field the client reads in a way of
 * its own (another case, a prefix word, a nested map, and for the fields the
 * spec names only in prose a generated synonym). test/dialect/ checks that no
 * drawn spelling of a field the client reads is one the client's table
 * holds, so the reader has to find them by form or by meaning.
 */
/** Every open point a random dialect draws, by name (the names `off=` and `only=` take). */
export const RANDOM_POINTS = [
  // realtime
  'spellings',
  'unreadSpellings',
  'quota',
  'envelope',
  'timestamps',
  'sequence',
  'numbers',
  'frames',
  'unknownEvents',
  'unknownFields',
  'rate',
  'close',
  'jitter',
  // HTTP
  'errors',
  'redirects',
  'retryAfter',
  'contentTypes',
  'encoding',
  'wavChunks',
  'paging',
  'jobs',
  'capabilities',
  'tickets',
  'manifest',
] as const;
export type RandomPoint = (typeof RANDOM_POINTS)[number];

/** A small seeded PRNG (mulberry32); enough for drawing choices, not for secrets. */
export type Rng = () => number;

function hash32(text: string): number {
  // FNV-1a, then a final avalanche so near seeds draw far apart.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** The stream of `point` under `seed`. */
export function rng(seed: string, point: string): Rng {
  let a = hash32(`${seed}/${point}`);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function pick<T>(r: Rng, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)]!;
}

/** How audio frames are cut: as the server makes them, split into pieces of `bytes`, or `count` merged into one. */
export type FrameDraw = { kind: 'as-is' } | { kind: 'split'; bytes: number } | { kind: 'merge'; count: number };

/** What a random dialect drew for its realtime side. */
export interface RealtimeDraw {
  /**
   * Spelling of each (event, canonical field) the client reads; absent:
   * canonical. A dot nests: `payload.Sequence` puts the field in a map
   * under `payload`.
   */
  spellings: Record<string, Record<string, string>>;
  /** `event.field` of the needed fields spelt with a synonym: the client finds them by meaning alone (and says so once). */
  byMeaning: string[];
  /** How whole numbers are encoded: as the smallest MessagePack int (ours), or drawn per value among wider ints and floats. */
  numbers: 'smallest' | 'varied';
  /** Spellings no client reads, for fields the client does not need. */
  unread: Record<string, Record<string, string>>;
  quota: 'number' | 'object' | 'string';
  /** Each envelope field: always, never or on about half the events. */
  envelope: Record<'event_id' | 'trace_id' | 'timestamp', 'always' | 'never' | 'sometimes'>;
  /** `ext`: a MessagePack timestamp extension. */
  timestamps: 'number' | 'numeric-string' | 'iso' | 'ext';
  sequence: { start: number; scope: 'connection' | 'segment' | 'request'; step: number | 'random' };
  frames: FrameDraw;
  /** Chance of an unknown event before any event. */
  unknownEvents: number;
  /** Chance of unknown fields on any event (and on JSON bodies over HTTP). */
  unknownFields: number;
  /** PCM rate of every audio the deployment sends; undefined: the engine's own. */
  sampleRate: number | undefined;
  /** Close code after `finish`: 1000, or a close frame without a status (read as 1005). */
  normalClose: 1000 | 'no-status';
  /** Upper bound of the delay added to a frame, ms (0: none), and the share of frames delayed. */
  jitter: { maxMs: number; share: number };
}

/** What a random dialect drew for its HTTP side. */
export interface HttpDraw {
  errorBody: 'wrapped' | 'flat';
  /** How error bodies are typed: JSON, `application/problem+json`, `text/plain`, or an HTML page for 500s only. */
  errorContentType: 'json' | 'problem' | 'text' | 'html-500';
  redirectStatus: 301 | 302 | 307 | 308;
  redirectLocation: 'absolute' | 'root-relative';
  /**
   * Where a redirect to a signed file points: this server, or another origin
   * (a second listener on another port, as a CDN would be) that serves the
   * signed files without a key and refuses a request that brings one.
   */
  redirectHost: 'same' | 'other';
  retryAfter: 'seconds' | 'date';
  wavContentType: string;
  /**
   * How a pcm body states its layout: our `x-*` headers; RFC 2586
   * `audio/L16` alone (its bytes then big-endian, as L16 is) or with the
   * headers; GStreamer caps (`audio/x-raw, format=S16LE|S16BE, rate=…`); or
   * the headers under a label no client knows.
   */
  pcmStatement: 'headers' | 'l16' | 'both' | 'x-raw' | 'x-raw-be' | 'unknown-label';
  /** Content-Type of mp3 and of Ogg Opus bodies. */
  mp3ContentType: string;
  opusContentType: string;
  gzip: boolean;
  chunked: boolean;
  /** Chunks put between `fmt ` and `data` of complete WAV files. */
  wavChunks: ('LIST' | 'fact')[];
  paging: 'offset' | 'page' | 'cursor' | 'next-link';
  /** Most voices one page carries whatever the client asks for. */
  maxPageSize: number;
  jobShape: 'envelope' | 'flat' | 'minimal';
  capabilities: 'reference' | 'top-level-models' | 'absent' | 'refused-403' | 'refused-500' | 'unparseable';
  ticketField: string;
  manifest: 'reference' | 'alt';
}

export interface RandomDraw {
  seed: string;
  /** Points drawn (the others take the reference dialect's choice). */
  points: readonly RandomPoint[];
  realtime: RealtimeDraw;
  http: HttpDraw;
}

export const REFERENCE_REALTIME: RealtimeDraw = {
  spellings: {},
  byMeaning: [],
  numbers: 'smallest',
  unread: {},
  quota: 'number',
  envelope: { event_id: 'always', trace_id: 'always', timestamp: 'always' },
  timestamps: 'number',
  sequence: { start: 1, scope: 'connection', step: 1 },
  frames: { kind: 'as-is' },
  unknownEvents: 0,
  unknownFields: 0,
  sampleRate: undefined,
  normalClose: 1000,
  jitter: { maxMs: 0, share: 0 },
};

export const REFERENCE_HTTP: HttpDraw = {
  errorBody: 'wrapped',
  errorContentType: 'json',
  redirectStatus: 302,
  redirectLocation: 'absolute',
  redirectHost: 'same',
  retryAfter: 'seconds',
  wavContentType: 'audio/wav',
  pcmStatement: 'headers',
  mp3ContentType: 'audio/mpeg',
  opusContentType: 'audio/ogg',
  gzip: false,
  chunked: false,
  wavChunks: [],
  paging: 'offset',
  maxPageSize: 100,
  jobShape: 'envelope',
  capabilities: 'reference',
  ticketField: 'ticket',
  manifest: 'reference',
};

/**
 * How a field the client reads may be spelt. `named`: the spec names it
 * exactly (a deployment may still write it in another case, after a prefix,
 * or nested). `open`: the spec names it in prose only, or the client can do
 * without its name (it finds the value by meaning: an ack answers the text
 * frame sent before it, a completion the segment open, audio is the frame's
 * bytes), so any word may name it.
 */
type FieldKind = 'named' | 'open';

/** The fields of each event the client reads (server-reader.ts's table), by their canonical names. */
const READ_FIELDS: Record<string, Record<string, FieldKind>> = {
  input_ack: { sequence: 'open', characters: 'open', buffered_characters: 'open', remaining_capacity: 'open' },
  segment_accepted: { segment_id: 'named', characters: 'open', reserved_units: 'open' },
  // The completion's units are what the client reports as the segment's billing, and nothing else carries them: a name of form, never a synonym.
  segment_completed: { segment_id: 'open', units: 'named', audio_bytes: 'open' },
  usage: { segment_id: 'named', segment_units: 'open', audio_bytes: 'open', quota_remaining: 'open' },
  audio: { audio: 'open', segment_id: 'named', sequence: 'named', sample_rate: 'named', bit_depth: 'named' },
  ready: { format: 'named', sample_rate: 'named', bit_depth: 'named' },
  // A simple-mode request's units are its finish's.
  finish: { reason: 'named', units: 'named' },
  request_status: { state: 'named', units: 'open' },
  error: { code: 'named', message: 'named' },
};

/** The fields whose meaning the client has without a name: one spelt with a synonym costs it a `server_field_not_found` note. */
const FOUND_BY_MEANING = ['input_ack.sequence', 'segment_completed.segment_id'];

/** Words a synonym of each open field is made of: a qualifier (or none) and a noun. */
const SYNONYM_WORDS: Record<string, { of: readonly string[]; nouns: readonly string[] }> = {
  sequence: { of: ['acked', 'received', 'committed', 'last', 'current', ''], nouns: ['frame_no', 'ordinal', 'counter', 'msg_num', 'text_idx'] },
  characters: { of: ['accepted', 'taken', 'got', ''], nouns: ['glyphs', 'text_len', 'char_total', 'codepoints'] },
  buffered_characters: { of: ['pending', 'queued', 'held'], nouns: ['glyphs', 'text_len', 'codepoints'] },
  remaining_capacity: { of: ['free', 'spare', ''], nouns: ['room', 'headroom', 'slack'] },
  reserved_units: { of: ['held', 'booked', 'pre'], nouns: ['credits', 'cost', 'charge'] },
  units: { of: ['billed', 'spent', ''], nouns: ['credits', 'cost', 'charge'] },
  segment_units: { of: ['billed', 'spent', ''], nouns: ['credits', 'cost', 'charge'] },
  quota_remaining: { of: ['credit', 'allowance'], nouns: ['left', 'balance_now'] },
  audio_bytes: { of: ['payload', 'pcm', 'encoded'], nouns: ['octets', 'size', 'byte_len'] },
  segment_id: { of: ['clip', 'part', 'utterance'], nouns: ['ref', 'key', 'handle', 'name'] },
  audio: { of: ['pcm', 'sound', 'speech', ''], nouns: ['chunk', 'samples', 'blob', 'payload_bin'] },
};

/** Words put before a field's name, and the maps a field may be nested in. */
const PREFIXES = ['x', 'svc', 'srv', 'vnd', 'rt'];
const GROUPS = ['payload', 'body', 'attrs', 'ack_info', 'meta_fields'];

const wordsOf = (name: string) => name.split('_');
const pascal = (name: string) => wordsOf(name).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');

/** One spelling of `field`: never our own name, so a client that reads only that fails. */
function drawSpelling(r: Rng, field: string, kind: FieldKind): { name: string; synonym: boolean } {
  const synonymOf = (): string => {
    const words = SYNONYM_WORDS[field]!;
    const of = pick(r, words.of);
    const noun = pick(r, words.nouns);
    return of === '' ? noun : `${of}_${noun}`;
  };
  // A one-word name has no separator to change: no kebab form.
  const forms = [...(field.includes('_') ? ['kebab'] : []), 'upper', 'pascal', 'prefix', 'camel-prefix', 'nested', ...(kind === 'open' && SYNONYM_WORDS[field] ? ['synonym', 'synonym', 'nested-synonym'] : [])];
  // Audio bytes are found by type only at the top of the frame: a synonym there, never nested.
  const form = pick(r, field === 'audio' ? forms.filter((f) => f !== 'nested-synonym') : forms);
  switch (form) {
    case 'upper':
      return { name: field.toUpperCase(), synonym: false };
    case 'pascal':
      return { name: pascal(field), synonym: false };
    case 'kebab':
      return { name: field.replaceAll('_', '-'), synonym: false };
    case 'prefix':
      return { name: `${pick(r, PREFIXES)}_${field}`, synonym: false };
    case 'camel-prefix':
      return { name: `${pick(r, PREFIXES)}${pascal(field)}`, synonym: false };
    case 'nested':
      return { name: `${pick(r, GROUPS)}.${pick(r, [field, pascal(field), field.toUpperCase()])}`, synonym: false };
    case 'synonym':
      return { name: synonymOf(), synonym: true };
    default:
      return { name: `${pick(r, GROUPS)}.${synonymOf()}`, synonym: true };
  }
}

function drawReadSpellings(r: Rng): Pick<RealtimeDraw, 'spellings' | 'byMeaning'> {
  const spellings: Record<string, Record<string, string>> = {};
  const byMeaning: string[] = [];
  for (const [event, fields] of Object.entries(READ_FIELDS)) {
    for (const [field, kind] of Object.entries(fields)) {
      const { name, synonym } = drawSpelling(r, field, kind);
      (spellings[event] ??= {})[field] = name;
      if (synonym && FOUND_BY_MEANING.includes(`${event}.${field}`)) byMeaning.push(`${event}.${field}`);
    }
  }
  return { spellings, byMeaning };
}

/** Fields the client does not need (server-reader.ts: it requires only what it acts on), with spellings no reader knows. */
const UNREAD_FIELDS: Record<string, Record<string, readonly string[]>> = {
  authenticated: { session_id: ['sessionId', 'sid'], site: ['site_id', 'region'], protocol_version: ['version', 'protocolVersion'] },
  ready: { session_id: ['sessionId'], provider: ['provider_name', 'vendor'], model: ['model_id', 'engine'], voice_id: ['voiceId', 'speaker'], request_id: ['requestId'] },
  input_ack: { request_id: ['requestId', 'req'] },
  segment_accepted: { request_id: ['requestId'] },
  audio: { session_id: ['sessionId', 'sid'], request_id: ['requestId', 'rid'] },
  usage: { session_units: ['sessionUnits', 'total_session_units'] },
  pong: { session_id: ['sessionId'] },
  finish: { session_id: ['sessionId'] },
};

/** Names of unknown events a deployment might add (none of them a name the reader knows). */
const UNKNOWN_EVENT_NAMES = ['server_stats', 'heartbeat', 'metrics', 'progress', 'billing_update', 'x-debug', 'segment_progress', 'rate_limit_status', 'keepalive', 'notice'];
/** Names of unknown fields: none is a field or alias any reader knows. */
const UNKNOWN_FIELD_NAMES = ['server_region', 'served_by', 'shard', 'latency_hint', 'meta', 'debug_info', '_v', 'x_trace', 'worker', 'build', 'tags'];

function drawSpellings(r: Rng, table: Record<string, Record<string, readonly string[]>>): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [event, fields] of Object.entries(table)) {
    for (const [field, names] of Object.entries(fields)) {
      const name = pick(r, names);
      if (name !== field) (out[event] ??= {})[field] = name;
    }
  }
  return out;
}

/** Draw the realtime side; `on(point)` says whether a point is drawn. */
function drawRealtime(seed: string, on: (p: RandomPoint) => boolean): RealtimeDraw {
  const d: RealtimeDraw = structuredClone(REFERENCE_REALTIME);
  const r = (p: RandomPoint) => rng(seed, p);
  if (on('spellings')) Object.assign(d, drawReadSpellings(r('spellings')));
  if (on('unreadSpellings')) d.unread = drawSpellings(r('unreadSpellings'), UNREAD_FIELDS);
  if (on('quota')) d.quota = pick(r('quota'), ['number', 'object', 'string'] as const);
  if (on('envelope')) {
    const e = r('envelope');
    const presence = ['always', 'never', 'sometimes'] as const;
    d.envelope = { event_id: pick(e, presence), trace_id: pick(e, presence), timestamp: pick(e, presence) };
  }
  if (on('timestamps')) d.timestamps = pick(r('timestamps'), ['number', 'numeric-string', 'iso', 'ext'] as const);
  if (on('numbers')) d.numbers = pick(r('numbers'), ['smallest', 'varied'] as const);
  if (on('sequence')) {
    const s = r('sequence');
    d.sequence = {
      // 2^31 - 3 crosses the int32 boundary, 2^32 + 7 needs 64 bits in MessagePack.
      start: pick(s, [0, 1, 1, 7, 1_000, 2 ** 31 - 3, 2 ** 32 + 7]),
      scope: pick(s, ['connection', 'segment', 'request'] as const),
      step: pick(s, [1, 1, 2, 10, 'random'] as const),
    };
  }
  if (on('frames')) {
    const f = r('frames');
    d.frames = pick(f, [
      { kind: 'as-is' },
      { kind: 'split', bytes: pick(f, [160, 333, 1_024, 4_096]) },
      { kind: 'merge', count: pick(f, [2, 3, 8]) },
    ] as const);
  }
  if (on('unknownEvents')) d.unknownEvents = pick(r('unknownEvents'), [0, 0.05, 0.3]);
  if (on('unknownFields')) d.unknownFields = pick(r('unknownFields'), [0, 0.2, 1]);
  if (on('rate')) d.sampleRate = pick(r('rate'), [8_000, 16_000, 22_050, 24_000, 44_100, 48_000]);
  if (on('close')) d.normalClose = pick(r('close'), [1000, 'no-status'] as const);
  if (on('jitter')) {
    const j = r('jitter');
    d.jitter = pick(j, [
      { maxMs: 0, share: 0 },
      { maxMs: 3, share: 0.1 },
      { maxMs: 15, share: 0.02 },
    ]);
  }
  return d;
}

function drawHttp(seed: string, on: (p: RandomPoint) => boolean): HttpDraw {
  const d: HttpDraw = structuredClone(REFERENCE_HTTP);
  const r = (p: RandomPoint) => rng(seed, p);
  if (on('errors')) {
    const e = r('errors');
    d.errorBody = pick(e, ['wrapped', 'flat'] as const);
    d.errorContentType = pick(e, ['json', 'json', 'problem', 'text', 'html-500'] as const);
  }
  if (on('redirects')) {
    const e = r('redirects');
    d.redirectStatus = pick(e, [301, 302, 307, 308] as const);
    d.redirectLocation = pick(e, ['absolute', 'root-relative'] as const);
    // Drawn after the others, so the seeds drawn before it keep their status and form.
    d.redirectHost = pick(e, ['same', 'other'] as const);
  }
  if (on('retryAfter')) d.retryAfter = pick(r('retryAfter'), ['seconds', 'date'] as const);
  if (on('contentTypes')) {
    const e = r('contentTypes');
    d.wavContentType = pick(e, ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave', 'application/octet-stream', UNKNOWN_AUDIO_LABEL]);
    d.pcmStatement = pick(e, ['headers', 'l16', 'both', 'x-raw', 'x-raw-be', 'unknown-label'] as const);
    d.mp3ContentType = pick(e, ['audio/mpeg', 'audio/mp3', 'application/octet-stream', UNKNOWN_AUDIO_LABEL]);
    d.opusContentType = pick(e, ['audio/ogg', 'audio/opus', 'audio/ogg; codecs=opus', 'application/ogg', UNKNOWN_AUDIO_LABEL]);
  }
  if (on('encoding')) {
    const e = r('encoding');
    d.gzip = e() < 0.5;
    d.chunked = e() < 0.5;
  }
  if (on('wavChunks')) d.wavChunks = pick(r('wavChunks'), [[], ['LIST'], ['fact'], ['LIST', 'fact'], ['fact', 'LIST']] as ('LIST' | 'fact')[][]);
  if (on('paging')) {
    const e = r('paging');
    d.paging = pick(e, ['offset', 'page', 'cursor', 'next-link'] as const);
    d.maxPageSize = pick(e, [2, 3, 5, 100]);
  }
  if (on('jobs')) d.jobShape = pick(r('jobs'), ['envelope', 'flat', 'minimal'] as const);
  if (on('capabilities')) d.capabilities = pick(r('capabilities'), ['reference', 'top-level-models', 'absent', 'refused-403', 'refused-500', 'unparseable'] as const);
  if (on('tickets')) d.ticketField = pick(r('tickets'), ['ticket', 'ticket_token', 'ticketToken', 'token']);
  if (on('manifest')) d.manifest = pick(r('manifest'), ['reference', 'alt'] as const);
  return d;
}

/** An audio label no media stack uses: a client must go by the bytes (and warn). */
export const UNKNOWN_AUDIO_LABEL = 'audio/x-vnd.drawn-audio';

/** Whether an HTTP draw labels some audio in a way a client cannot know (it then warns `unknown_audio_type`). */
export function labelsAudioUnknown(h: HttpDraw): boolean {
  return h.pcmStatement === 'unknown-label' || [h.wavContentType, h.mp3ContentType, h.opusContentType].includes(UNKNOWN_AUDIO_LABEL);
}

/** Spelling of a random dialect: `random:SEED`, optionally `:off=a,b` or `:only=a,b`. */
const RANDOM_NAME = /^random:([A-Za-z0-9_.-]{1,64})(?::(off|only)=([A-Za-z,]*))?$/;

export function isRandomDialectName(name: string): boolean {
  return name.startsWith('random:');
}

/**
 * Parse and draw `random:SEED[:off=…|:only=…]`.
 * @throws Error naming the problem (bad spelling, unknown point)
 */
export function drawRandomDialect(name: string): RandomDraw {
  const m = RANDOM_NAME.exec(name);
  if (!m) throw new Error(`bad random dialect ${JSON.stringify(name)}: write random:SEED (letters, digits, . _ -), optionally :off=POINT,... or :only=POINT,...`);
  const seed = m[1]!;
  const listed = (m[3] ?? '').split(',').filter(Boolean);
  for (const p of listed) {
    if (!(RANDOM_POINTS as readonly string[]).includes(p)) throw new Error(`unknown dialect point ${JSON.stringify(p)} in ${JSON.stringify(name)}; points: ${RANDOM_POINTS.join(', ')}`);
  }
  const points = RANDOM_POINTS.filter((p) => (m[2] === 'only' ? listed.includes(p) : !listed.includes(p)));
  const on = (p: RandomPoint) => points.includes(p);
  return { seed, points, realtime: drawRealtime(seed, on), http: drawHttp(seed, on) };
}

/** One line naming every drawn choice, so a failure message says what the deployment was. */
export function describeDraw(name: string, draw: RandomDraw): string {
  const rt = draw.realtime;
  const h = draw.http;
  const spell = (t: Record<string, Record<string, string>>) =>
    Object.entries(t)
      .map(([e, f]) => `${e}{${Object.entries(f).map(([a, b]) => `${a}>${b}`).join(',')}}`)
      .join(' ') || 'ours';
  const frames = rt.frames.kind === 'split' ? `split ${rt.frames.bytes} B` : rt.frames.kind === 'merge' ? `merge ${rt.frames.count}` : 'as-is';
  return [
    `${name} (replay: VOXPIPE_DIALECT=${name})`,
    `realtime: spellings ${spell(rt.spellings)} (found by meaning: ${rt.byMeaning.join(',') || 'none'}); unread ${spell(rt.unread)}; quota ${rt.quota}; numbers ${rt.numbers}`,
    `envelope event_id ${rt.envelope.event_id}, trace_id ${rt.envelope.trace_id}, timestamp ${rt.envelope.timestamp} as ${rt.timestamps}`,
    `audio sequence from ${rt.sequence.start} per ${rt.sequence.scope} step ${rt.sequence.step}; frames ${frames}; pcm rate ${rt.sampleRate ?? 'engine'}`,
    `unknown events ${rt.unknownEvents}, unknown fields ${rt.unknownFields}; close after finish ${rt.normalClose}; jitter ${rt.jitter.maxMs} ms on ${rt.jitter.share}`,
    `http: errors ${h.errorBody}/${h.errorContentType}; redirects ${h.redirectStatus} ${h.redirectHost === 'other' ? 'absolute to another origin' : h.redirectLocation}; Retry-After ${h.retryAfter}; wav ${h.wavContentType}; pcm layout by ${h.pcmStatement}; mp3 ${h.mp3ContentType}; opus ${h.opusContentType}`,
    `gzip ${h.gzip}, chunked ${h.chunked}; wav chunks [${h.wavChunks.join(',')}]; voices ${h.paging} (pages of at most ${h.maxPageSize}); jobs ${h.jobShape}; capabilities ${h.capabilities}; ticket field ${h.ticketField}; manifest ${h.manifest}`,
  ].join('; ');
}

/** Every name a reader knows or our server sends: unknown fields never take one. */
export const UNKNOWN_NAMES = { events: UNKNOWN_EVENT_NAMES, fields: UNKNOWN_FIELD_NAMES } as const;
