/**
 * Synchronous TTS (spec 4.1): `POST /speech/tts`, binary audio, or with
 * `cache: true` the JSON of 2.9 whose `audio_url` is fetched with the key.
 * Every call carries an `X-Request-Id` (default a new UUID): the server
 * deduplicates on it (3.6), so the client core may resend it after a lost
 * response without a second charge.
 */
import { randomUUID } from 'node:crypto';
import { VoxpipeError } from '../../errors.js';
import { ClientErrorCode, type HttpClient, type RetryInfo } from '../client.js';
import { asObject, intHeader, num, str } from '../../protocol/fields.js';
import type { DownloadedFile } from '../job-handle.js';
import { HEADERS, REST_ROUTES } from '../../protocol/rest.js';

/** Route of sync TTS under `{base_url}`. */
export const TTS_PATH = REST_ROUTES.tts;
/** Response header with the credits a binary synthesis charged. */
export const CREDITS_CHARGED_HEADER = HEADERS.creditsCharged;

export interface SynthesizeParams {
  /** 1 to 5000 characters. */
  text: string;
  voiceId: string;
  /** Engine model id; default the voice's. */
  modelId?: string;
  /** Output container, e.g. `mp3`, `wav`; default the model's. */
  format?: string;
  /** 0.5 to 2; default 1. */
  speed?: number;
  emotion?: string;
  /** `X-Request-Id`, stable per logical generation; default a new UUID. Reuse it only for the exact same request. */
  requestId?: string;
  signal?: AbortSignal | undefined;
  /** Called before each automatic retry of this call. */
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

export interface SynthesizeResult {
  audio: Buffer;
  contentType: string;
  /** From `x-svc-credits-charged`. */
  creditsCharged: number | undefined;
  /** The `X-Request-Id` sent (the idempotency key). */
  requestId: string;
  /** The server's own request id header, for support. */
  serverRequestId: string | undefined;
}

/** Spec 2.9, camel-cased. */
export interface CachedSynthesisResult {
  /** Protected URL of the audio: fetch it with `fetchAudio()` (needs the key). */
  audioUrl: string;
  creditsUsed: number | undefined;
  quotaRemaining: number | undefined;
  requestId: string;
  serverRequestId: string | undefined;
}

function body(p: SynthesizeParams, cache: boolean): Record<string, unknown> {
  return { text: p.text, voiceId: p.voiceId, modelId: p.modelId, format: p.format, speed: p.speed, emotion: p.emotion, ...(cache ? { cache: true } : {}) };
}

export class Tts {
  constructor(private readonly client: HttpClient) {}

  /** Binary synthesis. A retry after a lost response answers 409 `ERR_REQUEST_ALREADY_COMPLETED` (no charge): use `synthesizeCached` to be able to replay. */
  async synthesize(params: SynthesizeParams): Promise<SynthesizeResult> {
    const requestId = params.requestId ?? randomUUID();
    const res = await this.client.binary({ method: 'POST', path: TTS_PATH, body: body(params, false), headers: { [HEADERS.requestId]: requestId }, signal: params.signal, onRetry: params.onRetry, generation: true });
    return { audio: res.data, contentType: res.contentType, creditsCharged: intHeader(res.headers, CREDITS_CHARGED_HEADER), requestId, serverRequestId: res.requestId };
  }

  /** `cache: true`: JSON with an audio URL. Repeating the same `requestId` replays the stored response without a new charge. */
  async synthesizeCached(params: SynthesizeParams): Promise<CachedSynthesisResult> {
    const requestId = params.requestId ?? randomUUID();
    const res = await this.client.json({ method: 'POST', path: TTS_PATH, body: body(params, true), headers: { [HEADERS.requestId]: requestId }, signal: params.signal, onRetry: params.onRetry, generation: true });
    const data = asObject(res.data);
    const audioUrl = str(data, 'audio_url', 'audioUrl');
    if (!audioUrl) throw new VoxpipeError(ClientErrorCode.invalidResponse, 'sync TTS response has no audio_url', { requestId: res.requestId });
    return { audioUrl, creditsUsed: num(data, 'credits_used', 'creditsUsed'), quotaRemaining: num(data, 'quota_remaining', 'quotaRemaining'), requestId, serverRequestId: res.requestId };
  }

  /** Fetch an `audio_url` (absolute, or relative to `{root_url}`), with the key on the service's own hosts only. */
  async fetchAudio(audioUrl: string, options: { signal?: AbortSignal | undefined } = {}): Promise<DownloadedFile> {
    const res = await this.client.download(audioUrl, options);
    return { data: res.data, contentType: res.contentType, url: res.url, requestId: res.requestId, headers: res.headers };
  }
}
