/**
 * `voxpipe/livekit`: a LiveKit Agents TTS plugin.
 *
 *   import * as voxpipe from 'voxpipe/livekit';
 *   const session = new voice.AgentSession({ tts: await voxpipe.TTS.create({ config }), ... });
 *
 * `stream()` is a `SynthesizeStream` over a SpeechStream (realtime reliable,
 * failover to HTTP): the agent's text goes in as it comes, a flush speaks
 * what is buffered, and a dropped socket is resumed by voxpipe itself, so the
 * agent sees neither silence nor repeated audio. PCM is sliced into
 * `AudioFrame`s at the session's rate; the first frame of each segment
 * carries that segment's text (spaces kept) and its start time as a timed
 * transcript. `close()` of a stream is a barge-in (`interrupt()`: no frame
 * after it). `synthesize()` is a `ChunkedStream` over the sync route.
 *
 * `@livekit/agents` and `@livekit/rtc-node` are optional peer dependencies:
 * only this module imports them, and `import 'voxpipe'` loads neither.
 */
import { APIConnectionError, APIError, APIStatusError, APITimeoutError, createTimedString, tts, USERDATA_TIMED_TRANSCRIPT, type APIConnectOptions } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import type { ServiceConfig } from '../config.js';
import { fetchCapabilities } from '../discovery.js';
import { ApiError, ConnectionError, TimeoutError, VoxpipeError } from '../errors.js';
import type { AudioChunk } from '../protocol/audio.js';
import { createSpeechPool, createSpeechStream, type SpeechOptions, type SpeechPool } from '../speech.js';
import type { SpeechStream } from '../stream/speech-stream.js';
import { estimateWordTimings, pcmSamples } from '../stream/word-timing.js';

/** Sample rate declared when neither the options nor the deployment say one (the spec's PCM default). */
const DEFAULT_SAMPLE_RATE = 24_000;

export interface TTSOptions extends Omit<SpeechOptions, 'format' | 'signal' | 'requestId'> {
  /** Where the service is (e.g. `(await openService()).config` or `serviceConfigOf(server)`). */
  config: ServiceConfig;
  /**
   * Rate the TTS declares to the agent. Frames always carry the rate the
   * service actually speaks; `TTS.create` reads it from the deployment.
   * Default 24,000 Hz.
   */
  sampleRate?: number;
  /** Duration of each `AudioFrame`; default 20 ms. */
  frameMs?: number;
  /** Realtime connections `prewarm()` keeps ready; default 1. */
  spare?: number;
  /**
   * Word-level timed transcripts: each segment's text goes out on
   * its last frame as one TimedString per word (the word and the spaces after
   * it), with start and end times estimated from the segment's audio and a
   * confidence, instead of one TimedString for the segment on its first
   * frame. Default false.
   */
  wordTimings?: boolean;
}

export class TTS extends tts.TTS {
  label = 'voxpipe.TTS';
  readonly #options: TTSOptions;
  #pool: SpeechPool | undefined;

  constructor(options: TTSOptions) {
    super(options.sampleRate ?? DEFAULT_SAMPLE_RATE, 1, { streaming: true, alignedTranscript: true });
    this.#options = options;
  }

  /** A TTS that declares the rate the deployment speaks (its capabilities document), so the agent resamples nothing. */
  static async create(options: TTSOptions): Promise<TTS> {
    if (options.sampleRate !== undefined) return new TTS(options);
    const caps = await fetchCapabilities(options.config).catch(() => undefined);
    return new TTS({ ...options, ...(caps?.pcm && { sampleRate: caps.pcm.sampleRate }), ...(caps !== undefined && { capabilities: caps }) });
  }

  override get model(): string {
    return this.#options.model ?? 'default';
  }

  override get provider(): string {
    return 'voxpipe';
  }

  /**
   * Open `spare` realtime connections now, so the next turns start on an
   * authenticated socket (no TLS and WebSocket handshake per turn).
   */
  async prewarm(timeoutMs?: number): Promise<void> {
    await this.#getPool().ready(timeoutMs);
  }

