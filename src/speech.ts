/**
 * The front door: `createSpeechStream(config, options)` builds a SpeechStream
 * on the chosen transport. `auto` (the default) speaks over realtime reliable
 * mode and fails over to sync HTTP for the segments not yet completed when
 * realtime is unavailable or fails with no retryable path.
 */
import { randomUUID } from 'node:crypto';
import { VoxpipeError } from './errors.js';
import { createClient } from './http/index.js';
import type { AudioFormat, PcmInfo } from './protocol/audio.js';
import { DEFAULT_MODEL, REALTIME_PATHS, type Mode } from './protocol/constants.js';
import type { StartRequest } from './protocol/events.js';
import type { ServiceConfig } from './config.js';
import { ReliableSession } from './realtime/reliable/session.js';
import { SimpleSession } from './realtime/simple-session.js';
import type { PartialSegmentPolicy } from './realtime/reliable/types.js';
import { SpeechStream, type SpeechStreamOptions } from './stream/speech-stream.js';
import type { SegmentTransport } from './stream/transport.js';
import { SyncTransport } from './stream/transports/sync.js';
import { AsyncTransport } from './stream/transports/async.js';
import { CompatTransport } from './stream/transports/compat.js';
import type { TokenSegmenterOptions } from './stream/token-segmenter.js';

export const TRANSPORT_CHOICES = ['auto', 'realtime', 'sync', 'async', 'compat'] as const;
export type TransportChoice = (typeof TRANSPORT_CHOICES)[number];

export interface SpeechOptions {
  /** Public voice id; default the model's first public voice (from the capabilities route). */
  voiceId?: string;
  /** Default `svc-s21pro-flash`. */
  model?: string;
  /** Default `pcm`. */
  format?: AudioFormat;
  /** 0.5 to 2; default the service's (1). */
  speed?: number;
  /** Realtime only: 0 to 10. */
  volume?: number;
  language?: string;
  emotion?: string;
  /** Default `auto`. */
  transport?: TransportChoice;
  /** Realtime mode; default `reliable`. */
  mode?: Mode;
  /** Idempotency key of this generation; default a new UUID. */
  requestId?: string;
  onPartialSegment?: PartialSegmentPolicy;
  segmenter?: TokenSegmenterOptions;
  maxBufferedChars?: number;
  maxBufferedAudioBytes?: number;
  signal?: AbortSignal;
}

interface CapabilitiesModel {
  id: string;
  default?: boolean;
  voices?: { voice_id: string }[];
}

/** What the client needs from `GET {rt_http_url}/v2/tts/capabilities`. */
export interface RealtimeCapabilities {
  /** Public voice ids per model. */
  voices: Map<string, string[]>;
  /** PCM layout of the service's audio, when it says. */
  pcm: PcmInfo | undefined;
}

/** Read the capabilities route; undefined when realtime is not reachable for this account. */
export async function fetchCapabilities(config: ServiceConfig, signal?: AbortSignal): Promise<RealtimeCapabilities | undefined> {
  try {
    const res = await fetch(`${config.rtHttpUrl}${REALTIME_PATHS.capabilities}`, { headers: { authorization: `Bearer ${config.apiKey}` }, ...(signal && { signal }) });
    if (!res.ok) return undefined;
    const caps = (await res.json()) as { providers?: { models?: CapabilitiesModel[] }[]; pcm?: { sample_rate?: number; channels?: number; bit_depth?: number } };
    const voices = new Map<string, string[]>();
    for (const p of caps.providers ?? []) for (const m of p.models ?? []) voices.set(m.id, (m.voices ?? []).map((v) => v.voice_id));
    const pcm = caps.pcm?.sample_rate ? { sampleRate: caps.pcm.sample_rate, channels: caps.pcm.channels ?? 1, bitDepth: caps.pcm.bit_depth ?? 16 } : undefined;
    return { voices, pcm };
  } catch {
    return undefined;
  }
}

/** The first public voice of `model`, from the capabilities (or the compatible voice list). */
export async function defaultVoice(config: ServiceConfig, model: string, signal?: AbortSignal, caps?: RealtimeCapabilities): Promise<string> {
  const fromCaps = (caps ?? (await fetchCapabilities(config, signal)))?.voices.get(model)?.[0];
  if (fromCaps) return fromCaps;
  // Realtime may be disabled for the account: the compatible voice list names voices too.
  const res = await fetch(`${config.rootUrl}/v1/audio/voices`, { headers: { authorization: `Bearer ${config.apiKey}` }, ...(signal && { signal }) });
  if (res.ok) {
    const body = (await res.json()) as { voices?: { id: string }[] };
    const voice = body.voices?.[0]?.id;
    if (voice) return voice;
  }
  throw new VoxpipeError('voice_not_found', `no public voice found for model ${model}; pass a voice id`);
}

