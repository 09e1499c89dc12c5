/**
 * A scripted SegmentTransport for SpeechStream unit tests: each segment's
 * audio is its text's UTF-8 bytes (so output can be checked exactly), sent in
 * chunks of `chunkBytes` on the next ticks, tagged as one attempt per
 * segment (`TransportAudio`). It can fail at a chosen segment.
 */
import { EventEmitter } from 'eventemitter3';
import { nextAttemptTag, type ReadyInfo, type SegmentInput, type SegmentResult, type SegmentTransport, type TransportEvents, type TransportName, type TransportSummary } from '../../src/transport.js';
import { VoxpipeError } from '../../src/errors.js';

export interface FakeOptions {
  name?: TransportName;
  chunkBytes?: number;
  /** Fail when this segment index (0-based, across sends) starts, after `failAfterBytes` bytes of it. */
  failAtSegment?: number;
  failAfterBytes?: number;
  /** Say in each result how many bytes the segment carries (`expectedBytes`, as a deployment's count). */
  statesBytes?: boolean;
  /** Leave out the last chunk of this segment index (the count still says the whole). */
  withholdAtSegment?: number;
  /** Sample rate the audio chunks carry (what the audio says); default 24_000, as `ready` announces. */
  chunkRate?: number;
  /** Format the chunks say; default `pcm` (`mp3`: a cut segment restarts on a new attempt). */
  format?: 'pcm' | 'mp3';
}

export class FakeTransport extends EventEmitter<TransportEvents> implements SegmentTransport {
  readonly name: TransportName;
  readonly sent: SegmentInput[] = [];
  paused = false;
  pauses = 0;
  aborted = false;
  #queue: { seg: SegmentInput; resolve: (r: SegmentResult) => void; reject: (e: Error) => void }[] = [];
  #running = false;
  #failed: Error | undefined;
  #endWaiters: (() => void)[] = [];
  #resumeWaiters: (() => void)[] = [];
  readonly results: SegmentResult[] = [];

  constructor(private readonly opts: FakeOptions = {}) {
    super();
    this.name = opts.name ?? 'realtime';
  }

  async open(): Promise<ReadyInfo> {
    const info: ReadyInfo = { transport: this.name, mode: 'reliable', requestId: 'req-fake', model: 'm', voiceId: 'v', format: 'pcm', sampleRate: 24_000, channels: 1, bitDepth: 16 };
    this.emit('ready', info);
    return info;
  }

  send(seg: SegmentInput): Promise<SegmentResult> {
    this.sent.push(seg);
    if (this.#failed) return Promise.reject(this.#failed);
    return new Promise((resolve, reject) => {
      this.#queue.push({ seg, resolve, reject });
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    while (this.#queue.length > 0 && !this.aborted && !this.#failed) {
      const item = this.#queue[0]!;
      const bytes = Buffer.from(item.seg.text, 'utf8');
      const index = this.sent.indexOf(item.seg);
      const chunk = this.opts.chunkBytes ?? 4;
      const attempt = nextAttemptTag();
      for (let off = 0; off < bytes.length; off += chunk) {
        if (this.opts.failAtSegment === index && off >= (this.opts.failAfterBytes ?? 0)) {
          this.#failed = new VoxpipeError('provider_unavailable', 'scripted failure');
          for (const q of this.#queue) q.reject(this.#failed);
          this.#queue = [];
          this.#running = false;
          this.#endWaiters.forEach((w) => w());
          return;
        }
        while (this.paused) await new Promise<void>((r) => this.#resumeWaiters.push(r));
        await new Promise((r) => setImmediate(r));
        if (this.aborted) break;
        if (this.opts.withholdAtSegment === index && off + chunk >= bytes.length) continue;
        this.emit('audio', { data: bytes.subarray(off, off + chunk), segmentId: item.seg.segmentId, attempt, offset: off, format: this.opts.format ?? 'pcm', sampleRate: this.opts.chunkRate ?? 24_000, channels: 1, bitDepth: 8 });
      }
      this.#queue.shift();
      const result: SegmentResult = { segmentId: item.seg.segmentId, units: item.seg.text.length, audioBytes: bytes.length, ...(this.opts.statesBytes && { expectedBytes: bytes.length }), transport: this.name };
      this.results.push(result);
      this.emit('segment-completed', result);
      item.resolve(result);
    }
    this.#running = false;
    this.#endWaiters.forEach((w) => w());
    this.#endWaiters = [];
  }

  async end(): Promise<TransportSummary> {
    while (this.#running || this.#queue.length > 0) await new Promise<void>((r) => this.#endWaiters.push(r));
    if (this.#failed) throw this.#failed;
    return { requestId: 'req-fake', units: this.results.reduce((n, r) => n + r.units, 0), retries: 0, resumed: 0, segments: this.results };
  }

  async abort(): Promise<void> {
    this.aborted = true;
    this.#queue = [];
    this.resume();
  }

  pause(): void {
    if (!this.paused) this.pauses++;
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.#resumeWaiters.splice(0).forEach((r) => r());
  }

  pending(): SegmentInput[] {
    return this.#queue.map((q) => q.seg);
  }
}
