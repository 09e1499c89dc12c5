/**
 * Voices (spec 2.2, 4.8): list public and personal voices, clone one from
 * reference audio (JSON with a URL, or multipart with the bytes), delete a
 * personal voice.
 */
import { VoxpipeError } from '../../errors.js';
import { ClientErrorCode, type HttpClient } from '../client.js';
import { asObject, isObject, str, type JsonObject } from '../../protocol/fields.js';
import { HEADERS, REST_ROUTES } from '../../protocol/rest.js';
import { listAll, type ListAllOptions } from '../paging.js';

export const VOICES_PATH = REST_ROUTES.voices;

export interface Voice {
  voiceId: string;
  name: string | undefined;
  /** Default engine model of the voice, when the list gives it. */
  defaultEngineModelId: string | undefined;
  raw: JsonObject;
}

export function normalizeVoice(obj: JsonObject): Voice | undefined {
  const voiceId = str(obj, 'voiceId', 'voice_id', 'id', 'reference_id');
  if (!voiceId) return undefined;
  return { voiceId, name: str(obj, 'name', 'title'), defaultEngineModelId: str(obj, 'defaultEngineModelId'), raw: obj };
}

/** Every voice of the list, and whether a bound stopped the walk early. */
export interface VoiceList {
  voices: Voice[];
  /** False when `maxPages` or `maxItems` stopped the walk while the deployment said there was more. */
  complete: boolean;
  pages: number;
}

export type ListVoicesOptions = Pick<ListAllOptions, 'signal' | 'pageSize' | 'maxPages' | 'maxItems' | 'timeoutMs' | 'maxRetries'>;

export interface CloneVoiceParams {
  name: string;
  /** Reference audio by URL (JSON request). */
  audioUrl?: string;
  /** Reference audio bytes (multipart request, field `audio`). */
  audio?: Uint8Array | Blob;
  /** File name of `audio`; default `reference.wav`. */
  fileName?: string;
  /** MIME type of `audio`; default `audio/wav`. */
  contentType?: string;
  description?: string;
  language?: string;
  /** Any further fields the deployment takes (strings in multipart). */
  extra?: Record<string, string>;
  /** `Idempotency-Key`; when given, a lost response may be resent safely. */
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
}

export interface ClonedVoice {
  voiceId: string;
  raw: JsonObject;
}

/** A voice object may come bare, or inside `voice` / `data`. */
function voiceObject(body: unknown): JsonObject {
  const obj = asObject(body);
  for (const key of ['voice', 'data']) if (isObject(obj[key])) return { ...obj, ...(obj[key] as JsonObject) };
  return obj;
}

function cloneBody(p: CloneVoiceParams): FormData | Record<string, unknown> {
  const fields: Record<string, string | undefined> = { name: p.name, audioUrl: p.audioUrl, description: p.description, language: p.language, ...p.extra };
  if (p.audio === undefined) return fields;
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, v);
  const type = p.contentType ?? 'audio/wav';
  const blob = p.audio instanceof Blob ? p.audio : new Blob([new Uint8Array(p.audio)], { type });
  form.append('audio', blob, p.fileName ?? 'reference.wav');
  return form;
}

export class Voices {
  constructor(private readonly client: HttpClient) {}

  /** Public and personal voices, every page of them (see `listPages`). */
  async list(options: ListVoicesOptions = {}): Promise<Voice[]> {
    return (await this.listPages(options)).voices;
  }

  /**
   * Every voice of `GET /voices`, across whatever paging the deployment uses
   * (offset, page, cursor, a next link or a `Link` header; `paging.ts`), at
   * most 50 pages and 10,000 voices unless told otherwise.
   */
  async listPages(options: ListVoicesOptions = {}): Promise<VoiceList> {
    const { items, complete, pages } = await listAll(this.client, { path: VOICES_PATH, keyOf: (v) => (isObject(v) ? str(v, 'voiceId', 'voice_id', 'id', 'reference_id') : undefined), ...options });
    return { voices: items.map((v) => normalizeVoice(asObject(v))).filter((v): v is Voice => v !== undefined), complete, pages };
  }

  /** Clone a voice; multipart when `audio` bytes are given, else JSON. */
  async clone(params: CloneVoiceParams): Promise<ClonedVoice> {
    const res = await this.client.json({ method: 'POST', path: VOICES_PATH, body: cloneBody(params), headers: { [HEADERS.idempotencyKey]: params.idempotencyKey }, signal: params.signal });
    const obj = voiceObject(res.data);
    const voiceId = str(obj, 'voiceId', 'id');
    if (!voiceId) throw new VoxpipeError(ClientErrorCode.invalidResponse, 'voice clone response has no voiceId', { requestId: res.requestId });
    return { voiceId, raw: asObject(res.data) };
  }

  /** Delete a personal voice. */
  async delete(voiceId: string, options: { signal?: AbortSignal | undefined } = {}): Promise<JsonObject> {
    const res = await this.client.request({ method: 'DELETE', path: `${VOICES_PATH}/${encodeURIComponent(voiceId)}`, signal: options.signal });
    return res.kind === 'json' ? asObject(res.data) : {};
  }
}
