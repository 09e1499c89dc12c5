/**
 * SpeechStream: a Node Duplex, text in, audio out.
 *
 * The writable side takes text chunks (LLM tokens, lines, whole texts); a
 * segmenter cuts them into speech segments that a `SegmentTransport` speaks
 * (realtime reliable by default). The readable side gives the audio bytes in
 * sequence order, so `llm.pipe(speech).pipe(sink)` works. `chunks()` gives
 * the same audio with its metadata instead.
 *
 * Bounded both ways: the writable side holds at most `maxBufferedChars` of
 * text not yet spoken (a write callback waits past that), the readable side at
 * most `maxBufferedAudioBytes`; past that the transport is paused, which stops
 * reading the socket, so the server sees the backpressure.
 *
 * Failover (`failover.ts` decides when): given a `fallback` factory, a
 * transport that fails with no retryable path hands its segments not yet
 * completed, in order, to the fallback at a segment boundary. Bytes of a
 * segment already emitted are not emitted again (skipped to the byte for pcm
 * and wav; for compressed formats the segment restarts after a
 * `discontinuity` event).
 *
 * Rollover (`rollover.ts` decides when): given `nextRequest`, a text longer
 * than one request carries moves on to a next request, opened ahead, at a
 * segment boundary, once the current request's audio is all in: the
 * listener gets one stream, in order, with one summary.
 *
 * One ledger per segment (`AudioLedger`, `splice.ts`): every transport hands
 * its audio over raw and tagged (`TransportAudio`, `transport.ts`), and the
 * stream's ledger alone decides what the listener gets. The fallback's
 * audio carries its own attempt tags, so a failover is a new attempt like a
 * realtime resume. A transport that must know what the listener has (the
 * reliable session's machine) is bound to this ledger (`bindLedger`).
 *
 * The segments, the listener's sequence, the word timings and what was
 * heard at barge-in are the speech core's (`SpeechCore`, `speech-core.ts`),
 * which BrowserSpeech shares.
 */
