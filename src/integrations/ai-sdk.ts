/**
 * `voxpipe/ai-sdk`: a Vercel AI SDK speech provider.
 *
 *   const voxpipe = createVoxpipe({ apiKey, baseUrl });
 *   await experimental_generateSpeech({ model: voxpipe.speech(), text });            // ai@6 and ai@7
 *   experimental_streamSpeech({ model: voxpipe.speech(), text: llm.textStream });    // ai@7
 *
 * One model object serves both SDK generations: it declares specification
 * `v3` (ai@6 accepts only v2/v3; ai@7 wraps a v3 model as v4 and passes its
 * other members through) and implements `doGenerate` over the sync route
 * plus the experimental streaming extension `doStream` over a SpeechStream
 * (realtime reliable with failover, so a dropped socket neither loses nor
 * repeats audio). Nothing of the SDK is imported, not even its types: the
 * shapes below are the subset of `@ai-sdk/provider`'s speech types this
 * model speaks, written so that they are assignable to both ai@6's
 * (`@ai-sdk/provider@3`) and ai@7's (`@ai-sdk/provider@4`) declarations, so
 * a user's typecheck passes with either installed (test/integrations/ai-sdk.test.ts
 * passes the model to both).
 *
 * Formats, labelled honestly: `doGenerate` returns WAV unless asked
 * otherwise (the SDK sniffs the bytes, and raw PCM has nothing to sniff, so
 * ai@6 would call it mp3); `pcm` is returned when asked for, with a
 * `content-type: audio/pcm;rate=N` response header that ai@7 reads.
 * `doStream` gives `audio/pcm` at the service's rate by default.
 */
import { configFromEnv, deriveUrls, requireApiKey, type ServiceConfig } from '../config.js';
import { AbortError, registerSecret, VoxpipeError } from '../errors.js';
import type { AudioFormat, PcmInfo } from '../protocol/audio.js';
import { createSpeechPool, createSpeechStream, type SpeechOptions, type SpeechPool, type TransportChoice } from '../speech.js';
import type { ReadyInfo } from '../transport.js';
import type { SpeechStream } from '../stream/speech-stream.js';

export const PROVIDER_NAME = 'voxpipe';

/** JSON values this provider puts in metadata (assignable to both SDKs' `JSONValue`). */
type MetadataValue = string | number | boolean | null | string[];
type ProviderMetadata = Record<string, { [key: string]: MetadataValue | undefined }>;

/** The SDK's warning kinds this provider emits (`SpeechWarning` and `SharedV4Warning` both have them). */
export type SpeechWarning = { type: 'unsupported'; feature: string; details?: string } | { type: 'other'; message: string };

/** `SpeechAudioFormat`: a media type and, for PCM and WAV, the sample rate. */
export interface SpeechAudioFormat {
  type: string;
  rate?: number;
}

/** `SpeechModelV3CallOptions` (and V4's), as far as this model reads it. */
export interface SpeechCallOptions {
  text: string;
  voice?: string | undefined;
  outputFormat?: string | undefined;
  instructions?: string | undefined;
  speed?: number | undefined;
  language?: string | undefined;
  providerOptions?: Record<string, Record<string, unknown>> | undefined;
  abortSignal?: AbortSignal | undefined;
  headers?: Record<string, string | undefined> | undefined;
}

export interface SpeechGenerateResult {
  audio: Uint8Array;
  warnings: SpeechWarning[];
  request?: { body?: unknown };
  response: { timestamp: Date; modelId: string; headers?: Record<string, string> };
  providerMetadata?: ProviderMetadata;
}

/** ai@7's `Experimental_SpeechModelV4StreamTextPart`. */
export interface SpeechTextPart {
  type: 'text';
  text: string;
  voice?: string | undefined;
}

/** ai@7's `Experimental_SpeechModelV4StreamOptions`, as far as this model reads it. */
export interface SpeechStreamCallOptions extends Omit<SpeechCallOptions, 'text' | 'outputFormat'> {
  text: ReadableStream<SpeechTextPart>;
  outputFormat?: SpeechAudioFormat | undefined;
  includeRawChunks?: boolean | undefined;
}

/** ai@7's `Experimental_SpeechModelV4StreamPart`: the kinds this model sends. */
export type SpeechStreamPart =
  | { type: 'stream-start'; warnings: SpeechWarning[] }
  | { type: 'response-metadata'; timestamp: Date; modelId: string }
  | { type: 'audio'; id: string; audio: Uint8Array; audioFormat: SpeechAudioFormat }
  | { type: 'finish'; usage: { inputCharacters: number; raw: { units: number } }; providerMetadata: ProviderMetadata }
  | { type: 'error'; error: unknown };

