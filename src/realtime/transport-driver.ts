/**
 * The driver (`driver.ts`) with the lifecycle a `SegmentTransport` offers,
 * for the Node sessions (`node-session.ts`): the waiters of `open()`, each
 * `send()` and `end()`, the abort signal, each segment's waterfall and
 * result, the summary. The browser facade drives the machine with inputs
 * and listens to its events, so its bundle carries none of this.
 */
import { AbortError, ConnectionError, VoxpipeError } from '../errors.js';
import type { Seat } from '../budget.js';
import { CloseCode, ErrorCode } from '../protocol/constants.js';
import { TransportName, type ReadyInfo, type SegmentInput } from '../transport.js';
import { Driver, type DrivenMachine, type DriverEvent, type DriverOptions, type DriverOwner } from './driver.js';
import type { MachineSegmentResult } from './reliable/types.js';
import { validateSegment } from './session-util.js';
import { markStage, type RealtimeSegmentResult, type WireWaterfall } from './waterfall.js';

/** The owner of a `TransportDriver`: results and the summary too. */
export interface TransportOwner<Summary> extends DriverOwner {
  segmentCompleted(result: RealtimeSegmentResult): void;
  /** What `end()` resolves with, once the machine finished. */
  summarize(): Summary;
}

export interface TransportDriverOptions<M extends DrivenMachine> extends DriverOptions<M> {
  /** Aborts the request (as `abort()`). */
  signal?: AbortSignal | undefined;
  /**
   * The request's place in its deployment's budget (`budget.ts`): `open()`
   * waits for a slot before the machine connects, and the slot is held until
   * the request ends, resumes included; absent, nothing waits.
   */
  seat?: Seat | undefined;
}

/** A promise with its resolve and reject at hand. */
interface Waiter<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function waiter<T>(): Waiter<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A segment sent: its waterfall, and the waiter of its `send()` until it completed. */
interface Sent {
  waterfall: WireWaterfall;
  waiter: Waiter<RealtimeSegmentResult> | undefined;
}

export class TransportDriver<M extends DrivenMachine, Summary> extends Driver<M> {
  readonly #owner: TransportOwner<Summary>;
  readonly #segments = new Map<string, Sent>();
  #openWaiter: Waiter<ReadyInfo> | undefined;
  #endWaiter: Waiter<Summary> | undefined;
  #summary: Summary | undefined;
  #ended = false;
  #error: VoxpipeError | undefined;
  #unlinkSignal: (() => void) | undefined;
  readonly #seat: Seat | undefined;

  constructor(options: TransportDriverOptions<M>, owner: TransportOwner<Summary>) {
    super(options, owner);
    this.#owner = owner;
    this.#seat = options.seat;
    if (options.signal) this.#linkSignal(options.signal);
  }

  /** While the request waits for a slot of its deployment's budget: settles when that wait ends. */
  get queued(): Promise<void> | undefined {
    return this.#seat?.waiting;
  }

  /** The summary, once the machine finished. */
  get summary(): Summary | undefined {
    return this.#summary;
  }