  #getPool(): SpeechPool {
    const { config, sampleRate: _r, frameMs: _f, spare, wordTimings: _w, ...speech } = this.#options;
    return (this.#pool ??= createSpeechPool(config, { ...speech, format: 'pcm', spare: spare ?? 1 }));
  }

  /** @internal A SpeechStream on the pool when prewarmed, else on a new connection. */
  async openSpeech(transport: SpeechOptions['transport'], connectTimeoutMs: number | undefined): Promise<SpeechStream> {
    const { config, sampleRate: _r, frameMs: _f, spare: _s, wordTimings: _w, ...speech } = this.#options;
    const realtime = connectTimeoutMs !== undefined && speech.realtime?.connectTimeoutMs === undefined ? { ...speech.realtime, connectTimeoutMs } : speech.realtime;
    const options: SpeechOptions = { ...speech, ...(realtime && { realtime }), format: 'pcm', ...(transport && { transport }) };
    return this.#pool && transport !== 'sync' ? this.#pool.createSpeechStream(options) : createSpeechStream(config, options);
  }

  get frameMs(): number {
    return this.#options.frameMs ?? 20;
  }

  /** Whether timed transcripts are word by word (`TTSOptions.wordTimings`). */
  get wordTimings(): boolean {
    return this.#options.wordTimings === true;
  }

  synthesize(text: string, connOptions?: APIConnectOptions, abortSignal?: AbortSignal): tts.ChunkedStream {
    return new ChunkedStream(text, this, connOptions, abortSignal);
  }

  stream(options?: { connOptions?: APIConnectOptions }): tts.SynthesizeStream {
    return new SynthesizeStream(this, options?.connOptions);
  }

  override async close(): Promise<void> {
    this.#pool?.close();
    this.#pool = undefined;
    await super.close();
  }
}

/**
 * voxpipe's error as the agent framework's: retryable only when nothing was
 * consumed yet (the framework retries by running the stream again, which
 * after text was taken would lose it, and after audio would repeat it; by
 * then voxpipe's own resume and failover have already been tried).
 */
export function toAPIError(err: unknown, retryable: boolean): APIError {
  if (err instanceof APIError) return err;
  const e = err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
  const message = `voxpipe ${e.code}: ${e.message}`;
  const canRetry = retryable && e.retryable;
  if (e instanceof TimeoutError) return new APITimeoutError({ message, options: { retryable: canRetry } });
  if (e instanceof ConnectionError) return new APIConnectionError({ message, options: { retryable: canRetry } });
  if (e instanceof ApiError) return new APIStatusError({ message, options: { statusCode: e.status, requestId: e.requestId ?? null, body: { code: e.code }, retryable: canRetry } });
  return new APIError(message, { body: { code: e.code, requestId: e.requestId ?? null }, retryable: canRetry });
}

/**
 * Cuts a segment's PCM into frames of `frameBytes`, holding back the last
 * whole frame until it is known whether more audio of the segment follows,
 * so the segment's last frame can say `final`.
 */
class Framer {
  #remainder: Buffer = Buffer.alloc(0);
  #held: Buffer | undefined;

  constructor(readonly frameBytes: number) {}