export interface SpeechStreamResult {
  stream: ReadableStream<SpeechStreamPart>;
  request?: { body?: unknown };
  response?: { timestamp?: Date; modelId?: string };
}

export interface VoxpipeProviderSettings {
  /** Default `VOXPIPE_API_KEY`. */
  apiKey?: string;
  /** `{base_url}` (ending in /api/open/v1); default `VOXPIPE_BASE_URL`. */
  baseUrl?: string;
  /** Every URL given (e.g. `serviceConfigOf(server)` or `(await openService()).config`); wins over apiKey/baseUrl. */
  config?: ServiceConfig;
  /**
   * Realtime connections kept authenticated for `doStream` (see
   * `createSpeechPool`); default 0: each stream connects when it starts.
   */
  spare?: number;
  /** Defaults of every call (voice, transport, realtime tuning, ...); a call's own options win. */
  defaults?: SpeechOptions;
}

/** `providerOptions.voxpipe` of a call. */
export interface VoxpipeCallOptions {
  emotion?: string;
  /** 0 to 10, realtime only. */
  volume?: number;
  /** Default `sync` for `doGenerate`, `auto` for `doStream`. */
  transport?: TransportChoice;
  /** Idempotency key of the generation (a retried call with the same key is not charged twice). */
  requestId?: string;
}

/** What a call's result carries under `providerMetadata.voxpipe`. */
export interface VoxpipeMetadata extends PcmInfo {
  requestId: string;
  format: AudioFormat;
  /** Billing units charged. */
  units: number;
  transport: string;
}

/** The speech model: `v3` `doGenerate` for ai@6 and ai@7, plus ai@7's streaming `doStream`. */
export interface VoxpipeSpeechModel {
  readonly specificationVersion: 'v3';
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: SpeechCallOptions): PromiseLike<SpeechGenerateResult>;
  doStream(options: SpeechStreamCallOptions): PromiseLike<SpeechStreamResult>;
}

export interface VoxpipeSpeechModelV4 extends Omit<VoxpipeSpeechModel, 'specificationVersion'> {
  readonly specificationVersion: 'v4';
}

export interface VoxpipeProvider {
  (modelId?: string): VoxpipeSpeechModel;
  /** A speech model; `modelId` default: the deployment's default model. */
  speech(modelId?: string): VoxpipeSpeechModel;
  speechModel(modelId?: string): VoxpipeSpeechModel;
  /**
   * The same model declaring specification `v4`, for code typed against
   * `SpeechModelV4` / `Experimental_StreamingSpeechModelV4` (ai@7 only: ai@6
   * refuses v4 models, which is why `speech()` declares v3).
   */
  speechV4(modelId?: string): VoxpipeSpeechModelV4;
  /** Open the spare realtime connections now (with `spare` > 0); resolves when they are ready. */
  prewarm(timeoutMs?: number): Promise<void>;
  /** Close the spare connections. */
  close(): void;
}

const FORMAT_BY_NAME: Record<string, AudioFormat> = {
  pcm: 'pcm', 'audio/pcm': 'pcm', 'audio/l16': 'pcm', 'audio/raw': 'pcm',
  wav: 'wav', 'audio/wav': 'wav', 'audio/wave': 'wav', 'audio/x-wav': 'wav',
  mp3: 'mp3', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3',
  opus: 'opus', 'audio/ogg': 'opus', 'audio/opus': 'opus',
};

const MEDIA_TYPE: Record<AudioFormat, string> = { pcm: 'audio/pcm', wav: 'audio/wav', mp3: 'audio/mpeg', opus: 'audio/ogg' };

/** `audio/pcm;rate=24000` style type parameters of a format name, if any. */
function formatOf(name: string | undefined, fallback: AudioFormat, warnings: SpeechWarning[]): { format: AudioFormat; rate: number | undefined } {
  if (name === undefined) return { format: fallback, rate: undefined };
  const [type = '', ...params] = name.split(';').map((p) => p.trim().toLowerCase());
  const rateParam = params.find((p) => p.startsWith('rate='));
  const rate = rateParam ? Number(rateParam.slice(5)) : undefined;
  const format = FORMAT_BY_NAME[type];
  if (format) return { format, rate };
  warnings.push({ type: 'unsupported', feature: 'outputFormat', details: `voxpipe speaks pcm, wav, mp3 and opus; "${name}" is not one of them, so ${fallback} is returned` });
  return { format: fallback, rate: undefined };
}

function mediaTypeOf(ready: ReadyInfo): string {
  return ready.format === 'pcm' ? `audio/pcm;rate=${ready.sampleRate};channels=${ready.channels}` : MEDIA_TYPE[ready.format];
}

