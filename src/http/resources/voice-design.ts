/**
 * Voice design (spec 2.3, 3.5b, 4.8): create previews from a prompt, fetch a
 * candidate's preview audio, save a candidate as a permanent `voiceId`.
 * Create and save carry an `Idempotency-Key` (default a new UUID, returned so
 * the caller can replay); a changed body needs a new key.
 */
import { randomUUID } from 'node:crypto';
import { VoxpipeError } from '../../errors.js';
import { ClientErrorCode, type HttpClient } from '../client.js';
import { arr, asObject, isObject, str, type JsonObject } from '../../protocol/fields.js';
import type { DownloadedFile } from '../job-handle.js';
import { HEADERS, REST_ROUTES } from '../../protocol/rest.js';

export const VOICE_DESIGNS_PATH = REST_ROUTES.voiceDesigns;

export interface DesignParams {
  prompt: string;
  previewText: string;
  /** Provider identifiers. */
  providers?: string[];
  /** Default a new UUID. */
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
}

export interface DesignCandidate {
  candidateId: string;
  /** Protected URL: fetch with `preview()`. */
  previewAudioUrl: string | undefined;
  raw: JsonObject;
}

export interface VoiceDesign {
  designId: string;
  candidates: DesignCandidate[];
  /** Billing details as given (fields not specified). */
  billing: JsonObject | undefined;
  /** When the preview session expires (ISO 8601), where the service says. */
  expiresAt: string | undefined;
  /** The key sent: reuse it to replay this exact request. */
  idempotencyKey: string;
  raw: JsonObject;
}

export interface SaveDesignParams {
  candidateId: string;
  name: string;
  description?: string;
  /** Default `private`. */
  visibility?: string;
  /** Default a new UUID. */
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
}

export interface SavedVoice {
  voiceId: string;
  idempotencyKey: string;
  raw: JsonObject;
}

function unwrap(body: unknown, key: string): JsonObject {
  const obj = asObject(body);
  return isObject(obj[key]) ? { ...obj, ...(obj[key] as JsonObject) } : isObject(obj['data']) ? { ...obj, ...(obj['data'] as JsonObject) } : obj;
}

export class VoiceDesigns {
  constructor(private readonly client: HttpClient) {}

  async create({ signal, idempotencyKey = randomUUID(), ...body }: DesignParams): Promise<VoiceDesign> {
    const res = await this.client.json({ method: 'POST', path: VOICE_DESIGNS_PATH, body, headers: { [HEADERS.idempotencyKey]: idempotencyKey }, signal });
    const obj = unwrap(res.data, 'design');
    const designId = str(obj, 'designId', 'id');
    if (!designId) throw new VoxpipeError(ClientErrorCode.invalidResponse, 'voice design response has no designId', { requestId: res.requestId });
    const candidates = (arr(obj, 'candidates') ?? []).map(asObject).flatMap((raw) => {
      const candidateId = str(raw, 'candidateId', 'id');
      return candidateId ? [{ candidateId, previewAudioUrl: str(raw, 'previewAudioUrl'), raw }] : [];
    });
    const billing = obj['billing'] ?? obj['billingDetails'];
    return { designId, candidates, billing: isObject(billing) ? billing : undefined, expiresAt: str(obj, 'expiresAt'), idempotencyKey, raw: asObject(res.data) };
  }

  /**
   * A candidate's preview audio (`audio/wav` or `audio/mpeg`), fetched with the key.
   * @param options.format container asked for where the service offers a choice (`wav`, `mp3`); default the service's
   */
  async preview(designId: string, candidateId: string, options: { format?: string; signal?: AbortSignal | undefined } = {}): Promise<DownloadedFile> {
    const res = await this.client.binary({ path: `${VOICE_DESIGNS_PATH}/${encodeURIComponent(designId)}/candidates/${encodeURIComponent(candidateId)}/audio`, query: { format: options.format }, signal: options.signal });
    return { data: res.data, contentType: res.contentType, url: res.url, requestId: res.requestId, headers: res.headers };
  }

  /** Save a candidate as a permanent voice; returns its `voiceId`. */
  async save(designId: string, { signal, idempotencyKey = randomUUID(), visibility = 'private', ...rest }: SaveDesignParams): Promise<SavedVoice> {
    const res = await this.client.json({ method: 'POST', path: `${VOICE_DESIGNS_PATH}/${encodeURIComponent(designId)}/voices`, body: { ...rest, visibility }, headers: { [HEADERS.idempotencyKey]: idempotencyKey }, signal });
    const obj = unwrap(res.data, 'voice');
    const voiceId = str(obj, 'voiceId');
    if (!voiceId) throw new VoxpipeError(ClientErrorCode.invalidResponse, 'voice design save response has no voiceId', { requestId: res.requestId });
    return { voiceId, idempotencyKey, raw: asObject(res.data) };
  }
}
