/**
 * What a deployment offers, found the way any deployment can answer (issue 9):
 * its capabilities document in whatever shape (`protocol/capabilities.ts`),
 * its voice list with a public/personal `type` across pages, and the
 * compatible voice list. One place for the stream, the CLI and the bench.
 *
 * Reads go through the REST client (typed errors, a per-read timeout, one
 * retry). A missing route is an answer ("not offered"); a wrong key is an
 * `AuthenticationError` (`unauthorized`), never turned into "no voice"; an
 * unreachable service is a `ConnectionError` naming the host.
 */
import { VoxpipeError } from './errors.js';
import type { ServiceConfig } from './config.js';
import { HttpClient } from './http/client.js';
import { arr, asObject, bool, isObject, num, str, type JsonObject } from './protocol/fields.js';
import { readCapabilities, type Capabilities, type CapabilityModel } from './protocol/capabilities.js';
import { DEFAULT_MODEL, REALTIME_PATHS } from './protocol/constants.js';

export type { Capabilities, CapabilityModel } from './protocol/capabilities.js';

export interface DiscoveryOptions {
  signal?: AbortSignal | undefined;
  /** Per read; default 10_000 ms. */
  timeoutMs?: number;
}

/** A voice of `GET {base_url}/voices`. */
export interface VoiceInfo {
  voiceId: string;
  /** From the voice's `type` (or a similar field); undefined when the deployment does not say. */
  type: 'public' | 'personal' | undefined;
  /** Models the voice supports, as listed (its default engine model first when given). */
  models: string[];
  raw: JsonObject;
}

/** Statuses that mean "this deployment does not offer the route". */
const ABSENT: ReadonlySet<number> = new Set([404, 405, 501]);
/** Pages of `GET /voices` read at most. */
const MAX_VOICE_PAGES = 20;
const VOICE_PAGE_SIZE = 100;