/** Whether `voiceId` is one of the account's personal voices (`GET {base_url}/voices`). */
async function isPersonalVoice(config: ServiceConfig, voiceId: string, signal?: AbortSignal): Promise<boolean> {
  try {
    const res = await fetch(`${config.baseUrl}/voices?limit=100`, { headers: { authorization: `Bearer ${config.apiKey}` }, ...(signal && { signal }) });
    if (!res.ok) return false;
    const body = (await res.json()) as { data?: { voiceId?: string }[]; voices?: { voiceId?: string; id?: string }[] };
    return [...(body.data ?? []), ...(body.voices ?? [])].some((v) => v.voiceId === voiceId || (v as { id?: string }).id === voiceId);
  } catch {
    return false;
  }
}

/** Build a transport by name (no failover: see `createSpeechStream`). */
export function createTransport(
  name: Exclude<TransportChoice, 'auto'>,
  config: ServiceConfig,
  o: Required<Pick<SpeechOptions, 'voiceId' | 'model' | 'format' | 'requestId'>> & SpeechOptions & { pcm?: PcmInfo | undefined },
  continuing = false,
): SegmentTransport {
  if (name === 'realtime') {
    const request: StartRequest = { voice_id: o.voiceId, model: o.model, format: o.format };
    if (o.speed !== undefined) request.speed = o.speed;
    if (o.volume !== undefined) request.volume = o.volume;
    if (o.language !== undefined) request.language = o.language;
    if (o.emotion !== undefined) request.emotion = o.emotion;
    const base = { wsUrl: config.wsUrl, apiKey: config.apiKey, request, requestId: o.requestId, ...(o.signal && { signal: o.signal }) };
    if (o.mode === 'simple') return new SimpleSession(base);
    return new ReliableSession({ ...base, rtHttpUrl: config.rtHttpUrl, ...(o.onPartialSegment && { onPartialSegment: o.onPartialSegment }) });
  }
  const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, rootUrl: config.rootUrl });
  const http = {
    client,
    voiceId: o.voiceId,
    model: o.model,
    format: o.format,
    requestId: o.requestId,
    ...(o.speed !== undefined && { speed: o.speed }),
    ...(o.emotion !== undefined && { emotion: o.emotion }),
    // The HTTP routes say their PCM layout only with the audio: announce the service's in `ready`.
    ...(o.pcm && { pcm: o.pcm }),
    // Taking over a wav stream that already sent its header: no second header.
    ...(continuing && { wavHeader: false }),
  };
  if (name === 'sync') return new SyncTransport(http);
  if (name === 'async') return new AsyncTransport(http);
  return new CompatTransport(http);
}

/**
 * A SpeechStream on the configured service. Resolves the default voice first
 * when none is given (one HTTP read).
 */
export async function createSpeechStream(config: ServiceConfig, options: SpeechOptions = {}): Promise<SpeechStream> {
  const model = options.model ?? DEFAULT_MODEL;
  let choice = options.transport ?? 'auto';
  const caps = choice === 'auto' || choice === 'realtime' || options.voiceId === undefined || options.format === 'pcm' || options.format === undefined
    ? await fetchCapabilities(config, options.signal)
    : undefined;
  const voiceId = options.voiceId ?? (await defaultVoice(config, model, options.signal, caps));
  // Realtime speaks public voices only (spec 4.10): the account's personal
  // (cloned or designed) voices go over HTTP from the start. An unknown voice
  // stays on realtime, which names the problem (`voice_not_found`).
  if (choice === 'auto' && caps && ![...caps.voices.values()].some((list) => list.includes(voiceId))) {
    if (await isPersonalVoice(config, voiceId, options.signal)) choice = 'sync';
  }
  const resolved = {
    ...options,
    model,
    format: options.format ?? 'pcm',
    requestId: options.requestId ?? randomUUID(),
    voiceId,
    pcm: caps?.pcm,
  };
  const streamOptions: SpeechStreamOptions = {
    transport: createTransport(choice === 'auto' ? 'realtime' : choice, config, resolved),
    ...(choice === 'auto' && { fallback: ({ bytesEmitted }: { bytesEmitted: number }) => createTransport('sync', config, resolved, bytesEmitted > 0) }),
    ...(options.segmenter && { segmenter: options.segmenter }),
    ...(options.maxBufferedChars !== undefined && { maxBufferedChars: options.maxBufferedChars }),
    ...(options.maxBufferedAudioBytes !== undefined && { maxBufferedAudioBytes: options.maxBufferedAudioBytes }),
    ...(options.signal && { signal: options.signal }),
  };
  return new SpeechStream(streamOptions);
}
