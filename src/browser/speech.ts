/**
 * `BrowserSpeech`: SpeechStream's shape for the web. Text in (`write`,
 * `flush`, `end`), audio out in order (`audio()` async iterator or the
 * `readable` web stream), events, `interrupt()` (barge-in) and the
 * per-segment waterfall. Realtime reliable mode only: the browser has no
 * key for the HTTP fallbacks; resumes use a new ticket each time.
 *
 * The segments, their audio counts (the session's ledger), the listener's
 * sequence, the word timings and what was heard are SpeechStream's speech
 * core (`SpeechCore`, `stream/speech-core.ts`): the same played position
 * gives the same heard text here as in Node and on the phone.
 */
import { Emitter } from './emitter.js';
import { AbortError, VoxpipeError } from '../errors.js';
import type { StartRequest } from '../protocol/events.js';
import { countChars, LIMITS } from '../protocol/limits.js';
import type { MachineEvent } from '../realtime/reliable/types.js';
import type { PlayedPosition } from '../stream/heard.js';
import { SpeechCore, type CoreSegment } from '../stream/speech-core.js';
import { TokenSegmenter, type TokenSegmenterOptions } from '../stream/token-segmenter.js';
import type { WordTiming } from '../stream/word-timing.js';
import type { ReadyInfo } from '../transport.js';
import { BrowserSession, type BrowserSessionOptions, type SessionAudio } from './session.js';

export interface BrowserSpeechOptions extends Omit<BrowserSessionOptions, 'request' | 'requestId'> {
  voiceId: string;
  /** Default `svc-s21pro-flash`. */
  model?: string;
  /** Default `pcm`. */
  format?: StartRequest['format'];
  speed?: number;
  requestId?: string;
  segmenter?: TokenSegmenterOptions;
}

/** Times of one segment in ms since the speech was created (`performance.now()` based). */
export interface BrowserSegmentWaterfall {
  segmentId: string;
  text: string;
  textMs: number;
  sentMs?: number;
  acceptedMs?: number;
  firstAudioMs?: number;
  completedMs?: number;
  units?: number;
  audioBytes: number;
  /** Where each word lies in the segment's audio, estimated once it completed (pcm, wav: the page decodes no mp3 or opus, whose heard text is cut in proportion to their audio). */
  words?: WordTiming[];
}

export interface BrowserAudio {
  data: Uint8Array;
  segmentId: string;
  sequence: number;
}

export interface BrowserSpeechEvents {
  ready: [ReadyInfo];
  'first-audio': [{ ttfaMs: number }];
  segment: [BrowserSegmentWaterfall];
  resumed: [{ attempt: number; pendingSegments: string[] }];
  warning: [{ code: string; message: string }];
  error: [VoxpipeError];
  end: [];
}

export interface BrowserInterruptReport {
  /**
   * Text of the segments the listener heard to the end: with `heardBytes`
   * given (the player's position), by what was played; else by what reached
   * the page.
   */
  spokenText: string;
  /** The segment the cut fell in, if any (heard in part). */
  partialText: string;
  /**
   * What the listener heard, to the word: `spokenText` and the words of
   * `partialText` whose estimated end had played (`heardAt`, the rule of
   * every platform: word timings of all its audio once the segment
   * completed, of what arrived while it arrives; in proportion to its audio
   * for mp3 and opus). A prefix of the text written, exactly: its length is
   * the offset at which to truncate an agent's context.
   */
  heardText: string;
  /** Confidence, 0 to 1, in the word boundary `heardText` ends at (1: at a segment's end). */
  heardConfidence: number;
  /** Everything after: written but never heard. */
  unspokenText: string;
}