import { randomUUID } from 'node:crypto';
import { Duplex, Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { AbortError, VoxpipeError } from '../errors.js';
import { LocalErrorCode } from '../protocol/codes.js';
import { pcmDurationMs, type AudioChunk } from '../protocol/audio.js';
import type { ReadyInfo, SegmentResult, SegmentTransport, TransportAudio, TransportSummary, UsageInfo } from '../transport.js';
import { AudioLedger, type LedgerEntry } from '../splice.js';
import { TokenSegmenter } from './token-segmenter.js';
import { shouldFailover } from './failover.js';
import { BudgetStep, RequestBudget, RequestChain } from './rollover.js';
import { SpeechCore, type CoreSegment } from './speech-core.js';
import type { PlayedPosition } from './heard.js';
import { decodedEnergies } from './decoded-energies.js';
import type { WordTiming } from './word-timing.js';
import { publish, RequestOutcome } from '../telemetry/channels.js';
import type { InterruptReport, SegmentWaterfall, SpeechStreamEventMap, SpeechStreamOptions, SpeechStreamSummary, StreamSegmentResult, StreamWaterfall } from './speech-stream-types.js';

export { shouldFailover } from './failover.js';
export type { InterruptReport, SegmentWaterfall, SpeechStreamEventMap, SpeechStreamOptions, SpeechStreamSummary, StreamSegmentResult, StreamWaterfall } from './speech-stream-types.js';

interface SegmentState extends CoreSegment {
  /** Its audio had begun on a transport that failed: the fallback charges it again. */
  recharged: boolean;
  waterfall: SegmentWaterfall;
}

/** Audio the listener must still have queued before a cut is deferred: 1.5 s. */
const RUNWAY_MARGIN_MS = 1_500;
/** Longest single deferral before asking again: 2 s. */
const MAX_DEFER_MS = 2_000;

const DEFAULT_MAX_BUFFERED_CHARS = 20_000;
const DEFAULT_MAX_BUFFERED_AUDIO = 256 * 1024; // 256 KiB: ~5 s of 24 kHz PCM

export class SpeechStream extends Duplex {
  readonly #opts: SpeechStreamOptions;
  readonly #segmenter: TokenSegmenter;
  readonly #t0 = performance.now();
  readonly #results: StreamSegmentResult[] = [];
  readonly #maxChars: number;
  readonly #maxAudio: number;
  #transport: SegmentTransport;
  #opened: Promise<ReadyInfo> | undefined;
  #ready: ReadyInfo | undefined;
  /** Every segment's audio: what the listener gets, the header, the layout, the counts (`AudioLedger`, `splice.ts`). */
  readonly #ledger = new AudioLedger();
  /** The segments, the listener's sequence, word timings and heard text (`SpeechCore`). */
  readonly #core: SpeechCore<SegmentState>;
  /** Units handed to the current request, when a next request may take over (`nextRequest`). */
  readonly #budget: RequestBudget | undefined;
  /** The stream's requests (`nextRequest`): the first alone without it. */
  readonly #requests: RequestChain;
  /** Resolves `#requestDrained` when every segment sent so far completed (or the stream stopped). */
  #drainWaiter: (() => void) | undefined;
  #pendingChars = 0;
  #writeWaiter: (() => void) | undefined;
  #paused = false;
  #failovers = 0;
  #retries = 0;
  #resumed = 0;
  #interrupted = false;
  #fatal: VoxpipeError | undefined;
  #chunkMode: { queue: AudioChunk[]; bytes: number; wake: (() => void) | undefined } | undefined;
  #pendingText = '';
  /** `request:end` was published (once, however the stream ends). */
  #endPublished = false;
  readonly #waterfall: StreamWaterfall = {};
  #sendChain: Promise<unknown> = Promise.resolve();
  #flushWaiters: { segmentId: string; resolve: (r: SegmentResult) => void; reject: (e: Error) => void }[] = [];

  constructor(options: SpeechStreamOptions) {
    super({ decodeStrings: false, defaultEncoding: 'utf8', allowHalfOpen: true, readableHighWaterMark: options.maxBufferedAudioBytes ?? DEFAULT_MAX_BUFFERED_AUDIO });
    this.#opts = options;
    this.#maxChars = options.maxBufferedChars ?? DEFAULT_MAX_BUFFERED_CHARS;
    this.#maxAudio = options.maxBufferedAudioBytes ?? DEFAULT_MAX_BUFFERED_AUDIO;
    // mp3 and opus are decoded on the way for their word timings (the decoders load on the first such segment).
    this.#core = new SpeechCore(this.#ledger, options.segmentIdPrefix ?? randomUUID().slice(0, 8), { decodedEnergies });
    this.#budget = options.nextRequest ? new RequestBudget(options.requestUnits) : undefined;
    // Without `nextRequest` there is no budget, so nothing is opened ahead: the chain only names the one request.
    this.#requests = new RequestChain(options.nextRequest ?? (() => options.transport), options.signal);
    // Later segments wait for a sentence end as long as the listener has audio
    // to hear (pcm/wav): cutting mid-sentence would only cost prosody.
    const segmenterOptions = { deferCut: () => this.#deferCutMs(), ...options.segmenter };
    this.#segmenter = new TokenSegmenter(segmenterOptions, (text) => this.#onSegment(text));
    this.#transport = options.transport;
    this.#attach(this.#transport);
    const signal = options.signal;
    if (signal) {
      if (signal.aborted) queueMicrotask(() => this.#abort(new AbortError('aborted by signal')));
      else signal.addEventListener('abort', () => this.#abort(new AbortError('aborted by signal')), { once: true });
    }
  }

  #now(): number {
    return performance.now() - this.#t0;
  }

  /**
   * How much longer a later segment may wait for its sentence end: the audio
   * received but not yet heard (counting playback from the first audio
   * byte), less a safety margin. 0 when unknown (compressed formats).
   */
  #deferCutMs(): number {
    const first = this.#waterfall.firstAudioMs;
    const info = this.#ready;
    if (first === undefined || !info || (info.format !== 'pcm' && info.format !== 'wav')) return 0;
    const runwayMs = pcmDurationMs(this.#ledger.bytes, info) - (this.#now() - first);
    return Math.min(Math.max(0, runwayMs - RUNWAY_MARGIN_MS), MAX_DEFER_MS);
  }

  /** What the service confirmed at start (format, PCM metadata), once ready. */
  get info(): ReadyInfo | undefined {
    return this.#ready;
  }

  /** Stream-level latency waterfall. */
  get waterfall(): Readonly<StreamWaterfall> {
    return this.#waterfall;
  }

  /**
   * Connect and start the request now (otherwise the first segment does).
   * Resolves with `ready`. A failure rejects this promise and leaves the
   * stream as it was; a failure of the implicit open (first write) destroys
   * the stream with the error.
   */
  open(): Promise<ReadyInfo> {
    if (!this.#opened) {
      this.#waterfall.openStartMs = this.#now();
      if (publish.requestStart.hasSubscribers) publish.requestStart.publish({ stream: this, requestId: undefined, transport: this.#transport, transportName: this.#transport.name });
      this.#opened = this.#openTransport().then((info) => {
        this.#ready = info;
        this.#requests.advance(info);
        this.#waterfall.readyMs = this.#now();
        if (publish.requestReady.hasSubscribers) publish.requestReady.publish({ stream: this, requestId: info.requestId, ready: info });
        this.emit('ready', info);
        return info;
      });
    }
    return this.#opened;
  }

  /** Open the transport; when it cannot start and a fallback may serve, start the fallback instead. */
  async #openTransport(): Promise<ReadyInfo> {
    try {
      return await this.#transport.open(this.#opts.signal);
    } catch (err) {
      const next = this.#switchTransport(err, []);
      if (!next) throw err;
      return next.open(this.#opts.signal);
    }
  }

  /**
   * The one failover hand-over (opening, sending or ending alike): when a
   * fallback may serve after `err`, build it, mark the `pending` segments
   * whose audio had begun (the failed transport charged them at their first
   * audio; the fallback charges them again), retire the failed transport,
   * attach the new one and say so. Undefined when there is no failover.
   */
  #switchTransport(err: unknown, pending: SegmentState[]): SegmentTransport | undefined {
    const fallback = this.#opts.fallback;
    if (!fallback || this.#interrupted || !shouldFailover(err)) return undefined;
    const failed = this.#transport;
    const next = fallback({ bytesEmitted: this.#ledger.bytes });
    if (next.name === failed.name) return undefined;
    const error = err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', String(err));
    for (const s of pending) if (s.audio.began || failed.audioArrived?.(s.segmentId)) s.recharged = true;
    this.#failovers++;
    this.#requests.drop();
    failed.removeAllListeners();
    void failed.abort(error).catch(() => undefined);
    this.#transport = next;
    this.#attach(next);
    const failover = { from: failed.name, to: next.name, pendingSegments: pending.map((s) => s.segmentId), recharged: pending.filter((s) => s.recharged).map((s) => s.segmentId), error };
    if (publish.requestFailover.hasSubscribers) publish.requestFailover.publish({ stream: this, requestId: this.#ready?.requestId, transport: next, ...failover });
    this.emit('failover', failover);
    return next;
  }

  #attach(t: SegmentTransport): void {
    // The one ledger: a transport that must know what the listener has asks it, and hands its audio raw.
    t.bindLedger?.(this.#ledger);
    // Static handlers called with this stream as their context (eventemitter3's third argument, which the
    // SegmentTransport contract is): no closure per event and stream (~450 bytes per stream).
    t.on('audio', SpeechStream.#onTransportAudio, this);
    t.on('segment-accepted', SpeechStream.#onAccepted, this);
    t.on('usage', SpeechStream.#onUsage, this);
    t.on('warning', SpeechStream.#onWarning, this);
    t.on('discontinuity', SpeechStream.#onDiscontinuity, this);
    t.on('resumed', SpeechStream.#onResumed, this);
    t.on('retry', SpeechStream.#onRetry, this);
  }

  static #onTransportAudio(this: SpeechStream, chunk: TransportAudio): void {
    this.#onAudio(chunk);
  }

  static #onAccepted(this: SpeechStream, id: string): void {
    const s = this.#core.find(id);
    if (s && s.waterfall.acceptedMs === undefined) s.waterfall.acceptedMs = this.#now();
  }

  static #onUsage(this: SpeechStream, u: UsageInfo): void {
    this.emit('usage', u);
  }

  static #onWarning(this: SpeechStream, w: { code: string; message: string }): void {
    this.emit('warning', w);
  }

  static #onDiscontinuity(this: SpeechStream, d: { segmentId: string; droppedBytes: number }): void {
    this.emit('discontinuity', d);
  }

  static #onResumed(this: SpeechStream, r: { attempt: number; requestId: string; pendingSegments: string[] }): void {
    this.#resumed++;
    if (publish.requestResume.hasSubscribers) publish.requestResume.publish({ stream: this, ...r });
    this.emit('resumed', r);
  }

  static #onRetry(this: SpeechStream, r: { attempt: number; error: VoxpipeError; delayMs: number }): void {
    this.#retries++;
    if (publish.requestRetry.hasSubscribers) publish.requestRetry.publish({ stream: this, requestId: this.#ready?.requestId, ...r });
    this.emit('retry', r);
  }

  // ------------------------------------------------------------ writable side

  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.#interrupted) return callback();
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
    if (text.length === 0) return callback();
    this.#waterfall.firstTextMs ??= this.#now();
    if (!this.#opened) void this.open().catch(() => undefined);
    this.#pendingText += text;
    this.#pendingChars += text.length;
    this.#segmenter.push(text);
    // Waiting for a slot of the deployment's budget (`budget.ts`): the writer waits with it.
    const queued = this.#transport.queued?.();
    if (!queued) return this.#holdWriter(callback);
    const go = (): void => this.#holdWriter(callback);
    queued.then(go, go);
  }

  /** Call the writer back, unless too much text is not yet spoken: then when segments complete. */
  #holdWriter(callback: (error?: Error | null) => void): void {
    if (this.#pendingChars <= this.#maxChars || this.#interrupted) return callback();
    this.#writeWaiter = () => callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#segmenter.end();
    const finish = async (): Promise<void> => {
      if (this.#interrupted) return;
      if (!this.#opened && this.#core.segments.length === 0) {
        this.push(null);
        return;
      }
      await this.open();
      await this.#sendChain;
      const summary = await this.#endTransport();
      this.#retries = Math.max(this.#retries, summary.retries);
      this.#resumed = Math.max(this.#resumed, summary.resumed);
      await this.#requests.ended();
      this.#requests.drop();
      this.#waterfall.endMs = this.#now();
      this.#publishEnd(RequestOutcome.completed, undefined);
      this.#pushEnd();
    };
    finish().then(
      () => callback(),
      (err: unknown) => {
        this.#fail(err);
        callback();
      },
    );
  }

  /**
   * End the transport; on failure with a fallback, hand over what is left
   * and end that one. A transport retired meanwhile (a failover while it
   * ended) says nothing of the stream: the current one is ended. Ended, every
   * segment must have completed: one that did not is `audio_incomplete`.
   */
  async #endTransport(): Promise<TransportSummary> {
    for (;;) {
      const t = this.#transport;
      try {
        const summary = await t.end();
        if (this.#handingOver) await this.#handingOver;
        if (t !== this.#transport) continue;
        const open = this.#core.segments.find((s) => !s.completed);
        if (open) throw new VoxpipeError(LocalErrorCode.audioIncomplete, `segment ${open.segmentId} never completed (${open.audio.audioBytes} bytes of its audio received)`, { details: { segmentId: open.segmentId } });
        return summary;
      } catch (err) {
        if (this.#handingOver) await this.#handingOver.catch(() => false);
        if (t !== this.#transport) continue;
        if (!(await this.#tryFailover(err))) throw err;
      }
    }
  }

  #onSegment(text: string): void {
    const state = this.#core.add(text, (core) => ({ ...core, recharged: false, waterfall: { segmentId: core.segmentId, characters: text.length, textReceivedMs: this.#now() } }));
    this.#pendingText = this.#pendingText.slice(text.length);
    if (publish.segmentStart.hasSubscribers) publish.segmentStart.publish({ stream: this, requestId: this.#ready?.requestId, segmentId: state.segmentId, characters: text.length, text });
    this.emit('segment-start', { segmentId: state.segmentId, text });
    this.#sendChain = this.#sendChain.then(() => this.#send(state));
  }

  async #send(state: SegmentState): Promise<void> {
    if (this.#interrupted || this.#fatal) return;
    try {
      await this.open();
    } catch (err) {
      this.#fail(err);
      return;
    }
    // After a failover the fallback serves the rest (HTTP carries no session limit).
    if (this.#budget && this.#failovers === 0) {
      const step = this.#budget.take(state.text);
      try {
        if (step === BudgetStep.moveOn) await this.#moveOn(this.#requests);
        else if (step === BudgetStep.openAhead) this.#requests.openAhead();
      } catch (err) {
        this.#fail(err);
        return;
      }
      if (this.#interrupted || this.#fatal) return;
    }
    state.waterfall.sentMs = this.#now();
    state.waterfall.transport = this.#transport.name;
    // Not awaited: the transport queues and paces; completion arrives by promise.
    this.#sendTo(this.#transport, state);
  }

  /** Hand a segment to `t`; what `t` says of it counts only while `t` is the stream's transport (a retired one's word is void). */
  #sendTo(t: SegmentTransport, state: SegmentState): void {
    if (publish.segmentSent.hasSubscribers) publish.segmentSent.publish({ stream: this, requestId: this.#ready?.requestId, segmentId: state.segmentId, transport: t, transportName: t.name });
    t.send({ segmentId: state.segmentId, text: state.text }).then(
      (result) => {
        if (t === this.#transport) this.#onCompleted(state, result);
      },
      (err: unknown) => {
        if (t === this.#transport) this.#onSendFailed(err);
      },
    );
  }

  #onCompleted(state: SegmentState, result: SegmentResult): void {
    if (state.completed) return;
    // Every byte accounted for: less than the transport says the segment
    // carries is a failure of that transport (a fallback generates the
    // segment again and continues past what the listener has), never a
    // silent success.
    const short = state.audio.shortfall(result.expectedBytes, this.#ready?.requestId);
    if (short) {
      this.#onSendFailed(short);
      return;
    }
    // Completed: its word timings are estimated now (`SpeechCore`); of mp3 or opus, once the rest is decoded.
    const decoding = this.#core.complete(state);
    state.waterfall.completedMs = this.#now();
    // Realtime results carry the wire-level times (performance.now() based).
    const wire = (result as { waterfall?: { sentMs?: number; inputAckMs?: number } }).waterfall;
    if (wire?.sentMs !== undefined) state.waterfall.wireSentMs = wire.sentMs - this.#t0;
    if (wire?.inputAckMs !== undefined) state.waterfall.inputAckMs = wire.inputAckMs - this.#t0;
    if (this.#drainWaiter && this.#core.segments.every((s) => s.completed || s.waterfall.sentMs === undefined)) this.#drainWaiter();
    const full: StreamSegmentResult = { ...result, audioBytes: state.audio.emittedBytes, receivedBytes: state.audio.audioBytes, waterfall: state.waterfall, ...(state.recharged && { recharged: result.units }), ...(state.words && { words: state.words }) };
    this.#results.push(full);
    void decoding?.then(() => {
      if (state.words) full.words = state.words;
    });
    this.#pendingChars = Math.max(0, this.#pendingChars - state.text.length);
    if (publish.segmentComplete.hasSubscribers) this.#publishComplete(state, full);
    this.emit('segment', full);
    for (const w of this.#flushWaiters.filter((w) => w.segmentId === state.segmentId)) w.resolve(full);
    this.#flushWaiters = this.#flushWaiters.filter((w) => w.segmentId !== state.segmentId);
    if (this.#writeWaiter && this.#pendingChars <= this.#maxChars) {
      const w = this.#writeWaiter;
      this.#writeWaiter = undefined;
      w();
    }
  }

  #handingOver: Promise<boolean> | undefined;

  // ------------------------------------------------------------ rollover

  /** Resolves when every segment sent so far completed (all of its audio is in), or the stream stopped. */
  #requestDrained(): Promise<void> {
    if (this.#core.segments.every((s) => s.completed || s.waterfall.sentMs === undefined)) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drainWaiter = () => {
        this.#drainWaiter = undefined;
        resolve();
      };
    });
  }

  /**
   * Move on to the next request (opened ahead) once the current request's
   * audio is all in, so the listener's audio stays in order; the current
   * one ends meanwhile.
   */
  async #moveOn(chain: RequestChain): Promise<void> {
    const next = chain.openAhead();
    const current = this.#transport;
    await this.#requestDrained();
    // Stopped, or a failover took over meanwhile: the next request is not used.
    if (this.#interrupted || this.#fatal || this.#transport !== current) return;
    const info = await next.opened;
    chain.advance(info);
    this.#transport = next.transport;
    this.#attach(next.transport);
    if (publish.requestRollover.hasSubscribers) publish.requestRollover.publish({ stream: this, requestId: info.requestId, transport: next.transport });
    if (this.#paused) next.transport.pause();
    chain.retire(current, (w) => this.emit('warning', w));
  }

  #onSendFailed(err: unknown): void {
    if (this.#interrupted) return;
    // end() reports the same failure; failover is attempted once per transport.
    void this.#tryFailover(err).then((ok) => {
      if (!ok) this.#fail(err);
    });
  }

  /** Move the segments not yet completed to the fallback transport. */
  #tryFailover(err: unknown): Promise<boolean> {
    this.#handingOver ??= (async () => {
      const pending = this.#core.segments.filter((s) => !s.completed);
      const next = this.#switchTransport(err, pending);
      if (!next) return false;
      const info = await next.open(this.#opts.signal);
      this.#ready ??= info;
      // The new transport's audio carries its own attempt tags: the ledger
      // takes it as a new attempt at each segment (continue or restart).
      for (const s of pending) {
        s.waterfall.transport = next.name;
        this.#sendTo(next, s);
      }
      return true;
    })().finally(() => {
      this.#handingOver = undefined;
    });
    return this.#handingOver;
  }

  // ------------------------------------------------------------ readable side

  /**
   * Every transport's audio goes through the one ledger (`AudioLedger`, `splice.ts`): it
   * decides what of a chunk the listener gets (after a failover, what of
   * the new attempt it had not heard, or a restart), the one header, and
   * the stream's layout (the first audio's own, which then wins over what
   * `ready` announced before it, for `info`, `summary().ready` and so for a
   * file's header).
   */
  #onAudio(chunk: TransportAudio): void {
    if (this.#interrupted || this.#fatal) return;
    let entry: LedgerEntry<TransportAudio>;
    try {
      entry = this.#ledger.accept(chunk);
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (entry.restart) this.emit('discontinuity', { segmentId: chunk.segmentId, droppedBytes: entry.restart.droppedBytes });
    if (entry.layout && this.#ready) this.#ready = { ...this.#ready, ...entry.layout };
    const kept = entry.chunk;
    if (kept.data.length === 0) return;
    // What the listener gets: the stream's own sequence (a failover's transport counts from 1 again), no tags.
    const out: AudioChunk = { data: kept.data, segmentId: kept.segmentId, sequence: this.#core.nextSequence(), format: kept.format, sampleRate: kept.sampleRate, channels: kept.channels, bitDepth: kept.bitDepth };
    const state = this.#core.find(chunk.segmentId);
    if (state && state.waterfall.firstAudioMs === undefined) {
      state.waterfall.firstAudioMs = this.#now();
      if (publish.segmentFirstAudio.hasSubscribers) publish.segmentFirstAudio.publish({ stream: this, requestId: this.#ready?.requestId, segmentId: state.segmentId, transportName: this.#transport.name, latencyMs: state.waterfall.firstAudioMs - state.waterfall.textReceivedMs });
    }
    if (this.#waterfall.firstAudioMs === undefined) {
      this.#waterfall.firstAudioMs = this.#now();
      const from = Math.max(this.#waterfall.firstTextMs ?? 0, this.#waterfall.openStartMs ?? 0);
      this.#waterfall.ttfaMs = this.#waterfall.firstAudioMs - from;
      if (publish.requestFirstAudio.hasSubscribers) publish.requestFirstAudio.publish({ stream: this, requestId: this.#ready?.requestId, ttfaMs: this.#waterfall.ttfaMs, transportName: this.#transport.name });
      this.emit('first-audio', { ttfaMs: this.#waterfall.ttfaMs });
    }
    if (this.#chunkMode) {
      this.#chunkMode.queue.push(out);
      this.#chunkMode.bytes += out.data.length;
      this.#chunkMode.wake?.();
      if (this.#chunkMode.bytes >= this.#maxAudio) this.#pauseTransport();
    } else {
      this.#markRead(out);
      if (!this.push(out.data)) this.#pauseTransport();
    }
    // The reader has the audio first; its energy (for the word timings) is taken after.
    if (state) this.#core.meter(state, out.data, out.format, this.#ready ?? out, entry.restart !== undefined);
  }

  #markRead(chunk: AudioChunk): void {
    this.#core.delivered(chunk.segmentId, chunk.data.length);
    const state = this.#core.find(chunk.segmentId);
    if (state) state.waterfall.firstReadMs ??= this.#now();
  }

  #pauseTransport(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#transport.pause();
  }

  #resumeTransport(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#transport.resume();
  }

  override _read(): void {
    this.#resumeTransport();
  }

  /**
   * Where each word of a segment lies in its audio (ms from its first
   * sample): once it completed, the estimate of all its audio (mp3 and opus
   * once decoded, shortly after its `segment` event); while its audio
   * arrives, the words whose audio has arrived, estimated now from what
   * arrived, those of the clause still being said `provisional`
   * (`SpeechCore.wordsOf`). Undefined for an unknown segment or one with no
   * audio measured yet.
   */
  wordTimings(segmentId: string): WordTiming[] | undefined {
    const segment = this.#core.find(segmentId);
    return segment && this.#core.wordsOf(segment);
  }

  #pushEnd(): void {
    if (this.#chunkMode) {
      this.#chunkMode.wake?.();
    }
    this.push(null);
  }

  /**
   * Audio with its metadata, in sequence order. Use either this or the
   * readable side, not both.
   */
  async *chunks(): AsyncGenerator<AudioChunk> {
    const mode = (this.#chunkMode ??= { queue: [], bytes: 0, wake: undefined });
    const wake = () => mode.wake?.();
    this.once('end', wake);
    this.once('close', wake);
    // The readable side is unused in chunk mode: let its end signal flow.
    this.resume();
    for (;;) {
      const next = mode.queue.shift();
      if (next) {
        mode.bytes -= next.data.length;
        if (mode.bytes < this.#maxAudio / 2) this.#resumeTransport();
        this.#markRead(next);
        yield next;
        continue;
      }
      if (this.#fatal) throw this.#fatal;
      if (this.readableEnded || this.#interrupted || this.destroyed) return;
      await new Promise<void>((resolve) => {
        mode.wake = resolve;
      });
      mode.wake = undefined;
    }
  }

  /** The readable side as a web `ReadableStream` of bytes. */
  toWeb(): ReadableStream<Uint8Array> {
    return Readable.toWeb(this) as unknown as ReadableStream<Uint8Array>;
  }

  /**
   * Speak what is buffered now (without waiting for a sentence end).
   * Resolves when that segment completed, with its usage.
   */
  async flush(): Promise<SegmentResult | undefined> {
    const segments = this.#core.segments;
    const before = segments.length;
    this.#segmenter.flush();
    const last = segments[segments.length - 1];
    if (segments.length === before || !last) return undefined;
    if (last.completed) return this.#results.find((r) => r.segmentId === last.segmentId);
    return new Promise((resolve, reject) => this.#flushWaiters.push({ segmentId: last.segmentId, resolve, reject }));
  }

  /**
   * Barge-in: drop buffered text and audio, end the request now, and report
   * what was spoken. No audio is emitted after this returns. `playedBytes`:
   * how much of the stream's bytes the listener actually heard (a playing
   * sink's `playedBytes`), or `playedMs`: how much of its audio in time (pcm,
   * wav), so the heard text is cut where the listener was, not where the
   * reader was; default what the reader took. The cut is the one rule of
   * every platform (`heardAt`, `heard.ts`).
   */
  async interrupt(options: { playedBytes?: number; playedMs?: number } = {}): Promise<InterruptReport> {
    const unspoken = this.#segmenter.clear();
    this.#interrupted = true;
    const played: PlayedPosition | undefined = options.playedBytes !== undefined ? { bytes: options.playedBytes } : options.playedMs !== undefined ? { ms: options.playedMs } : undefined;
    const heard = this.#core.heard(played, this.#ready);
    const report: InterruptReport = { spoken: heard.segments, spokenChars: 0, heardText: heard.heardText, heardConfidence: heard.heardConfidence, unspokenText: '' };
    const complete = new Set<string>();
    for (const s of heard.segments) {
      if (!s.complete) continue;
      report.spokenChars += s.text.length;
      complete.add(s.segmentId);
    }
    report.unspokenText = this.#core.segments.filter((s) => !complete.has(s.segmentId)).map((s) => s.text).join('') + unspoken;
    this.#core.close();
    this.#requests.drop();
    this.#drainWaiter?.();
    if (this.#chunkMode) this.#chunkMode.queue.length = 0;
    await this.#transport.abort(new AbortError('interrupted')).catch(() => undefined);
    this.#writeWaiter?.();
    this.#writeWaiter = undefined;
    for (const w of this.#flushWaiters) w.reject(new AbortError('interrupted'));
    this.#flushWaiters = [];
    this.#waterfall.endMs = this.#now();
    this.#publishEnd(RequestOutcome.interrupted, undefined);
    this.push(null);
    this.#chunkMode?.wake?.();
    return report;
  }

  #abort(err: VoxpipeError): void {
    if (this.#interrupted) return;
    this.#interrupted = true;
    this.#publishEnd(RequestOutcome.aborted, err);
    void this.#transport.abort(err).catch(() => undefined);
    this.destroy(err);
  }

  #fail(err: unknown): void {
    if (this.#fatal || this.#interrupted) return;
    const error = err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
    this.#fatal = error;
    this.#drainWaiter?.();
    this.#requests.drop();
    for (const w of this.#flushWaiters) w.reject(error);
    this.#flushWaiters = [];
    this.#chunkMode?.wake?.();
    this.#publishEnd(RequestOutcome.failed, error);
    void this.#transport.abort(error).catch(() => undefined);
    this.destroy(error);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Destroyed by its user: the request ends here too (a failure, an abort or the end published it already).
    if (!this.#endPublished) this.#publishEnd(error ? RequestOutcome.failed : RequestOutcome.aborted, error ? (error instanceof VoxpipeError ? error : new VoxpipeError('internal_error', error.message, { cause: error })) : undefined);
    // And its transport stops, giving back its slot of the deployment's budget (`budget.ts`).
    if (!this.#interrupted && !this.#fatal && this.#waterfall.endMs === undefined) {
      this.#interrupted = true;
      this.#requests.drop();
      void this.#transport.abort(new AbortError('the stream was destroyed')).catch(() => undefined);
    }
    // The decoders of segments still arriving (mp3, opus word timings) are released.
    this.#core.close();
    callback(error);
  }

  /** `segment:complete`, asked only when someone subscribes. */
  #publishComplete(state: SegmentState, full: StreamSegmentResult): void {
    const w = state.waterfall;
    publish.segmentComplete.publish({
      stream: this,
      requestId: this.#ready?.requestId,
      segmentId: state.segmentId,
      transportName: full.transport,
      units: full.units,
      bytes: full.audioBytes,
      rechargedUnits: full.recharged ?? 0,
      firstAudioMs: w.firstAudioMs === undefined ? undefined : w.firstAudioMs - w.textReceivedMs,
      durationMs: (w.completedMs ?? this.#now()) - w.textReceivedMs,
    });
  }

  /** `request:error` (a failure) and `request:end`, once per opened stream, whoever ends it. */
  #publishEnd(outcome: RequestOutcome, error: VoxpipeError | undefined): void {
    if (this.#endPublished || !this.#opened) return;
    this.#endPublished = true;
    const requestId = this.#ready?.requestId;
    if (error && publish.requestError.hasSubscribers) publish.requestError.publish({ stream: this, requestId, error });
    if (!publish.requestEnd.hasSubscribers) return;
    const s = this.summary();
    publish.requestEnd.publish({
      stream: this,
      requestId,
      outcome,
      error,
      transportName: this.#transport.name,
      ttfaMs: this.#waterfall.ttfaMs,
      durationMs: this.#now() - (this.#waterfall.openStartMs ?? 0),
      bytes: s.bytes,
      units: s.units,
      segments: s.segments.length,
      retries: s.retries,
      resumed: s.resumed,
      failovers: s.failovers,
    });
  }

  /** Figures of the stream so far (complete once the readable side ended). */
  summary(): SpeechStreamSummary {
    return {
      requestId: this.#ready?.requestId ?? '',
      requestIds: [...this.#requests.ids],
      transport: this.#ready?.transport ?? this.#transport.name,
      segments: [...this.#results],
      units: this.#results.reduce((n, r) => n + r.units, 0),
      rechargedUnits: this.#results.reduce((n, r) => n + (r.recharged ?? 0), 0),
      bytes: this.#ledger.bytes,
      retries: this.#retries,
      resumed: this.#resumed,
      failovers: this.#failovers,
      ready: this.#ready,
      waterfall: { ...this.#waterfall },
    };
  }

  // Typed overloads for SpeechStream's own events; Duplex events pass through.
  override on<K extends keyof SpeechStreamEventMap>(event: K, listener: (...args: SpeechStreamEventMap[K]) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override on(event: string | symbol, listener: (...args: any[]) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }

  override once<K extends keyof SpeechStreamEventMap>(event: K, listener: (...args: SpeechStreamEventMap[K]) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override once(event: string | symbol, listener: (...args: any[]) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override once(event: string | symbol, listener: (...args: any[]) => void): this {
    return super.once(event, listener);
  }

  /** Text written but not yet handed to a segment. */
  get bufferedText(): string {
    return this.#pendingText;
  }
}
