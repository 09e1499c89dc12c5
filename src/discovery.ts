/**
 * What a deployment offers, found the way any deployment can answer:
 * its capabilities document in whatever shape (`protocol/capabilities.ts`),
 * its voice list with a public/personal `type` across pages, and the
 * compatible voice list. One place for the stream, the CLI and the bench.
 *
 * Reads go through the REST client (typed errors, a per-read timeout, one
 * retry). A missing route is an answer ("not offered"); a wrong key is an
 * `AuthenticationError` (`unauthorized`), never turned into "no voice"; an
 * unreachable service is a `ConnectionError` naming the host.
 *
 * The capabilities document is a hint: one the client
 * cannot use (refused with 403 or 5xx, HTML, invalid JSON, not an object,
 * naming nothing) is treated as absent, with one `capabilities_unusable`
 * warning. Voice lists are followed across every page (`http/paging.ts`).
 */
import { ApiError, VoxpipeError } from './errors.js';
import { ClientErrorCode } from './protocol/codes.js';
import { capabilitiesUrl, type ServiceConfig } from './config.js';
import { HttpClient } from './http/client.js';
import { listAll, PAGING_DEFAULTS } from './http/paging.js';
import { arr, asObject, bool, isObject, str, type JsonObject } from './protocol/fields.js';
import { readCapabilities, type Capabilities, type CapabilityModel } from './protocol/capabilities.js';
import { DEFAULT_MODEL, REALTIME_PATHS } from './protocol/constants.js';

export type { Capabilities, CapabilityModel } from './protocol/capabilities.js';

export interface DiscoveryOptions {
  signal?: AbortSignal | undefined;
  /** Per read; default 10_000 ms. */
  timeoutMs?: number;
  /** Told when discovery carries on without something it could not use (`DiscoveryWarning`). */
  onWarning?: ((warning: { code: string; message: string }) => void) | undefined;
  /** Pages of a voice list read at most; default 50. */
  maxVoicePages?: number;
  /** Voices read at most; default 10_000. */
  maxVoices?: number;
}

/** Codes of discovery's warnings. */
export const DiscoveryWarning = {
  /** The capabilities document was refused or unusable: treated as absent. */
  capabilitiesUnusable: 'capabilities_unusable',
  /** A bound (pages, voices) stopped reading the voice list before its end. */
  voiceListTruncated: 'voice_list_truncated',
} as const;

/** A voice of `GET {base_url}/voices`. */
export interface VoiceInfo {
  voiceId: string;
  /** From a marker the client knows (`type`, `visibility`, `is_public`, ...), else by the spec's rule: public voice ids are UUIDs. */
  type: 'public' | 'personal';
  /** Models the voice supports, as listed (its default engine model first when given). */
  models: string[];
  raw: JsonObject;
}

/** Statuses that mean "this deployment does not offer the route". */
const ABSENT: ReadonlySet<number> = new Set([404, 405, 501]);

/** Per read, unless the caller says: 10 s. */
const READ_TIMEOUT_MS = 10_000;

/**
 * One client per configuration: every read of discovery, whatever its
 * timeout (a per-read option of the core), goes through it; the realtime
 * root is one of its origins, so the capabilities read gets the key.
 */
const clients = new WeakMap<ServiceConfig, HttpClient>();

function clientFor(config: ServiceConfig): HttpClient {
  let client = clients.get(config);
  if (!client) {
    client = new HttpClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, rootUrl: config.rootUrl, trustedUrls: [config.rtHttpUrl], timeoutMs: READ_TIMEOUT_MS, maxRetries: 1 });
    clients.set(config, client);
  }
  return client;
}