function audioFormatOf(ready: ReadyInfo): SpeechAudioFormat {
  return ready.format === 'pcm' || ready.format === 'wav' ? { type: MEDIA_TYPE[ready.format], rate: ready.sampleRate } : { type: MEDIA_TYPE[ready.format] };
}

function resolveConfig(settings: VoxpipeProviderSettings): ServiceConfig {
  if (settings.config) return settings.config;
  const fromEnv = settings.baseUrl === undefined ? configFromEnv() : undefined;
  if (fromEnv && settings.apiKey === undefined) return fromEnv;
  const baseUrl = settings.baseUrl ?? fromEnv?.baseUrl;
  const apiKey = settings.apiKey ?? process.env['VOXPIPE_API_KEY'];
  if (!baseUrl) throw new VoxpipeError('invalid_config', 'createVoxpipe: no service: pass { apiKey, baseUrl } or { config }, or set VOXPIPE_BASE_URL and VOXPIPE_API_KEY');
  const key = requireApiKey(apiKey, 'createVoxpipe({ apiKey }) or VOXPIPE_API_KEY');
  registerSecret(key);
  return { apiKey: key, ...deriveUrls(baseUrl) };
}

/** The call's options the service takes, with a warning for each it does not. */
function speechOptionsOf(
  call: { voice?: string | undefined; speed?: number | undefined; language?: string | undefined; instructions?: string | undefined; providerOptions?: Record<string, Record<string, unknown>> | undefined; abortSignal?: AbortSignal | undefined },
  modelId: string | undefined,
  defaults: SpeechOptions,
  warnings: SpeechWarning[],
): SpeechOptions {
  const own = (call.providerOptions?.[PROVIDER_NAME] ?? {}) as VoxpipeCallOptions;
  if (call.instructions !== undefined) {
    warnings.push({ type: 'unsupported', feature: 'instructions', details: 'the service takes no free-text instructions; use providerOptions.voxpipe.emotion' });
  }
  const options: SpeechOptions = { ...defaults };
  if (modelId !== undefined) options.model = modelId;
  if (call.voice !== undefined) options.voiceId = call.voice;
  if (call.speed !== undefined) {
    if (call.speed < 0.5 || call.speed > 2) warnings.push({ type: 'other', message: `speed ${call.speed} is outside the service's 0.5 to 2: the service refuses it` });
    options.speed = call.speed;
  }
  if (call.language !== undefined && call.language !== 'auto') options.language = call.language;
  if (own.emotion !== undefined) options.emotion = own.emotion;
  if (own.volume !== undefined) options.volume = own.volume;
  if (own.requestId !== undefined) options.requestId = own.requestId;
  if (own.transport !== undefined) options.transport = own.transport;
  if (call.abortSignal) options.signal = call.abortSignal;
  return options;
}

function metadataOf(speech: SpeechStream): VoxpipeMetadata & { [key: string]: MetadataValue } {
  const summary = speech.summary();
  const ready = summary.ready;
  return {
    requestId: summary.requestId,
    format: ready?.format ?? 'pcm',
    sampleRate: ready?.sampleRate ?? 0,
    channels: ready?.channels ?? 1,
    bitDepth: ready?.bitDepth ?? 16,
    units: summary.units,
    transport: summary.transport,
  };
}

/**
 * A plain object with closures, not a class with private fields: ai@7 wraps
 * a v3 model in a Proxy and calls its methods with the proxy as `this`,
 * which private fields refuse.
 */