function clientFor(config: ServiceConfig, options: DiscoveryOptions): HttpClient {
  return new HttpClient({
    apiKey: config.apiKey,
    baseUrl: config.baseUrl,
    rootUrl: config.rootUrl,
    trustedUrls: [config.rtHttpUrl],
    timeoutMs: options.timeoutMs ?? 10_000, // 10 s per read
    maxRetries: 1,
  });
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/** A read whose route may be absent: undefined for 404/405/501; a 401, a network failure or a timeout is thrown. */
async function readOptional(client: HttpClient, path: string, options: DiscoveryOptions, extra: { root?: boolean; query?: Record<string, number> } = {}): Promise<unknown> {
  try {
    const res = await client.json({ path, signal: options.signal, ...(extra.root && { root: true }), ...(extra.query && { query: extra.query }) });
    return res.data;
  } catch (err) {
    const status = statusOf(err);
    if (status !== undefined && ABSENT.has(status)) return undefined;
    // A 403 on a discovery route: this account may not use it; not a reason to stop.
    if (status === 403) return undefined;
    throw err;
  }
}

/**
 * The realtime capabilities document, in any shape; undefined when the
 * deployment does not offer the route.
 */
export async function fetchCapabilities(config: ServiceConfig, options: DiscoveryOptions = {}): Promise<Capabilities | undefined> {
  const body = await readOptional(clientFor(config, options), `${config.rtHttpUrl}${REALTIME_PATHS.capabilities}`, options);
  return body === undefined ? undefined : readCapabilities(body);
}

function typeOf(v: JsonObject): VoiceInfo['type'] {
  const t = str(v, 'type', 'category', 'visibility', 'source', 'kind')?.toLowerCase();
  if (t === 'public' || t === 'premade' || t === 'system' || t === 'shared') return 'public';
  if (t === 'personal' || t === 'private' || t === 'cloned' || t === 'clone' || t === 'designed' || t === 'custom' || t === 'user') return 'personal';
  const isPublic = bool(v, 'isPublic', 'is_public', 'public');
  if (isPublic !== undefined) return isPublic ? 'public' : 'personal';
  return undefined;
}

function voiceOf(value: unknown): VoiceInfo | undefined {
  if (!isObject(value)) return undefined;
  const voiceId = str(value, 'voiceId', 'voice_id', 'id');
  if (voiceId === undefined) return undefined;
  const first = str(value, 'defaultEngineModelId', 'default_model', 'model');
  const listed = (arr(value, 'models', 'supportedModels', 'supported_models') ?? []).filter((m): m is string => typeof m === 'string');
  const models = first === undefined ? listed : [first, ...listed.filter((m) => m !== first)];
  return { voiceId, type: typeOf(value), models, raw: value };
}

/** Where the next page starts, from whichever pagination the body uses; undefined at the end. */
function nextPage(body: JsonObject, query: { limit: number; offset: number; page: number; pageSize: number }, got: number): Partial<typeof query> | undefined {
  if (got === 0) return undefined;
  const pagination = isObject(body['pagination']) ? body['pagination'] : body;
  const total = num(pagination, 'total', 'totalCount', 'total_count');
  const hasMore = bool(pagination, 'hasMore', 'has_more');
  if (hasMore === false) return undefined;
  const page = num(pagination, 'page');
  if (page !== undefined) {
    const size = num(pagination, 'pageSize', 'page_size', 'per_page') ?? got;
    if (hasMore === true || (total !== undefined && page * size < total)) return { page: page + 1, pageSize: query.pageSize };
    return undefined;
  }
  const offset = num(pagination, 'offset') ?? query.offset;
  const limit = num(pagination, 'limit') ?? got;
  if (hasMore === true || (total !== undefined && offset + limit < total)) return { offset: offset + limit, limit: query.limit };
  return undefined;
}

/**
 * Every voice of `GET {base_url}/voices` (public and personal, spec 4.8),
 * following its pages (offset/limit or page/pageSize, up to 20 pages).
 * Empty when the deployment has no such route.
 */
export async function listVoices(config: ServiceConfig, options: DiscoveryOptions = {}): Promise<VoiceInfo[]> {
  const client = clientFor(config, options);
  const voices: VoiceInfo[] = [];
  let query: Record<string, number> = { limit: VOICE_PAGE_SIZE };
  for (let pages = 0; pages < MAX_VOICE_PAGES; pages++) {
    const data = await readOptional(client, '/voices', options, { query });
    if (data === undefined) break;
    const body = asObject(data);
    const items = Array.isArray(data) ? data : (arr(body, 'data', 'voices', 'items', 'results') ?? []);
    const before = voices.length;
    for (const item of items) {
      const voice = voiceOf(item);
      if (voice && !voices.some((v) => v.voiceId === voice.voiceId)) voices.push(voice);
    }
    if (Array.isArray(data)) break;
    const next = nextPage(body, { limit: VOICE_PAGE_SIZE, offset: num(query, 'offset') ?? 0, page: num(query, 'page') ?? 1, pageSize: VOICE_PAGE_SIZE }, items.length);
    // A deployment that ignores the paging parameters repeats a page: stop there.
    if (!next || voices.length === before) break;
    query = next as Record<string, number>;
  }
  return voices;
}

/** Voice ids of the compatible list (`GET {root_url}/v1/audio/voices`); empty when absent. */
async function compatVoices(config: ServiceConfig, options: DiscoveryOptions): Promise<string[]> {
  const data = await readOptional(clientFor(config, options), '/v1/audio/voices', options, { root: true });
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
 * A voice for `model`, from what the deployment says, in order: the
 * model's own default voice; its first listed voice; the first public voice
 * of `GET /voices` that supports the model; the compatible voice list.
 * @throws VoxpipeError `voice_not_found` naming the model when none says
 */
export async function defaultVoice(config: ServiceConfig, model: string, signal?: AbortSignal, caps?: Capabilities): Promise<string> {
  const options: DiscoveryOptions = { signal };
  const capabilities = caps ?? (await fetchCapabilities(config, options));
  const listed = modelIn(capabilities, model);
  const fromCaps = listed?.defaultVoiceId ?? listed?.voiceIds[0];
  if (fromCaps) return fromCaps;
  const voices = await listVoices(config, options);
  const fits = (v: VoiceInfo) => v.type !== 'personal' && (v.models.length === 0 || v.models.includes(model));
  const fromList = voices.find((v) => v.type === 'public' && fits(v)) ?? voices.find(fits);
  if (fromList) return fromList.voiceId;
  const compat = await compatVoices(config, options);
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
