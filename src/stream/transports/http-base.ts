/**
 * What the HTTP transports (sync, async, compat) share: a queue of segments
 * fetched a few ahead (`concurrency`) and emitted strictly in order, each
 * file converted to the stream's format (`http-audio.ts`), chunked, and
 * paced by `pause()`/`resume()`. A failed segment fails the transport: its
 * `send()` and those of every later segment reject with the error, and
 * `pending()` still lists them in order, so a failover can take them over.
 *
 * Audio goes out as `TransportAudio` (`transport.ts`): each segment's bytes
 * are one attempt (a fresh `nextAttemptTag()`), offsets counted from 0 in
 * that attempt's raw bytes (the stream header included), so the stream's
 * one ledger splices them after a failover like any other new attempt.
 *
 * Every byte accounted for: a file shorter than it states (its WAV `data`
 * size, the Content-Length of an identity body) is fetched once more (the
 * sync route replays its stored result under the same `X-Request-Id`, an
 * async job is recovered, compat generates again); still short, its audio
 * goes out with the count it states (`expectedBytes`), and the ledger ends
 * it in `audio_incomplete` (or a failover), never a silent short segment.
 */
import { randomUUID } from 'node:crypto';
import { LocalErrorCode } from '../../protocol/codes.js';
import { EventEmitter } from 'eventemitter3';
import { AbortError, AudioIncompleteError, VoxpipeError } from '../../errors.js';
import { HttpClient, type RetryInfo } from '../../http/client.js';
import { frameBytes, type AudioFormat, type PcmInfo } from '../../protocol/audio.js';
import { DEFAULT_MODEL } from '../../protocol/constants.js';
import { countChars, LIMITS, splitByChars } from '../../protocol/limits.js';
import { nextAttemptTag, type ReadyInfo, type SegmentInput, type SegmentResult, type SegmentTransport, type TransportEvents, type TransportName, type TransportSummary } from '../../transport.js';
import { fileShortfall, SegmentAudioAssembler, splitChunks, type AudioFile } from './http-audio.js';

/** Options every HTTP transport takes. */
export interface HttpTransportOptions {
  /** The REST client (or anything holding one as `http`, e.g. `createClient()`'s result). */
  client: HttpClient | { http: HttpClient };
  voiceId: string;
  /** Engine model id; default `svc-s21pro-flash`. */
  model?: string;
  /** Format of the stream's audio; default `pcm`. */
  format?: AudioFormat;
  /** 0.5 to 2; default the service's (1). */
  speed?: number;
  emotion?: string;
  /** Id of the stream's request (segment request ids derive from it); default a new UUID. */
  requestId?: string;
  /**
   * PCM layout assumed for raw PCM that says nothing of its own (no WAV
   * header, no `x-svc-*` headers, no Content-Type parameters), and the
   * provisional one of `ready`; default 24 kHz mono 16-bit. Every audio chunk
   * carries the layout its audio states; SpeechStream's ledger takes the
   * stream's layout from the first audio, not from `ready`.
   */
  pcm?: PcmInfo;
  /** Segments requested ahead of the one being emitted (1 = strictly one at a time); default 2. */
  concurrency?: number;
  /** Largest audio chunk emitted, bytes; default 16_384. */
  chunkBytes?: number;
  /** Format `wav`: emit the streaming header first; false when continuing a stream that already has one (failover). Default true. */
  wavHeader?: boolean;
  /**
   * Format asked of the route for a `pcm` stream: `wav` (self-describing;
   * its header is stripped) or `pcm` (raw; layout from the response headers,
   * else `pcm`). Default per transport: `wav` for sync and async, `pcm` for compat.
   */
  pcmVia?: 'wav' | 'pcm';
  /**
   * Longest text of one HTTP request, in characters (code points); default
   * 5_000 (spec 8). A longer segment (realtime allows 10,000) is spoken as
   * several requests, cut at word boundaries, whose audio is joined.
   */
  maxRequestChars?: number;
}

