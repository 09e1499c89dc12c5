/**
 * `NodeSession`: a `SegmentTransport` over the driver (`driver.ts`), what
 * both Node modes share: the lifecycle is the driver's, the events are
 * eventemitter3's (`TransportEvents`). `ReliableSession` and `SimpleSession`
 * add only their options, their machine and their summary.
 */
import { EventEmitter } from 'eventemitter3';
import type { VoxpipeError } from '../errors.js';
import { TransportName, type TransportAudio, type HeardAudio, type ReadyInfo, type SegmentInput, type SegmentTransport, type TransportEvents, type TransportSummary } from '../transport.js';
import type { DriverAudio, DriverEvent, DrivenMachine } from './driver.js';
import { TransportDriver, type TransportDriverOptions, type TransportOwner } from './transport-driver.js';
import { asBuffer, observedLink } from './node-link.js';
import type { RealtimeSegmentResult, SessionTimings } from './waterfall.js';

export abstract class NodeSession<M extends DrivenMachine, Summary extends TransportSummary> extends EventEmitter<TransportEvents> implements SegmentTransport {
  readonly name = TransportName.realtime;
  protected readonly driver: TransportDriver<M, Summary>;

  /** `wsUrl`: where the link connects, for the connection attempts' telemetry (`attempt:start`). */
  constructor(options: TransportDriverOptions<M> & { wsUrl?: string | undefined }) {
    super();
    // Attempts are published here, on the Node side: the driver goes into the browser bundle, which has no diagnostics_channel.
    const link = observedLink(options.link, this, options.requestId, options.wsUrl);
    this.driver = new TransportDriver({ ...options, link }, new NodeSession.#Owner<Summary>(this));
  }

  /** Session-level times (open, authenticated, ready, first audio). */
  get timings(): Readonly<SessionTimings> {
    return this.driver.timings;
  }

  /** The stream reading this session keeps the one ledger: hand the machine's audio to it raw, and ask it what was heard. Before `open`. */
  bindLedger(ledger: HeardAudio): void {
    this.driver.bindLedger(ledger);
  }

  open(signal?: AbortSignal): Promise<ReadyInfo> {
    return this.driver.open(signal);
  }

  send(segment: SegmentInput): Promise<RealtimeSegmentResult> {
    return this.driver.send(segment);
  }

  end(): Promise<Summary> {
    return this.driver.end();
  }

  async abort(reason?: VoxpipeError): Promise<void> {
    this.driver.abort(reason);
  }

  pause(): void {
    this.driver.pause();
  }

  resume(): void {
    this.driver.resume();
  }

  pending(): SegmentInput[] {
    return this.driver.machine.pending();
  }

  queued(): Promise<void> | undefined {
    return this.driver.queued;
  }

  /** What `end()` resolves with, once the machine finished. */
  protected abstract summarize(): Summary;

  /**
   * The driver's owner: a class in this class's body (so it may reach the
   * session's protected members) rather than an object of closures, and
   * not the session itself (its methods would be the transport's API).
   */
  static readonly #Owner = class<Summary extends TransportSummary> implements TransportOwner<Summary> {
    constructor(private readonly s: NodeSession<DrivenMachine, Summary>) {}
    ready(info: ReadyInfo): void {
      this.s.emit('ready', info);
    }
    audio(chunk: DriverAudio): void {
      // The reader's frames already are Buffers (`flat-frame.ts`): a second view per frame is a cost, not a safety.
      chunk.data = asBuffer(chunk.data);
      this.s.emit('audio', chunk as TransportAudio);
    }
    discontinuity(segmentId: string, droppedBytes: number): void {
      this.s.emit('discontinuity', { segmentId, droppedBytes });
    }
    segmentCompleted(result: RealtimeSegmentResult): void {
      this.s.emit('segment-completed', result);
    }
    summarize(): Summary {
      return this.s.summarize();
    }
    event(event: DriverEvent): void {
      const s = this.s;
      switch (event.type) {
        case 'resumed':
          s.emit('resumed', { attempt: event.attempt, requestId: event.requestId, pendingSegments: event.pendingSegments });
          return;
        case 'retry':
          s.emit('retry', { attempt: event.attempt, error: event.error, delayMs: event.delayMs });
          return;
        case 'segment-accepted':
          s.emit('segment-accepted', event.segmentId);
          return;
        case 'usage': {
          const { type: _type, ...usage } = event;
          s.emit('usage', usage);
          return;
        }
        case 'warning':
          s.emit('warning', { code: event.code, message: event.message });
          return;
      }
    }
  };
}
