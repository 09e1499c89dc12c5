/**
 * The front door: `createSpeechStream(config, options)` builds a SpeechStream
 * on the chosen transport. `auto` (the default) speaks over realtime reliable
 * mode and fails over to sync HTTP for the segments not yet completed when
 * realtime is unavailable or fails with no retryable path.
 */
import { randomUUID } from 'node:crypto';
import { defaultModelOf, defaultVoice, fetchCapabilities, voiceKind, type Capabilities } from './discovery.js';
import { createClient } from './http/index.js';
import type { AudioFormat, PcmInfo } from './protocol/audio.js';
import type { Mode } from './protocol/constants.js';
import type { StartRequest } from './protocol/events.js';
import { checkServiceConfig, type ServiceConfig } from './config.js';
import { ReliableSession, type ReliableSessionOptions } from './realtime/reliable/session.js';
import type { ConnectionSource } from './realtime/connection.js';
import { ConnectionPool, type PoolStats } from './realtime/pool.js';
import { SimpleSession } from './realtime/simple-session.js';
import type { PartialSegmentPolicy } from './realtime/reliable/types.js';
import { SpeechStream, type SpeechStreamOptions } from './stream/speech-stream.js';
import { AbortError, type VoxpipeError } from './errors.js';
import type { SegmentTransport, TransportChoice } from './transport.js';
import { createHttpTransport } from './stream/transports/http-transports.js';
import { defined } from './defined.js';
import type { Priority } from './budget.js';

export { defaultVoice } from './discovery.js';

/** The realtime options a caller may tune. */
export type RealtimeTuning = Partial<
  Pick<
    ReliableSessionOptions,
    | 'connectTimeoutMs'
    | 'startTimeoutMs'
    | 'progressTimeoutMs'
    | 'finishTimeoutMs'
    | 'statusTimeoutMs'
    | 'httpTimeoutMs'
    | 'maxStallResumes'
    | 'maxRetries'
    | 'maxResumeMs'
    | 'backoff'
    | 'reorderWindowFrames'
    | 'keepAliveMs'
  >
>;

export { TRANSPORT_CHOICES, type TransportChoice } from './transport.js';

/**
 * Options of `createSpeechStream`: the stream's own (`SpeechStreamOptions`,
 * documented there: segmenter, buffer bounds, signal) plus the choice and
 * parameters of the transport it builds.
 */
export interface SpeechOptions extends Pick<SpeechStreamOptions, 'segmenter' | 'maxBufferedChars' | 'maxBufferedAudioBytes' | 'signal' | 'requestUnits'> {
  /** Public voice id; default the one the deployment names for the model (see `discovery.defaultVoice`). */
  voiceId?: string;
  /** Default: the deployment's default model (capabilities), else `svc-s21pro-flash`. */
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
  /** Idempotency key of this generation (its first request, when a long text takes several); default a new UUID. */
  requestId?: string;
  onPartialSegment?: PartialSegmentPolicy;
  /** Deadlines and bounds of the realtime transport (README, "Reliability"); simple mode takes the deadlines only. */
  realtime?: RealtimeTuning;
  /** Where realtime connections come from; default a new connection each time (see `createSpeechPool`). */
  connectionSource?: ConnectionSource;
  /** Told when discovery (before the stream exists) carries on without something it could not use, e.g. `capabilities_unusable`. */
  onWarning?: ((warning: { code: string; message: string }) => void) | undefined;
  /** What the deployment's capabilities route said (`discovery.fetchCapabilities`), to skip reading it again; `null`: it has none. */
  capabilities?: Capabilities | null;
  /**
   * Generations this process runs at once on the deployment (this key, every
   * stream and creation of it: `budget.ts`); default unlimited
   * (`VOXPIPE_MAX_CONCURRENCY` when set), learnt from the deployment's 429s.
   */
  maxConcurrency?: number;
  /** Its place in the queue for a slot: `interactive` (default) goes before `batch`. */
  priority?: Priority;
  /** Longest wait for a slot, ms; past it the stream fails with `queue_timeout` (nothing was charged); default unbounded. */
  queueTimeoutMs?: number;
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
    const tuning = o.realtime ?? {};
    const base = {
      wsUrl: config.wsUrl,
      apiKey: config.apiKey,
      request,
      requestId: o.requestId,
      ...(o.signal && { signal: o.signal }),
      ...(o.connectionSource && { connectionSource: o.connectionSource }),
      ...defined({ maxConcurrency: o.maxConcurrency, priority: o.priority, queueTimeoutMs: o.queueTimeoutMs }),
    };
    if (o.mode === 'simple') {
      const { maxRetries: _r, maxResumeMs: _m, backoff: _b, finishTimeoutMs: _f, statusTimeoutMs: _s, httpTimeoutMs: _h, maxStallResumes: _x, ...simple } = tuning;
      return new SimpleSession({ ...base, ...simple });
    }
    return new ReliableSession({ ...base, ...tuning, rtHttpUrl: config.rtHttpUrl, ...(o.onPartialSegment && { onPartialSegment: o.onPartialSegment }) });
  }
  const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, rootUrl: config.rootUrl, ...defined({ maxConcurrency: o.maxConcurrency, queueTimeoutMs: o.queueTimeoutMs }) });
  const http = {
    client,
    voiceId: o.voiceId,
    model: o.model,
    format: o.format,
    requestId: o.requestId,
    ...defined({ speed: o.speed, emotion: o.emotion }),
    // The HTTP routes say their PCM layout only with the audio: announce the service's in `ready`.
    ...(o.pcm && { pcm: o.pcm }),
    // Taking over a wav stream that already sent its header: no second header.
    ...(continuing && { wavHeader: false }),
  };
  return createHttpTransport(name, http);
}