/** A segment's file and what the service said about its cost. */
export interface FetchedSegment extends AudioFile {
  /** Credits or billing units charged for the segment. */
  units: number | undefined;
  quotaRemaining: number | undefined;
}

interface Entry {
  segment: SegmentInput;
  resolve: (result: SegmentResult) => void;
  reject: (error: VoxpipeError) => void;
  controller: AbortController;
  /** One file per request the segment needed (one unless it was longer than `maxRequestChars`). */
  fetched: Promise<FetchedSegment[]> | undefined;
}

/**
 * Cut `text` into pieces of at most `maxChars` code points, each ending after
 * whitespace where there is some in its second half (else a hard cut).
 * Joining the pieces gives `text` back.
 */
export function splitRequestText(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (countChars(rest) > maxChars) {
    const window = splitByChars(rest, maxChars)[0]!;
    let cut = window.length;
    for (let i = window.length - 1; i >= window.length / 2; i--) {
      if (/\s/.test(window[i]!)) {
        cut = i + 1;
        break;
      }
    }
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces;
}

export const DEFAULT_HTTP_PCM: PcmInfo = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

export const HttpTransportWarning = {
  /** A file came shorter than it states: fetched once more. */
  refetched: 'audio_refetched',
  /** A file's Content-Type is one the client does not know; its bytes were what was asked for and were taken. */
  unknownAudioType: 'unknown_audio_type',
} as const;

export const HttpTransportErrorCode = {
  closed: LocalErrorCode.transportClosed,
} as const;

function toVoxpipeError(err: unknown): VoxpipeError {
  return err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
}

export abstract class HttpSegmentTransport extends EventEmitter<TransportEvents> implements SegmentTransport {
  abstract readonly name: TransportName;
  readonly requestId: string;
  protected readonly http: HttpClient;
  protected readonly options: HttpTransportOptions & { model: string; format: AudioFormat };
  readonly #pcm: PcmInfo;
  readonly #concurrency: number;
  readonly #chunkBytes: number;
  readonly #maxRequestChars: number;
  readonly #assembler: SegmentAudioAssembler;
  /** Content-Types already warned about (`unknown_audio_type`): once per label. */
  readonly #labelsWarned = new Set<string>();
  #queue: Entry[] = [];
  #results: SegmentResult[] = [];
  #retries = 0;
  #failure: VoxpipeError | undefined;
  #aborted = false;
  #ended = false;
  #pumping = false;
  #paused = false;
  #resumeWaiters: (() => void)[] = [];
  #idleWaiters: (() => void)[] = [];
  #openSignal: AbortSignal | undefined;

  constructor(options: HttpTransportOptions) {
    super();
    this.http = options.client instanceof HttpClient ? options.client : options.client.http;
    this.options = { ...options, model: options.model ?? DEFAULT_MODEL, format: options.format ?? 'pcm' };
    this.requestId = options.requestId ?? randomUUID();
    this.#pcm = options.pcm ?? DEFAULT_HTTP_PCM;
    this.#concurrency = Math.max(1, options.concurrency ?? 2);
    this.#chunkBytes = options.chunkBytes ?? 16_384; // 16 KiB
    this.#maxRequestChars = options.maxRequestChars ?? LIMITS.httpTextMaxChars; // 5,000 characters
    this.#assembler = new SegmentAudioAssembler(this.options.format, { wavHeader: options.wavHeader ?? true, fallbackPcm: this.#pcm });
  }

  /** Fetch one segment's whole file (in `requestFormat()`). */
  protected abstract fetchSegment(segment: SegmentInput, signal: AbortSignal): Promise<FetchedSegment>;

  /** The format to ask the route for, given the stream's. */
  protected requestFormat(defaultPcmVia: 'wav' | 'pcm'): AudioFormat {
    return this.options.format === 'pcm' ? (this.options.pcmVia ?? defaultPcmVia) : this.options.format;
  }

  /** The TTS fields of a segment's request (sync TTS and async jobs take the same ones). */
  protected ttsFields(text: string): { text: string; voiceId: string; modelId: string; format: AudioFormat; speed?: number; emotion?: string } {
    const o = this.options;
    return {
      text,
      voiceId: o.voiceId,
      modelId: o.model,
      format: this.requestFormat('wav'),
      ...(o.speed === undefined ? {} : { speed: o.speed }),
      ...(o.emotion === undefined ? {} : { emotion: o.emotion }),
    };
  }

  /** Count and report a retry of the client core. */
  protected readonly onRetry = (info: RetryInfo): void => {
    this.#retries++;
    this.emit('retry', { attempt: info.attempt, error: info.error, delayMs: info.delayMs });
  };

  /** HTTP needs no connection: announce the request. */
  async open(signal?: AbortSignal): Promise<ReadyInfo> {
    if (signal?.aborted) throw new AbortError('aborted before open');
    this.#openSignal = signal;
    signal?.addEventListener('abort', () => void this.abort(new AbortError('aborted')), { once: true });
    const info: ReadyInfo = {
      transport: this.name,
      mode: 'http',
      requestId: this.requestId,
      model: this.options.model,
      voiceId: this.options.voiceId,
      format: this.options.format,
      ...this.#pcm,
    };
    this.emit('ready', info);
    return info;
  }

  send(segment: SegmentInput): Promise<SegmentResult> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#aborted || this.#openSignal?.aborted) return Promise.reject(new AbortError('transport aborted'));
    if (this.#ended) return Promise.reject(new VoxpipeError(HttpTransportErrorCode.closed, 'send() after end()'));
    return new Promise<SegmentResult>((resolve, reject) => {
      this.#queue.push({ segment, resolve, reject, controller: new AbortController(), fetched: undefined });
      this.#startFetches();
      void this.#pump();
    });
  }

  async end(): Promise<TransportSummary> {
    this.#ended = true;
    while ((this.#queue.length > 0 || this.#pumping) && !this.#failure && !this.#aborted) {
      await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    }
    if (this.#failure) throw this.#failure;
    if (this.#aborted) throw new AbortError('transport aborted');
    return { requestId: this.requestId, units: this.#results.reduce((n, r) => n + r.units, 0), retries: this.#retries, resumed: 0, segments: [...this.#results] };
  }

  async abort(reason?: VoxpipeError): Promise<void> {
    if (this.#aborted) return;
    this.#aborted = true;
    const error = reason ?? new AbortError('transport aborted');
    const dropped = this.#queue;
    this.#queue = [];
    for (const e of dropped) {
      e.controller.abort(error);
      e.reject(error);
    }
    this.resume();
    this.#wakeIdle();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    for (const w of this.#resumeWaiters.splice(0)) w();
  }

  pending(): SegmentInput[] {
    return this.#queue.map((e) => e.segment);
  }

  /** Start fetching the first `concurrency` queued segments not yet started. */
  #startFetches(): void {
    if (this.#failure || this.#aborted) return;
    for (const entry of this.#queue.slice(0, this.#concurrency)) {
      if (entry.fetched) continue;
      entry.fetched = this.#fetchParts(entry.segment, entry.controller.signal);
      // Awaited in order by the pump; a rejection before then must not be unhandled.
      entry.fetched.catch(() => undefined);
    }
  }

  /** Fetch a segment, as several requests (one after the other) when its text is over the per-request limit. */
  async #fetchParts(segment: SegmentInput, signal: AbortSignal): Promise<FetchedSegment[]> {
    const parts = splitRequestText(segment.text, this.#maxRequestChars);
    if (parts.length === 1) return [await this.fetchSegment(segment, signal)];
    const files: FetchedSegment[] = [];
    // Part ids are deterministic, so a replay names the same requests.
    for (const [i, text] of parts.entries()) files.push(await this.fetchSegment({ segmentId: `${segment.segmentId}~${i}`, text }, signal));
    return files;
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0 && !this.#failure && !this.#aborted) {
        const entry = this.#queue[0]!;
        this.#startFetches();
        let audioBytes = 0;
        /** What the files say the segment carries; undefined once one of them does not say. */
        let expectedBytes: number | undefined = 0;
        let units: number | undefined;
        try {
          let files = await entry.fetched!;
          if (this.#aborted) break;
          const short = files.map(fileShortfall).find((f) => f !== undefined);
          if (short) {
            this.emit('warning', { code: HttpTransportWarning.refetched, message: `segment ${entry.segment.segmentId}: a file of ${short.received} of its stated ${short.stated} bytes; fetching it once more` });
            files = await this.#fetchParts(entry.segment, entry.controller.signal);
            if (this.#aborted) break;
            this.#checkWhole(entry.segment.segmentId, files);
          }
          const attempt = nextAttemptTag();
          let offset = 0;
          let quotaRemaining: number | undefined;
          for (const fetched of files) {
            if (fetched.units !== undefined) units = (units ?? 0) + fetched.units;
            quotaRemaining = fetched.quotaRemaining ?? quotaRemaining;
            const converted = this.#assembler.convert(fetched);
            if (converted.warning !== undefined && !this.#labelsWarned.has(fetched.contentType)) {
              this.#labelsWarned.add(fetched.contentType);
              this.emit('warning', { code: HttpTransportWarning.unknownAudioType, message: converted.warning });
            }
            expectedBytes = expectedBytes === undefined || converted.declaredBytes === undefined ? undefined : expectedBytes + converted.declaredBytes;
            const frame = this.options.format === 'pcm' || this.options.format === 'wav' ? frameBytes(converted.pcm) : 1;
            for (const data of splitChunks(converted.data, this.#chunkBytes, frame)) {
              while (this.#paused && !this.#aborted) await new Promise<void>((resolve) => this.#resumeWaiters.push(resolve));
              if (this.#aborted) break;
              this.emit('audio', { data, segmentId: entry.segment.segmentId, attempt, offset, format: this.options.format, ...converted.pcm });
              offset += data.length;
              audioBytes += data.length;
            }
            if (this.#aborted) break;
          }
          if (this.#aborted) break;
          if (quotaRemaining !== undefined) {
            const sessionUnits = this.#results.reduce((n, r) => n + r.units, 0) + (units ?? 0);
            this.emit('usage', { segmentId: entry.segment.segmentId, segmentUnits: units ?? 0, sessionUnits, quotaRemaining, audioBytes });
          }
        } catch (err) {
          if (this.#aborted) break;
          this.#fail(toVoxpipeError(err));
          break;
        }
        this.#queue.shift();
        const result: SegmentResult = { segmentId: entry.segment.segmentId, units: units ?? 0, audioBytes, ...(expectedBytes !== undefined && { expectedBytes }), transport: this.name };
        this.#results.push(result);
        this.emit('segment-completed', result);
        entry.resolve(result);
      }
    } finally {
      this.#pumping = false;
      this.#wakeIdle();
    }
  }

  /**
   * Files fetched again after a short one: a WAV file says its own count,
   * which goes to the ledger as the segment's `expectedBytes`; any other
   * file still short of its Content-Length cannot be reconciled later.
   */
  #checkWhole(segmentId: string, files: FetchedSegment[]): void {
    for (const file of files) {
      const short = fileShortfall(file);
      if (short && this.#assembler.declares(file) === false) {
        throw new AudioIncompleteError(segmentId, short.stated, short.received, { requestId: this.requestId, retryable: true, why: 'its file came short twice' });
      }
    }
  }

  /** Fail the transport: every queued segment's `send()` rejects; they stay in `pending()` for failover. */
  #fail(error: VoxpipeError): void {
    this.#failure = error;
    for (const e of this.#queue) {
      e.controller.abort(error);
      e.reject(error);
    }
  }

  #wakeIdle(): void {
    for (const w of this.#idleWaiters.splice(0)) w();
  }
}