  open(signal?: AbortSignal): Promise<ReadyInfo> {
    if (this.#openWaiter) return this.#openWaiter.promise;
    this.#openWaiter = waiter();
    if (this.#ended) {
      // Nothing left to open: the request failed, or ended (`end()` with nothing sent).
      this.#openWaiter.reject(this.#error ?? new VoxpipeError(ErrorCode.invalidState, 'open() after the request ended'));
    } else {
      if (signal) this.#linkSignal(signal);
      this.timings.openMs ??= performance.now();
      const seat = this.#seat;
      if (!seat) this.machine.handle({ type: 'open' });
      else {
        // The slot first; a wait that ends otherwise (queue_timeout, abort) fails the request as it is.
        seat.take().then(
          () => {
            if (!this.#ended) this.machine.handle({ type: 'open' });
          },
          (err: unknown) => {
            if (!this.#ended) this.abort(err as VoxpipeError);
          },
        );
      }
    }
    return this.#openWaiter.promise;
  }

  send(segment: SegmentInput): Promise<RealtimeSegmentResult> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#ended || this.#endWaiter) return Promise.reject(new VoxpipeError(ErrorCode.invalidState, 'send() after end()'));
    let refused: VoxpipeError | undefined;
    try {
      refused = this.machine.refusal ? this.machine.refusal(segment) : (validateSegment(segment), undefined);
    } catch (err) {
      refused = err as VoxpipeError; // validateSegment throws only these
    }
    if (!refused && this.#segments.has(segment.segmentId)) refused = new VoxpipeError(ErrorCode.idempotencyConflict, `segment ${segment.segmentId} was already sent`);
    if (refused) return Promise.reject(refused);
    const w = waiter<RealtimeSegmentResult>();
    this.#segments.set(segment.segmentId, { waterfall: { queuedMs: performance.now() }, waiter: w });
    this.machine.handle({ type: 'segment-queued', segmentId: segment.segmentId, text: segment.text });
    return w.promise;
  }

  end(): Promise<Summary> {
    if (this.#endWaiter) return this.#endWaiter.promise;
    this.#endWaiter = waiter();
    if (this.#error) this.#endWaiter.reject(this.#error);
    else if (this.#ended) this.#endWaiter.resolve(this.#summary as Summary);
    else this.machine.handle({ type: 'stop-requested' });
    return this.#endWaiter.promise;
  }

  /** A completed segment as a transport reports it. */
  result(r: MachineSegmentResult): RealtimeSegmentResult {
    const result: RealtimeSegmentResult = { segmentId: r.segmentId, units: r.units, audioBytes: r.audioBytes, transport: TransportName.realtime, waterfall: this.#segments.get(r.segmentId)?.waterfall ?? {} };
    if (r.expectedBytes !== undefined) result.expectedBytes = r.expectedBytes;
    return result;
  }

  override emit(event: DriverEvent): void {
    // Closed with 1013, the deployment said it is overloaded (spec 7.7): every generation of this process to it
    // waits this backoff before connecting, not only this one (and before anyone hears of the retry).
    if (event.type === 'retry' && this.#seat && event.error instanceof ConnectionError && event.error.closeCode === CloseCode.tryAgainLater) this.#seat.budget.pause(event.delayMs);
    super.emit(event);
    switch (event.type) {
      case 'ready':
        this.#openWaiter?.resolve(this.ready!);
        return;
      case 'mark': {
        const waterfall = this.#segments.get(event.segmentId)?.waterfall;
        if (waterfall) markStage(waterfall, event.stage, performance.now());
        return;
      }
      case 'segment-completed': {
        const result = this.result(event.result);
        this.#owner.segmentCompleted(result);
        const sent = this.#segments.get(result.segmentId);
        sent?.waiter?.resolve(result);
        if (sent) sent.waiter = undefined;
        return;
      }
      case 'finished':
        this.#ended = true;
        this.#seat?.release();
        this.#unlinkSignal?.();
        this.#summary = this.#owner.summarize();
        this.#endWaiter?.resolve(this.#summary);
        return;
      case 'failed':
        this.#ended = true;
        this.#seat?.release();
        this.#unlinkSignal?.();
        this.#error = event.error;
        this.#openWaiter?.reject(event.error);
        for (const sent of this.#segments.values()) {
          sent.waiter?.reject(event.error);
          sent.waiter = undefined;
        }
        this.#endWaiter?.reject(event.error);
        return;
    }
  }

  #linkSignal(signal: AbortSignal): void {
    const onAbort = (): void => this.abort(new AbortError('aborted by signal', { cause: signal.reason }));
    if (signal.aborted) {
      queueMicrotask(onAbort);
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    const previous = this.#unlinkSignal;
    this.#unlinkSignal = () => {
      previous?.();
      signal.removeEventListener('abort', onAbort);
    };
  }
}