/**
 * A SpeechStream on the configured service. Resolves the default voice first
 * when none is given (one HTTP read).
 */
export async function createSpeechStream(config: ServiceConfig, options: SpeechOptions = {}): Promise<SpeechStream> {
  // The same errors for a bad configuration as every entry point (`config.ts`), before any request.
  checkServiceConfig(config);
  if (options.signal?.aborted) throw new AbortError('aborted before the stream was created', { cause: options.signal.reason });
  let choice = options.transport ?? 'auto';
  const needCaps = choice === 'auto' || choice === 'realtime' || options.voiceId === undefined || options.model === undefined || options.format === 'pcm' || options.format === undefined;
  const discovery = { signal: options.signal, onWarning: options.onWarning };
  const caps: Capabilities | undefined =
    options.capabilities !== undefined ? (options.capabilities ?? undefined) : needCaps ? await fetchCapabilities(config, discovery).catch(rethrowUnlessOptional) : undefined;
  const model = options.model ?? defaultModelOf(caps);
  const voiceId = options.voiceId ?? (await defaultVoice(config, model, options.signal, caps ?? null, { onWarning: options.onWarning }));
  // Realtime speaks public voices only (spec 4.10): the account's personal
  // (cloned or designed) voices go over HTTP from the start. A voice the
  // deployment lists as public, or does not list at all, stays on realtime,
  // which names the problem (`voice_not_found`) if there is one.
  if (choice === 'auto' && options.voiceId !== undefined && (await voiceKind(config, voiceId, caps, discovery).catch(() => 'unknown' as const)) === 'personal') {
    choice = 'sync';
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
    // A realtime request carries a session's units at most: a longer text moves on to a new request.
    ...((choice === 'auto' || choice === 'realtime') && { nextRequest: () => createTransport('realtime', config, { ...resolved, requestId: randomUUID() }) }),
    ...(options.segmenter && { segmenter: options.segmenter }),
    ...defined({ maxBufferedChars: options.maxBufferedChars, maxBufferedAudioBytes: options.maxBufferedAudioBytes, requestUnits: options.requestUnits }),
    ...(options.signal && { signal: options.signal }),
  };
  return new SpeechStream(streamOptions);
}

/**
 * Capabilities are a hint: a deployment that answers them with a server
 * error still gets a realtime attempt (and failover). A wrong key, an
 * unreachable host, a timeout or an abort is the answer, and is thrown.
 */
function rethrowUnlessOptional(err: unknown): undefined {
  const e = err as VoxpipeError & { status?: number };
  if (typeof e.status === 'number' && e.status >= 500) return undefined;
  throw err;
}

export interface SpeechPoolOptions extends SpeechOptions {
  /** Realtime connections kept authenticated and ready; default 1. */
  spare?: number;
  /** A ready connection unused this long is replaced; default 60_000 ms. */
  maxIdleMs?: number;
}

/** SpeechStreams whose realtime connection is already open and authenticated when a turn starts. */
export interface SpeechPool {
  /** A SpeechStream as `createSpeechStream` makes it, with the pool's options under `options`, on a ready connection. */
  createSpeechStream(options?: SpeechOptions): Promise<SpeechStream>;
  /** Resolves once the spare connections are ready (at most `timeoutMs`). */
  ready(timeoutMs?: number): Promise<void>;
  readonly stats: PoolStats;
  /** Close the spare connections (streams in progress keep theirs). */
  close(): void;
}

/**
 * A pool of prewarmed realtime connections (spec 4.10 allows one generation
 * per connection, so each turn would otherwise connect and authenticate
 * first). `bench/pool.mjs` measures the difference.
 */
export function createSpeechPool(config: ServiceConfig, options: SpeechPoolOptions = {}): SpeechPool {
  const { spare, maxIdleMs, ...defaults } = options;
  const pool = new ConnectionPool({
    wsUrl: config.wsUrl,
    apiKey: config.apiKey,
    ...defined({ spare, maxIdleMs, connectTimeoutMs: defaults.realtime?.connectTimeoutMs }),
  });
  // Discovery once for the pool's life, not once per turn.
  let discovered: Promise<{ capabilities: Capabilities | null; model: string; voiceId: string }> | undefined;
  const discover = () =>
    (discovered ??= (async () => {
      const capabilities = (await fetchCapabilities(config).catch(rethrowUnlessOptional)) ?? null;
      const model = defaults.model ?? defaultModelOf(capabilities ?? undefined);
      const voiceId = defaults.voiceId ?? (await defaultVoice(config, model, undefined, capabilities));
      return { capabilities, model, voiceId };
    })());
  discover().catch(() => {
    discovered = undefined; // asked again by the first turn, which then reports the error
  });
  return {
    createSpeechStream: async (more = {}) => createSpeechStream(config, { ...(await discover()), ...defaults, ...more, connectionSource: pool.source }),
    ready: (timeoutMs) => pool.ready(timeoutMs),
    get stats() {
      return pool.stats;
    },
    close: () => pool.close(),
  };
}
