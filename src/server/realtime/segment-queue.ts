/**
 * Segments of one request generate one at a time, in order: a flush (or a
 * committed input) that arrives while one generates waits here. Each job's
 * units are already reserved; the queue commits them at the job's first
 * audio frame and releases them when the job ends without audio.
 */
import type { AudioFormat } from '../../protocol/audio.js';
import type { SynthesisOptions } from '../engines/types.js';
import { pumpSegment, type PumpResult, type SegmentEncoder } from './audio-pump.js';
import type { Reservation } from './billing.js';
import { RealtimeFailure } from './failure.js';
import type { SessionPort } from './session-port.js';
import { ErrorCode } from '../../protocol/constants.js';

/** One segment waiting for, or in, generation. */
export interface SegmentJob {
  segmentId: string;
  /** Order of the segment within its request, from 0. */
  index: number;
  text: string;
  characters: number;
  reservation: Reservation;
  /** event_id of the flush (reliable) or input (simple) that committed it. */
  inReplyTo: string | undefined;
  /** Set when its first audio frame went out (its units are then committed). */
  hadAudio: boolean;
  /** Set when its hold was given back. */
  released: boolean;
}

/** What the mode does at each step of a job. */
export interface SegmentHooks {
  onFirstAudio(job: SegmentJob): void;
  onCompleted(job: SegmentJob, result: PumpResult): void;
  /** The queue ran dry after finishing a job. */
  onIdle(): void;
}

/** Everything a job's generation needs from the request. */
export interface QueueSetup {
  requestId: string;
  format: AudioFormat;
  /** The request's encoder on this connection, made when its first job starts (the job decides about stream headers). */
  encoder(first: SegmentJob): SegmentEncoder;
  synthesis: Omit<SynthesisOptions, 'signal'>;
  /** Keep each segment's frames for the manifest (reliable mode). */
  keepAudio: boolean;
}

/** Runs a request's segments one at a time through the audio pump. */
export class SegmentQueue {
  readonly #jobs: SegmentJob[] = [];
  #current: SegmentJob | undefined;
  #running = false;
  #aborted = false;
  #encoder: SegmentEncoder | undefined;

  constructor(private readonly port: SessionPort, private readonly setup: QueueSetup, private readonly hooks: SegmentHooks) {}

  /** A job is generating or waiting. */
  get busy(): boolean {
    return this.#current !== undefined || this.#jobs.length > 0;
  }

  /** Segment ids waiting or generating, in order. */
  get pendingIds(): string[] {
    return [...(this.#current ? [this.#current.segmentId] : []), ...this.#jobs.map((j) => j.segmentId)];
  }

  enqueue(job: SegmentJob): void {
    if (this.#aborted) return;
    this.#jobs.push(job);
    if (!this.#running) void this.#run();
  }

  /** Stop generating and give back the holds of every job that has sent no audio. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    for (const job of [this.#current, ...this.#jobs.splice(0)]) if (job) this.#release(job);
  }

  #release(job: SegmentJob): void {
    if (job.hadAudio || job.released) return;
    job.released = true;
    this.port.billing.release(job.reservation);
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      for (let job = this.#jobs.shift(); job && !this.#aborted; job = this.#jobs.shift()) {
        this.#current = job;
        let result: PumpResult;
        try {
          result = await this.#generate(job);
        } catch (err) {
          if (this.#aborted) return;
          this.#release(job);
          const failure = err instanceof RealtimeFailure ? err : new RealtimeFailure(ErrorCode.internalError, 'generation failed unexpectedly', { terminal: true, stage: 'generation' });
          this.port.fail(failure, job.inReplyTo);
          return;
        } finally {
          this.#current = undefined;
        }
        if (this.#aborted) return;
        this.hooks.onCompleted(job, result);
        if (this.#jobs.length === 0) this.hooks.onIdle();
      }
    } finally {
      this.#running = false;
    }
  }

  #generate(job: SegmentJob): Promise<PumpResult> {
    const { ctx } = this.port;
    const fault = ctx.faults.take('engineFailure', (f) => f.match === undefined || job.text.includes(f.match));
    return pumpSegment({
      engine: ctx.engine,
      text: job.text,
      synthesis: this.setup.synthesis,
      encoder: (this.#encoder ??= this.setup.encoder(job)),
      signal: this.port.signal,
      keepFrames: this.setup.keepAudio,
      latencyMs: () => ctx.faults.latencyMs,
      failAfterChunks: fault ? (fault.afterChunks ?? 0) : undefined,
      waitWritable: () => this.port.waitWritable(),
      emit: (frame) => {
        if (!job.hadAudio) {
          job.hadAudio = true;
          // Spec 6 rule 4: committed when the first valid audio is delivered.
          this.port.billing.commit(job.reservation);
          this.hooks.onFirstAudio(job);
        }
        this.port.sendAudio({ request_id: this.setup.requestId, segment_id: job.segmentId, audio: frame, format: this.setup.format });
      },
    });
  }
}
