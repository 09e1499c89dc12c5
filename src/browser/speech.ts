/**
 * `BrowserSpeech`: SpeechStream's shape for the web. Text in (`write`,
 * `flush`, `end`), audio out in order (`audio()` async iterator or the
 * `readable` web stream), events, `interrupt()` (barge-in) and the
 * per-segment waterfall. Realtime reliable mode only: the browser has no
 * key for the HTTP fallbacks; resumes use a new ticket each time.
 */
import { Emitter } from './emitter.js';
import { AbortError, VoxpipeError } from '../errors.js';
import type { StartRequest } from '../protocol/events.js';
import { countChars, LIMITS } from '../protocol/limits.js';
import type { MachineEvent } from '../realtime/reliable/types.js';
import { TokenSegmenter, type TokenSegmenterOptions } from '../stream/token-segmenter.js';
import { estimateWordTimings, FrameEnergies, heardAtWord, type WordTiming } from '../stream/word-timing.js';
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
  /** Where each word lies in the segment's audio, estimated once it completed (pcm only; issue 26). */
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
   * `partialText` whose estimated end had played (by `heardBytes`; pcm with
   * the segment complete), else `spokenText` alone.
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

export class BrowserSpeech extends Emitter<BrowserSpeechEvents> {
  readonly requestId: string;
  readonly #t0 = performance.now();
  readonly #session: BrowserSession;
  readonly #segmenter: TokenSegmenter;
  readonly #segments: BrowserSegmentWaterfall[] = [];
  readonly #byId = new Map<string, BrowserSegmentWaterfall>();
  readonly #queue: BrowserAudio[] = [];
  #wake: (() => void) | undefined;
  #ready: ReadyInfo | undefined;
  /** Energy of each pcm segment's audio until it completes, for its word timings (not the PCM itself). */
  readonly #energies = new Map<string, FrameEnergies>();
  #readyWaiters: { resolve: (r: ReadyInfo) => void; reject: (e: VoxpipeError) => void }[] = [];
  #opened = false;
  #firstTextMs: number | undefined;
  #firstAudioMs: number | undefined;
  #done = false;
  #error: VoxpipeError | undefined;
  #interrupted = false;
  #next = 0;
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
   * Barge-in: no audio after this. `heardBytes`: how much of the audio the
   * listener actually heard (e.g. `PcmPlayer.position.playedFrames` x
   * channels x 2), so the report cuts the text where the listener was, not
   * where the network was.
   */
  interrupt(heardBytes?: number): BrowserInterruptReport {
    const buffered = this.#segmenter.clear();
    this.#interrupted = true;
    this.#queue.length = 0;
    this.#session.abort(new AbortError('interrupted'));
    let budget = heardBytes ?? Infinity;
    const spoken: string[] = [];
    const unspoken: string[] = [];
    let partial = '';
    let partialHeard = '';
    let heardConfidence = 1;
    for (const s of this.#segments) {
      const complete = s.completedMs !== undefined;
      if (s.audioBytes > 0 && complete && budget >= s.audioBytes) {
        spoken.push(s.text);
        budget -= s.audioBytes;
      } else if (s.audioBytes > 0 && budget > 0 && partial === '') {
        partial = s.text;
        const info = this.#ready;
        if (s.words && info && Number.isFinite(budget)) {
          const cut = heardAtWord(s.words, (budget / (info.sampleRate * info.channels * 2)) * 1000, s.text.length);
          partialHeard = s.text.slice(0, cut.chars);
          heardConfidence = cut.confidence;
        }
        budget = 0;
      } else unspoken.push(s.text);
    }
    this.#finish();
    const spokenText = spoken.join('');
    return { spokenText, partialText: partial, heardText: spokenText + partialHeard, heardConfidence, unspokenText: unspoken.join('') + buffered };
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
    return this.#segments;
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
    const segmentId = `s-${this.#next++}`;
    const w: BrowserSegmentWaterfall = { segmentId, text, textMs: this.#now(), audioBytes: 0 };
    this.#segments.push(w);
    this.#byId.set(segmentId, w);
    if (text.trim() === '' || countChars(text) > LIMITS.segmentMaxChars) return;
    w.sentMs = this.#now();
    this.#session.handle({ type: 'segment-queued', segmentId, text });
  }

  #onAudio(audio: SessionAudio): void {
    if (this.#interrupted) return;
    const w = this.#byId.get(audio.segmentId);
    if (w) {
      w.firstAudioMs ??= this.#now();
      w.audioBytes += audio.data.byteLength;
      const info = this.#ready;
      if (info?.format === 'pcm') {
        let energies = this.#energies.get(audio.segmentId);
        if (!energies) this.#energies.set(audio.segmentId, (energies = new FrameEnergies(info.sampleRate, info.channels)));
        energies.push(audio.data);
      }
    }
    if (this.#firstAudioMs === undefined) {
      this.#firstAudioMs = this.#now();
      this.emit('first-audio', { ttfaMs: this.ttfaMs ?? this.#firstAudioMs });
    }
    this.#queue.push({ data: audio.data, segmentId: audio.segmentId, sequence: audio.sequence });
    this.#wakeReader();
  }

  #onEvent(event: MachineEvent): void {
    switch (event.type) {
      case 'segment-accepted': {
        const w = this.#byId.get(event.segmentId);
        if (w) w.acceptedMs = this.#now();
        return;
      }
      case 'segment-completed': {
        const w = this.#byId.get(event.result.segmentId);
        if (w) {
          w.completedMs = this.#now();
          w.units = event.result.units;
          this.#estimateWords(w);
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

  /** Word timings of a completed pcm segment, from its text and the energy of its audio (dropped after). */
  #estimateWords(w: BrowserSegmentWaterfall): void {
    const energies = this.#energies.get(w.segmentId);
    this.#energies.delete(w.segmentId);
    if (!energies || this.#ready?.format !== 'pcm') return;
    w.words = estimateWordTimings(w.text, energies);
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
