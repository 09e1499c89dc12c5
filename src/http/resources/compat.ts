/**
 * The compatible-contract TTS routes at `{root_url}` (spec 4.2):
 * `POST /v1/audio/speech` (binary audio) and `GET /v1/audio/voices`.
 * A charging call without an idempotency key: never resent after a 5xx.
 */
import type { HttpClient, RetryInfo } from '../client.js';
import { arr, asObject, intHeader, str, type JsonObject } from '../../protocol/fields.js';
import { COMPAT_ROUTES } from '../../protocol/rest.js';

export const COMPAT_SPEECH_PATH = COMPAT_ROUTES.speech;
export const COMPAT_VOICES_PATH = COMPAT_ROUTES.voices;

export const CompatFormat = { mp3: 'mp3', wav: 'wav', pcm: 'pcm' } as const;
export type CompatFormat = (typeof CompatFormat)[keyof typeof CompatFormat];

export interface SpeechParams {
  /** An engine model id of the service (foreign names are not aliases). */
  model: string;
  input: string;
  /** Voice id, or `{ id }`. */
  voice: string | { id: string };
  /** Default `mp3` on the server. */
  response_format?: CompatFormat;
  /** 0.5 to 2; default 1. */
  speed?: number;
  signal?: AbortSignal | undefined;
  /** Called before each automatic retry (429 only: this call has no idempotency key). */
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

export interface SpeechResult {
  audio: Buffer;
  contentType: string;
  /** Response headers (PCM metadata of `pcm` audio where the server sends it). */
  headers: Headers;
  /** `X-OpenAPI-Quota-Remaining`. */
  quotaRemaining: number | undefined;
  /** `X-OpenAPI-Credits-Used`. */
  creditsUsed: number | undefined;
  requestId: string | undefined;
}

export interface CompatVoice {
  id: string;
  raw: JsonObject;
}

export class Compat {
  constructor(private readonly client: HttpClient) {}

  async speech({ signal, onRetry, ...body }: SpeechParams): Promise<SpeechResult> {
    const res = await this.client.binary({ method: 'POST', path: COMPAT_SPEECH_PATH, root: true, body, signal, onRetry, generation: true });
    return { audio: res.data, contentType: res.contentType, headers: res.headers, quotaRemaining: intHeader(res.headers, 'x-openapi-quota-remaining'), creditsUsed: intHeader(res.headers, 'x-openapi-credits-used'), requestId: res.requestId };
  }

  async voices(options: { signal?: AbortSignal | undefined } = {}): Promise<CompatVoice[]> {
    const res = await this.client.json({ path: COMPAT_VOICES_PATH, root: true, signal: options.signal });
    return (arr(asObject(res.data), 'voices') ?? []).map((v) => asObject(v)).flatMap((raw) => {
      const id = str(raw, 'id', 'voiceId');
      return id ? [{ id, raw }] : [];
    });
  }
}
