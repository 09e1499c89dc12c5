/**
 * The `async` transport, for long segments: one TTS job per segment
 * (`createOrRecover`, so a lost 202 never makes a second job), polled until
 * terminal, then its audio downloaded with the key. A job that fails or
 * only partly succeeds fails the segment (partial audio would drop text), so
 * a failover regenerates it whole.
 */
import { TaskStatus, JobFailedError } from '../../http/task.js';
import type { PollOptions } from '../../http/job-handle.js';
import { TtsJobs, type TtsJob, type TtsJobFamily } from '../../http/resources/jobs.js';
import type { SegmentInput, TransportName } from '../../transport.js';
import { HttpSegmentTransport, type FetchedSegment, type HttpTransportOptions } from './http-base.js';

export interface AsyncTransportOptions extends HttpTransportOptions {
  /** Route family; default `jobs` (`/speech/tts/jobs`). */
  family?: TtsJobFamily;
  /** Polling of each job; default 3 s growing to 5 s (spec 8). */
  poll?: PollOptions<TtsJob>;
}

export class AsyncTransport extends HttpSegmentTransport {
  readonly name: TransportName = 'async';
  readonly #jobs: TtsJobs;
  readonly #poll: PollOptions<TtsJob>;

  constructor(options: AsyncTransportOptions) {
    super(options);
    this.#jobs = new TtsJobs(this.http, options.family === undefined ? {} : { family: options.family });
    this.#poll = options.poll ?? {};
  }

  protected async fetchSegment(segment: SegmentInput, signal: AbortSignal): Promise<FetchedSegment> {
    const { job } = await this.#jobs.createOrRecover(this.ttsFields(segment.text), { signal, onRetry: this.onRetry });
    const done = await this.#jobs.handle(job, this.#poll).wait({ signal });
    if (done.status !== TaskStatus.succeeded) throw new JobFailedError(done);
    const file = await this.#jobs.download(done, { signal });
    return { data: file.data, contentType: file.contentType, headers: file.headers, units: done.creditsCharged ?? job.creditsCharged, quotaRemaining: job.quotaRemaining };
  }
}