  /** Frames complete and known not to be the segment's last. */
  push(data: Buffer): Buffer[] {
    const bytes = this.#remainder.length > 0 ? Buffer.concat([this.#remainder, data]) : data;
    const out: Buffer[] = [];
    let offset = 0;
    for (; offset + this.frameBytes <= bytes.length; offset += this.frameBytes) {
      if (this.#held) out.push(this.#held);
      this.#held = bytes.subarray(offset, offset + this.frameBytes);
    }
    this.#remainder = Buffer.from(bytes.subarray(offset));
    return out;
  }

  /** The segment ended: what is left, the last one final. */
  end(): Buffer[] {
    const out = [this.#held, this.#remainder.length > 0 ? this.#remainder : undefined].filter((b): b is Buffer => b !== undefined);
    this.#held = undefined;
    this.#remainder = Buffer.alloc(0);
    return out;
  }
}

function frameOf(pcm: Buffer, chunk: Pick<AudioChunk, 'sampleRate' | 'channels'>): AudioFrame {
  const samples = new Int16Array(pcm.length / 2);
  Buffer.from(samples.buffer).set(pcm);
  return new AudioFrame(samples, chunk.sampleRate, chunk.channels, samples.length / chunk.channels);
}

/** Turns a SpeechStream's chunks into SynthesizedAudio, segment by segment. */
class FrameEmitter {
  readonly #put: (audio: tts.SynthesizedAudio) => void;
  readonly #texts = new Map<string, string>();
  readonly #completed = new Map<string, number>();
  readonly #frameMs: number;
  #framer: Framer | undefined;
  #segmentId: string | undefined;
  #consumed = 0;
  #first = true;
  #seconds = 0;
  #layout: Pick<AudioChunk, 'sampleRate' | 'channels'> = { sampleRate: DEFAULT_SAMPLE_RATE, channels: 1 };
  /** Word-level transcripts: the segment's PCM, kept until its last frame, and where it started. */
  readonly #words: boolean;
  #segmentPcm: Buffer[] = [];
  #segmentSeconds = 0;
  requestId = '';

  constructor(speech: SpeechStream, frameMs: number, put: (audio: tts.SynthesizedAudio) => void, words = false) {
    this.#put = put;
    this.#frameMs = frameMs;
    this.#words = words;
    speech.on('segment-start', ({ segmentId, text }) => this.#texts.set(segmentId, text));
    speech.on('segment', (s) => {
      this.#completed.set(s.segmentId, s.audioBytes);
      if (s.segmentId === this.#segmentId && this.#consumed >= s.audioBytes) this.#endSegment();
    });
  }

  chunk(c: AudioChunk): void {
    if (c.segmentId !== this.#segmentId) {
      this.#endSegment();
      this.#segmentId = c.segmentId;
      this.#consumed = 0;
      this.#first = true;
      this.#segmentPcm = [];
      this.#segmentSeconds = this.#seconds;
      this.#layout = { sampleRate: c.sampleRate, channels: c.channels };
      const samplesPerFrame = Math.max(1, Math.round((c.sampleRate * this.#frameMs) / 1000));
      this.#framer = new Framer(samplesPerFrame * c.channels * 2);
    }
    this.#consumed += c.data.length;
    if (this.#words) this.#segmentPcm.push(c.data);
    for (const pcm of this.#framer!.push(c.data)) this.#emit(pcm, false);
    const total = this.#completed.get(c.segmentId);
    if (total !== undefined && this.#consumed >= total) this.#endSegment();
  }

  /** The segment's remaining frames, the last one `final`. */
  #endSegment(): void {
    if (this.#segmentId === undefined || !this.#framer) return;
    const rest = this.#framer.end();
    rest.forEach((pcm, i) => this.#emit(pcm, i === rest.length - 1));
    this.#framer = undefined;
  }

  finish(): void {
    this.#endSegment();
    this.#segmentId = undefined;
  }

  #emit(pcm: Buffer, final: boolean): void {
    const frame = frameOf(pcm, this.#layout);
    const segmentId = this.#segmentId!;
    const audio: tts.SynthesizedAudio = { requestId: this.requestId, segmentId, frame, final };
    if (this.#words) {
      if (final) {
        const text = this.#texts.get(segmentId) ?? '';
        const timed = this.#wordTranscripts(text);
        audio.deltaText = text;
        audio.timedTranscripts = timed;
        frame.userdata[USERDATA_TIMED_TRANSCRIPT] = timed;
      }
    } else if (this.#first) {
      this.#first = false;
      const text = this.#texts.get(segmentId) ?? '';
      const timed = [createTimedString({ text, startTime: this.#seconds })];
      audio.deltaText = text;
      audio.timedTranscripts = timed;
      frame.userdata[USERDATA_TIMED_TRANSCRIPT] = timed;
    }
    this.#seconds += frame.samplesPerChannel / frame.sampleRate;
    this.#put(audio);
  }

  /** One TimedString per word of the segment (spaces kept), timed from its audio. */
  #wordTranscripts(text: string): ReturnType<typeof createTimedString>[] {
    const samples = pcmSamples(Buffer.concat(this.#segmentPcm));
    this.#segmentPcm = [];
    const words = estimateWordTimings(text, { samples, sampleRate: this.#layout.sampleRate, channels: this.#layout.channels });
    if (words.length === 0) return [createTimedString({ text, startTime: this.#segmentSeconds })];
    return words.map((w, i) =>
      createTimedString({
        // The first word takes any leading space, each word the spaces after it: the texts join to the segment's.
        text: text.slice(i === 0 ? 0 : w.charStart, words[i + 1]?.charStart ?? text.length),
        startTime: this.#segmentSeconds + w.startMs / 1000,
        endTime: this.#segmentSeconds + w.endMs / 1000,
        confidence: w.confidence,
      }),
    );
  }
}

class SynthesizeStream extends tts.SynthesizeStream {
  label = 'voxpipe.SynthesizeStream';
  readonly #tts: TTS;

  constructor(owner: TTS, connOptions?: APIConnectOptions) {
    super(owner, connOptions);
    this.#tts = owner;
  }

  protected async run(): Promise<void> {
    let consumed = false;
    let speech: SpeechStream;
    try {
      speech = await this.#tts.openSpeech('auto', this.connOptions.timeoutMs);
      await speech.open();
    } catch (err) {
      throw toAPIError(err, true);
    }
    const interrupt = () => void speech.interrupt().catch(() => undefined);
    if (this.abortSignal.aborted) return interrupt();
    this.abortSignal.addEventListener('abort', interrupt, { once: true });
    const emitter = new FrameEmitter(
      speech,
      this.#tts.frameMs,
      (audio) => {
        if (!this.abortSignal.aborted) this.queue.put(audio);
      },
      this.#tts.wordTimings,
    );
    emitter.requestId = speech.info?.requestId ?? '';

    const feed = (async () => {
      for await (const data of this.input) {
        if (this.abortSignal.aborted) return;
        consumed = true;
        if (data === tts.SynthesizeStream.FLUSH_SENTINEL) {
          speech.flush().catch(() => undefined); // its failure ends chunks() below, which reports it
          continue;
        }
        this.markStarted();
        if (!speech.write(data)) await new Promise((resolve) => speech.once('drain', resolve));
      }
      speech.end();
    })();

    try {
      for await (const chunk of speech.chunks()) {
        if (this.abortSignal.aborted) break;
        emitter.chunk(chunk);
      }
      await feed;
    } catch (err) {
      interrupt();
      if (this.abortSignal.aborted) return;
      throw toAPIError(err, !consumed);
    } finally {
      this.abortSignal.removeEventListener('abort', interrupt);
    }
    if (this.abortSignal.aborted) return;
    emitter.finish();
    this.queue.put(tts.SynthesizeStream.END_OF_STREAM);
  }
}

class ChunkedStream extends tts.ChunkedStream {
  label = 'voxpipe.ChunkedStream';
  readonly #tts: TTS;

  constructor(text: string, owner: TTS, connOptions?: APIConnectOptions, abortSignal?: AbortSignal) {
    super(text, owner, connOptions, abortSignal);
    this.#tts = owner;
  }

  protected async run(): Promise<void> {
    let emitted = false;
    try {
      const speech = await this.#tts.openSpeech('sync', undefined);
      const interrupt = () => void speech.interrupt().catch(() => undefined);
      this.abortSignal.addEventListener('abort', interrupt, { once: true });
      try {
        await speech.open();
        const emitter = new FrameEmitter(
          speech,
          this.#tts.frameMs,
          (audio) => {
            emitted = true;
            if (!this.abortSignal.aborted) this.queue.put(audio);
          },
          this.#tts.wordTimings,
        );
        emitter.requestId = speech.info?.requestId ?? '';
        speech.end(this.inputText);
        for await (const chunk of speech.chunks()) {
          if (this.abortSignal.aborted) break;
          emitter.chunk(chunk);
        }
        if (!this.abortSignal.aborted) emitter.finish();
      } finally {
        this.abortSignal.removeEventListener('abort', interrupt);
      }
    } catch (err) {
      if (this.abortSignal.aborted) return;
      throw toAPIError(err, !emitted);
    }
  }
}