function speechModel(modelId: string | undefined, getConfig: () => ServiceConfig, settings: VoxpipeProviderSettings, getPool: () => SpeechPool | undefined): VoxpipeSpeechModel {
  const defaults = settings.defaults ?? {};
  const shownId = modelId ?? 'default';
  return {
    specificationVersion: 'v3',
    provider: `${PROVIDER_NAME}.speech`,
    modelId: shownId,
    doGenerate: (call) => generate(call),
    doStream: (call) => stream(call),
  };

  async function generate(call: SpeechCallOptions): Promise<SpeechGenerateResult> {
    const warnings: SpeechWarning[] = [];
    const { format } = formatOf(call.outputFormat, 'wav', warnings);
    const options = speechOptionsOf(call, modelId, defaults, warnings);
    const speech = await createSpeechStream(getConfig(), { transport: 'sync', ...options, format });
    speech.end(call.text);
    const parts: Buffer[] = [];
    for await (const chunk of speech) parts.push(chunk as Buffer);
    const ready = speech.info;
    const metadata = metadataOf(speech);
    return {
      audio: new Uint8Array(Buffer.concat(parts)),
      warnings,
      request: { body: { text: call.text, format, ...(options.voiceId !== undefined && { voice_id: options.voiceId }) } },
      response: {
        timestamp: new Date(),
        modelId: ready?.model ?? shownId,
        ...(ready && { headers: { 'content-type': mediaTypeOf(ready) } }),
      },
      providerMetadata: { [PROVIDER_NAME]: metadata },
    };
  }

  async function stream(call: SpeechStreamCallOptions): Promise<SpeechStreamResult> {
    if (call.abortSignal?.aborted) throw new AbortError('aborted before the speech stream started', { cause: call.abortSignal.reason });
    const warnings: SpeechWarning[] = [];
    const requested = call.outputFormat;
    const { format } = formatOf(requested?.type, 'pcm', warnings);
    // An abort interrupts (barge-in: what was spoken stays spoken), rather than failing the stream.
    const { signal: _signal, ...options } = speechOptionsOf(call, modelId, defaults, warnings);
    const pool = getPool();
    const speechOptions: SpeechOptions = { transport: 'auto', ...options, format };
    const speech = pool ? await pool.createSpeechStream(speechOptions) : await createSpeechStream(getConfig(), speechOptions);
    const ready = await speech.open();
    if (requested?.rate !== undefined && (format === 'pcm' || format === 'wav') && requested.rate !== ready.sampleRate) {
      warnings.push({ type: 'unsupported', feature: 'outputFormat.rate', details: `the service speaks ${ready.sampleRate} Hz here; the audio parts say so in audioFormat.rate (${requested.rate} Hz asked)` });
    }
    const audioFormat = audioFormatOf(ready);
    let characters = 0;
    let cancelled = false;
    const late: string[] = [];
    const interrupt = () => {
      if (cancelled) return;
      cancelled = true;
      void speech.interrupt().catch(() => undefined);
    };
    call.abortSignal?.addEventListener('abort', interrupt, { once: true });
    const done = () => call.abortSignal?.removeEventListener('abort', interrupt);

    // Text in: each part written as it arrives; the end of the text stream ends the request.
    const feed = (async () => {
      const reader = call.text.getReader();
      let voiceWarned = false;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || cancelled) break;
          const part = value;
          if (part.voice !== undefined && part.voice !== ready.voiceId && !voiceWarned) {
            // stream-start is out already: this one goes with the finish part's metadata.
            voiceWarned = true;
            late.push(`one voice per stream: a text part asked for voice "${part.voice}"; it was spoken with ${ready.voiceId}`);
          }
          characters += part.text.length;
          if (!speech.write(part.text)) await new Promise((resolve) => speech.once('drain', resolve));
        }
        if (!cancelled) speech.end();
      } catch (err) {
        interrupt();
        throw err;
      } finally {
        reader.releaseLock();
      }
    })();
    feed.catch(() => undefined);

    const chunks = speech.chunks();
    const parts = new ReadableStream<SpeechStreamPart>({
      start(controller) {
        controller.enqueue({ type: 'stream-start', warnings });
        controller.enqueue({ type: 'response-metadata', timestamp: new Date(), modelId: ready.model });
      },
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (!next.done) {
            controller.enqueue({ type: 'audio', id: next.value.segmentId, audio: new Uint8Array(next.value.data), audioFormat });
            return;
          }
          await feed;
          const metadata = { ...metadataOf(speech), ...(late.length > 0 && { warnings: late }) };
          controller.enqueue({ type: 'finish', usage: { inputCharacters: characters, raw: { units: metadata.units } }, providerMetadata: { [PROVIDER_NAME]: metadata } });
          done();
          controller.close();
        } catch (err) {
          done();
          if (!cancelled) controller.enqueue({ type: 'error', error: err });
          controller.close();
        }
      },
      cancel() {
        interrupt();
      },
    });
    return { stream: parts, request: { body: { format, voice_id: ready.voiceId, request_id: ready.requestId } }, response: { timestamp: new Date(), modelId: ready.model } };
  }
}

/** The voxpipe provider for the Vercel AI SDK. */
export function createVoxpipe(settings: VoxpipeProviderSettings = {}): VoxpipeProvider {
  let config: ServiceConfig | undefined;
  const getConfig = () => (config ??= resolveConfig(settings));
  let pool: SpeechPool | undefined;
  const getPool = () => {
    if (!settings.spare) return undefined;
    return (pool ??= createSpeechPool(getConfig(), { ...settings.defaults, spare: settings.spare }));
  };
  const speech = (modelId?: string) => speechModel(modelId, getConfig, settings, getPool);
  const provider = Object.assign(speech, {
    speech,
    speechModel: speech,
    speechV4: (modelId?: string): VoxpipeSpeechModelV4 => ({ ...speech(modelId), specificationVersion: 'v4' }),
    prewarm: async (timeoutMs?: number) => getPool()?.ready(timeoutMs),
    close: () => pool?.close(),
  });
  return provider;
}