/** The per-read options of a discovery read. */
function readOptions(options: DiscoveryOptions): { signal: AbortSignal | undefined; timeoutMs: number } {
  return { signal: options.signal, timeoutMs: options.timeoutMs ?? READ_TIMEOUT_MS };
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/** A read whose route may be absent: undefined for 404/405/501; a 401, a network failure or a timeout is thrown. */
async function readOptional(client: HttpClient, path: string, options: DiscoveryOptions, extra: { root?: boolean; refusedIsAbsent?: boolean } = {}): Promise<unknown> {
  try {
    const res = await client.json({ path, ...readOptions(options), ...(extra.root && { root: true }) });
    return res.data;
  } catch (err) {
    const status = statusOf(err);
    if (status !== undefined && ABSENT.has(status)) return undefined;
    // A 403 on a discovery route: this account may not use it; not a reason to stop.
    if (status === 403 && extra.refusedIsAbsent !== false) return undefined;
    throw err;
  }
}

/** Codes of a response the client could not read. */
const UNREADABLE: ReadonlySet<string> = new Set([ClientErrorCode.unexpectedResponse, ClientErrorCode.invalidResponse, ClientErrorCode.tooManyRedirects]);

/**
 * Why a capabilities read that failed is "unusable" rather than the answer:
 * a refusal (403, any 4xx but 401, 5xx, 429 after its retries) or a body the
 * client cannot read (not JSON, invalid JSON, redirect loop). A wrong key
 * (401), no answer, a timeout or an abort is the answer, and is thrown.
 */
function unusableReason(err: unknown): string | undefined {
  if (err instanceof ApiError) return err.status === 401 ? undefined : `HTTP ${err.status} ${err.code}`;
  if (err instanceof VoxpipeError && UNREADABLE.has(err.code)) return err.message;
  return undefined;
}

/**
 * The realtime capabilities document, in any shape; undefined when the
 * deployment does not offer the route, or offers one the client cannot use
 * (then after one `capabilities_unusable` warning): the capabilities are a
 * hint, and discovery carries on from the voice lists.
 */
export async function fetchCapabilities(config: ServiceConfig, options: DiscoveryOptions = {}): Promise<Capabilities | undefined> {
  const path = REALTIME_PATHS.capabilities;
  const unusable = (why: string): undefined => {
    options.onWarning?.({ code: DiscoveryWarning.capabilitiesUnusable, message: `the capabilities document (${path}) is unusable (${why}); going on without it` });
    return undefined;
  };
  let body: unknown;
  try {
    body = await readOptional(clientFor(config), capabilitiesUrl(config.rtHttpUrl), options, { refusedIsAbsent: false });
  } catch (err) {
    const why = unusableReason(err);
    if (why === undefined) throw err;
    return unusable(why);
  }
  if (body === undefined) return undefined;
  if (!isObject(body)) return unusable(body === null ? 'an empty body' : `a JSON ${Array.isArray(body) ? 'array' : typeof body}, not an object`);
  const caps = readCapabilities(body);
  if (caps.models.length === 0 && caps.defaultModel === undefined && caps.pcm === undefined) return unusable('it names no model');
  return caps;
}

/** Values of a voice's kind field that mean public, or personal. */
const PUBLIC_WORDS: ReadonlySet<string> = new Set(['public', 'premade', 'system', 'shared', 'global', 'stock', 'builtin', 'built-in', 'built_in', 'library', 'official', 'catalog', 'default']);
const PERSONAL_WORDS: ReadonlySet<string> = new Set(['personal', 'private', 'cloned', 'clone', 'designed', 'custom', 'user', 'mine', 'owned', 'account', 'instant', 'professional', 'generated']);
/** Flags whose `true` means public, and those whose `true` means personal. */
const PUBLIC_FLAGS = ['isPublic', 'is_public', 'public', 'isShared', 'is_shared', 'isSystem', 'is_system'];
const PERSONAL_FLAGS = ['isPersonal', 'is_personal', 'personal', 'isCustom', 'is_custom', 'custom', 'isCloned', 'is_cloned', 'cloned', 'isPrivate', 'is_private', 'owned'];

/** The spec's own rule (4.10): a public voice id is a UUID. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `voiceId` has the form of a public voice id (spec 4.10: a UUID). */
export function isPublicVoiceIdForm(voiceId: string): boolean {
  return UUID.test(voiceId);
}

/**
 * Public or personal: from a marker the client knows (a kind field such as
 * `type`, `category`, `visibility` with a value it knows, or a flag such as
 * `is_public`), else by the spec's rule: public voice ids are UUIDs, so an
 * unmarked voice whose id is not one is personal.
 */
function typeOf(v: JsonObject, voiceId: string): 'public' | 'personal' {
  for (const key of ['type', 'category', 'visibility', 'source', 'kind', 'scope', 'access', 'ownership', 'origin']) {
    const word = str(v, key)?.toLowerCase();
    if (word === undefined) continue;
    if (PUBLIC_WORDS.has(word)) return 'public';
    if (PERSONAL_WORDS.has(word)) return 'personal';
  }
  const isPublic = bool(v, ...PUBLIC_FLAGS);
  if (isPublic !== undefined) return isPublic ? 'public' : 'personal';
  const isPersonal = bool(v, ...PERSONAL_FLAGS);
  if (isPersonal !== undefined) return isPersonal ? 'personal' : 'public';
  return isPublicVoiceIdForm(voiceId) ? 'public' : 'personal';
}

function voiceOf(value: unknown): VoiceInfo | undefined {
  if (!isObject(value)) return undefined;
  const voiceId = str(value, 'voiceId', 'voice_id', 'id');
  if (voiceId === undefined) return undefined;
  const first = str(value, 'defaultEngineModelId', 'default_model', 'model');
  const listed = (arr(value, 'models', 'supportedModels', 'supported_models') ?? []).filter((m): m is string => typeof m === 'string');
  const models = first === undefined ? listed : [first, ...listed.filter((m) => m !== first)];
  return { voiceId, type: typeOf(value, voiceId), models, raw: value };
}

/**
 * Every voice of `GET {base_url}/voices` (public and personal, spec 4.8),
 * across whatever paging the deployment uses (offset, page, cursor, a next
 * link or a `Link` header: `http/paging.ts`), at most 50 pages and 10,000
 * voices (a `voice_list_truncated` warning when a bound stops it). Empty when
 * the deployment has no such route or refuses it (403).
 */
export async function listVoices(config: ServiceConfig, options: DiscoveryOptions = {}): Promise<VoiceInfo[]> {
  let items: unknown[];
  try {
    const maxPages = options.maxVoicePages ?? PAGING_DEFAULTS.maxPages;
    const maxItems = options.maxVoices ?? PAGING_DEFAULTS.maxItems;
    const read = await listAll(clientFor(config), { path: '/voices', ...readOptions(options), maxPages, maxItems, keyOf: (v) => voiceOf(v)?.voiceId });
    if (!read.complete) {
      options.onWarning?.({ code: DiscoveryWarning.voiceListTruncated, message: `the voice list has more than ${read.items.length} voices in ${read.pages} pages; only those were read` });
    }
    items = read.items;
  } catch (err) {
    const status = statusOf(err);
    if (status !== undefined && (ABSENT.has(status) || status === 403)) return [];
    throw err;
  }
  return items.flatMap((item) => voiceOf(item) ?? []);
}

/** Voice ids of the compatible list (`GET {root_url}/v1/audio/voices`); empty when absent. */
async function compatVoices(config: ServiceConfig, options: DiscoveryOptions): Promise<string[]> {
  const data = await readOptional(clientFor(config), '/v1/audio/voices', options, { root: true });
  const items = Array.isArray(data) ? data : (arr(asObject(data), 'voices', 'data', 'items') ?? []);
  return items.flatMap((v) => {
    const id = typeof v === 'string' ? v : isObject(v) ? str(v, 'id', 'voiceId', 'voice_id') : undefined;
    return id === undefined ? [] : [id];
  });
}

/** The model to use: the caller's, else the deployment's default, else `svc-s21pro-flash`. */
export function defaultModelOf(caps: Capabilities | undefined): string {
  return caps?.defaultModel ?? DEFAULT_MODEL;
}

function modelIn(caps: Capabilities | undefined, model: string): CapabilityModel | undefined {
  return caps?.models.find((m) => m.id === model);
}

/**
 * A public voice for `model`, from what the deployment says, in order: the
 * model's own default voice; its first listed voice; the first public voice
 * of `GET /voices` that supports the model (public by a marker the client
 * knows, else by the spec's rule that public voice ids are UUIDs); the first
 * UUID of the compatible voice list. Never a personal voice.
 * @param caps the capabilities when the caller read them (`null`: it did, and there are none); else they are read here
 * @throws VoxpipeError `voice_not_found` naming the model when none says
 */
export async function defaultVoice(config: ServiceConfig, model: string, signal?: AbortSignal, caps?: Capabilities | null, more: Omit<DiscoveryOptions, 'signal'> = {}): Promise<string> {
  const options: DiscoveryOptions = { ...more, signal };
  // `null`: the caller read the capabilities and there are none (not read, or warned about, twice).
  const capabilities = caps === null ? undefined : (caps ?? (await fetchCapabilities(config, options)));
  const listed = modelIn(capabilities, model);
  const fromCaps = listed?.defaultVoiceId ?? listed?.voiceIds[0];
  if (fromCaps) return fromCaps;
  // From the whole list, public voices only (a personal voice is never a
  // default): one that says it speaks the model; one that says nothing of its
  // models only when no voice of the list says (then support is not known for
  // any, and the deployment's public voices are what remains).
  const all = await listVoices(config, options);
  const voices = all.filter((v) => v.type === 'public');
  const listsModels = all.some((v) => v.models.length > 0);
  const fromList = voices.find((v) => v.models.includes(model)) ?? (listsModels ? undefined : voices[0]);
  if (fromList) return fromList.voiceId;
  // The compatible list says neither kind nor models: only an id of the public form.
  const compat = (await compatVoices(config, options)).filter(isPublicVoiceIdForm);
  if (compat[0]) return compat[0];
  throw new VoxpipeError('voice_not_found', `no public voice found for model ${model}; pass a voice id (--voice)`);
}

/**
 * Whether `voiceId` is public (realtime speaks it) or one of the account's
 * personal voices (HTTP only, spec 4.10), from the capabilities and the
 * voice list's `type`; `unknown` when neither lists it.
 */
export async function voiceKind(config: ServiceConfig, voiceId: string, caps: Capabilities | undefined, options: DiscoveryOptions = {}): Promise<'public' | 'personal' | 'unknown'> {
  if (caps?.models.some((m) => m.voiceIds.includes(voiceId) || m.defaultVoiceId === voiceId)) return 'public';
  const voice = (await listVoices(config, options)).find((v) => v.voiceId === voiceId);
  if (!voice) return 'unknown';
  return voice.type === 'personal' ? 'personal' : 'public';
}