function uuid(): string {
  return globalThis.crypto?.randomUUID?.() ?? `req-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

interface BrowserSegment extends CoreSegment {
  waterfall: BrowserSegmentWaterfall;
}

export class BrowserSpeech extends Emitter<BrowserSpeechEvents> {
  readonly requestId: string;
  readonly #t0 = performance.now();
  readonly #session: BrowserSession;
  readonly #segmenter: TokenSegmenter;
  readonly #core: SpeechCore<BrowserSegment>;
  readonly #queue: BrowserAudio[] = [];
  #wake: (() => void) | undefined;
  #ready: ReadyInfo | undefined;
  #readyWaiters: { resolve: (r: ReadyInfo) => void; reject: (e: VoxpipeError) => void }[] = [];
  #opened = false;
  #firstTextMs: number | undefined;
  #firstAudioMs: number | undefined;
  #done = false;
  #error: VoxpipeError | undefined;
  #interrupted = false;
  #units = 0;

  constructor(options: BrowserSpeechOptions) {
    super();
    this.requestId = options.requestId ?? uuid();
    const request: StartRequest = { voice_id: options.voiceId, model: options.model ?? 'svc-s21pro-flash', format: options.format ?? 'pcm' };
    if (options.speed !== undefined) request.speed = options.speed;
    const { voiceId: _v, model: _m, format: _f, speed: _s, requestId: _r, segmenter, ...session } = options;
    this.#session = new BrowserSession({ ...session, request, requestId: this.requestId }, {
      ready: (info) => {
        this.#ready = info;
        for (const w of this.#readyWaiters.splice(0)) w.resolve(info);
        this.emit('ready', info);
      },
      audio: (audio) => this.#onAudio(audio),
      event: (event) => this.#onEvent(event),
    });
    this.#core = new SpeechCore(this.#session.ledger, 's');
    this.#segmenter = new TokenSegmenter(segmenter ?? {}, (text) => this.#onSegment(text));
  }

  /** Connect (with a ticket), start the request; resolves at `ready`. */
  open(): Promise<ReadyInfo> {
    if (this.#ready) return Promise.resolve(this.#ready);
    if (this.#error) return Promise.reject(this.#error);
    const p = new Promise<ReadyInfo>((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
    if (!this.#opened) {
      this.#opened = true;
      this.#session.handle({ type: 'open' });
    }
    return p;
  }

  get info(): ReadyInfo | undefined {
    return this.#ready;
  }

  /** Connections opened so far (1, plus one per resume). */
  get connections(): number {
    return this.#session.connections;
  }

  write(text: string): void {
    if (this.#interrupted || this.#done) return;
    this.#firstTextMs ??= this.#now();
    void this.open().catch(() => undefined);
    this.#segmenter.push(text);
  }

  /** Speak what is buffered now. */
  flush(): void {
    this.#segmenter.flush();
  }

  /** No more text: the request ends once everything is spoken. */
  end(text?: string): void {
    if (text) this.write(text);
    if (this.#interrupted) return;
    void this.open().catch(() => undefined);
    this.#segmenter.end();
    this.#session.handle({ type: 'stop-requested' });
  }

  /**
   * Barge-in: no audio after this. `heard`: where the listener was, so the
   * report cuts the text there, not where the network was: bytes of the
   * audio played (e.g. `PcmPlayer.position.playedFrames` x channels x 2),
   * or `{ ms }` of it; default all the page took from `audio()`.
   */
  interrupt(heard?: number | PlayedPosition): BrowserInterruptReport {
    const buffered = this.#segmenter.clear();
    this.#interrupted = true;
    this.#queue.length = 0;
    this.#session.abort(new AbortError('interrupted'));
    const report = this.#core.heard(typeof heard === 'number' ? { bytes: heard } : heard, this.#ready);
    const segments = this.#core.segments;
    // The segments heard whole, the one the cut fell in, then the rest.
    let i = 0;
    let at = 0;
    const spoken: string[] = [];
    while (i < segments.length && report.segments[at]?.segmentId === segments[i]!.segmentId && report.segments[at]!.complete) {
      spoken.push(segments[i++]!.text);
      at++;
    }
    const partial = i < segments.length && report.segments[at]?.segmentId === segments[i]!.segmentId ? segments[i++]!.text : '';
    this.#finish();
    return { spokenText: spoken.join(''), partialText: partial, heardText: report.heardText, heardConfidence: report.heardConfidence, unspokenText: segments.slice(i).map((s) => s.text).join('') + buffered };
  }

  /** For demos and tests: drop the socket as a network failure would; the request resumes. */
  dropConnection(): void {
    this.#session.dropConnection();
  }

  /** Audio chunks in order, until the request ends (throws its error, if any). */
  async *audio(): AsyncGenerator<BrowserAudio> {
    for (;;) {
      const next = this.#queue.shift();
      if (next) {
        this.#core.delivered(next.segmentId, next.data.byteLength);
        yield next;
        continue;
      }
      if (this.#error && !this.#interrupted) throw this.#error;
      if (this.#done) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  /** The audio bytes as a web stream. */
  get readable(): ReadableStream<Uint8Array> {
    const it = this.audio();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await it.next();
        if (done) controller.close();
        else controller.enqueue(value.data);
      },
      cancel: () => {
        this.interrupt();
      },
    });
  }

  /** Per segment: text, times, units, bytes. */
  get waterfall(): readonly BrowserSegmentWaterfall[] {
    return this.#core.segments.map((s) => s.waterfall);
  }

  /** First audio minus first text, ms. */
  get ttfaMs(): number | undefined {
    return this.#firstAudioMs !== undefined && this.#firstTextMs !== undefined ? this.#firstAudioMs - this.#firstTextMs : undefined;
  }

  get units(): number {
    return this.#units;
  }

  #now(): number {
    return performance.now() - this.#t0;
  }

  #onSegment(text: string): void {
    const segment = this.#core.add(text, (core) => ({ ...core, waterfall: { segmentId: core.segmentId, text, textMs: this.#now(), audioBytes: 0 } }));
    if (text.trim() === '' || countChars(text) > LIMITS.segmentMaxChars) return;
    segment.waterfall.sentMs = this.#now();
    this.#session.handle({ type: 'segment-queued', segmentId: segment.segmentId, text });
  }

  #onAudio(audio: SessionAudio): void {
    if (this.#interrupted) return;
    const segment = this.#core.find(audio.segmentId);
    const info = this.#ready;
    if (segment) {
      segment.waterfall.firstAudioMs ??= this.#now();
      segment.waterfall.audioBytes = segment.audio.emittedBytes;
      if (info) this.#core.meter(segment, audio.data, info.format, info, false);
    }
    if (this.#firstAudioMs === undefined) {
      this.#firstAudioMs = this.#now();
      this.emit('first-audio', { ttfaMs: this.ttfaMs ?? this.#firstAudioMs });
    }
    this.#queue.push({ data: audio.data, segmentId: audio.segmentId, sequence: this.#core.nextSequence() });
    this.#wakeReader();
  }

  #onEvent(event: MachineEvent): void {
    switch (event.type) {
      case 'segment-accepted': {
        const segment = this.#core.find(event.segmentId);
        if (segment) segment.waterfall.acceptedMs = this.#now();
        return;
      }
      case 'segment-completed': {
        const segment = this.#core.find(event.result.segmentId);
        if (segment) {
          const w = segment.waterfall;
          w.completedMs = this.#now();
          w.units = event.result.units;
          w.audioBytes = segment.audio.emittedBytes;
          this.#core.complete(segment);
          if (segment.words) w.words = segment.words;
          this.#units += event.result.units;
          this.emit('segment', w);
        }
        return;
      }
      case 'resumed':
        this.emit('resumed', { attempt: event.attempt, pendingSegments: event.pendingSegments });
        return;
      case 'warning':
        this.emit('warning', { code: event.code, message: event.message });
        return;
      case 'finished':
        this.#finish();
        return;
      case 'failed':
        if (this.#interrupted) return;
        this.#error = event.error;
        for (const w of this.#readyWaiters.splice(0)) w.reject(event.error);
        this.emit('error', event.error);
        this.#finish();
        return;
      default:
        return;
    }
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    for (const w of this.#readyWaiters.splice(0)) w.reject(this.#error ?? new AbortError('ended before ready'));
    this.#wakeReader();
    this.emit('end');
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

export { VoxpipeError };
