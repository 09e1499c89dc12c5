/**
 * `ReliableSession`: the reliable-mode `SegmentTransport` in Node. The
 * `ReliableMachine` decides, the driver (`../driver.ts`) keeps the
 * lifecycle, and what Node plugs in is `node-link.ts`'s: `ws` with a Bearer
 * header (or a pool's connections) and the status route and manifest audio
 * through the HTTP client core. This class adds the options, the machine
 * and the summary.
 *
 * Audio: the machine hands over raw bytes tagged with their attempt and
 * offset; the session passes them on as `TransportAudio` for the stream's
 * one ledger (`bindLedger`, which SpeechStream calls), or, bound to nobody,
 * through the driver's own ledger, so a resume still reaches a direct
 * listener as one unbroken stream.
 */
import { randomUUID } from 'node:crypto';
import { defined } from '../../defined.js';
import { OverloadWatch, serverActivity } from '../budgets.js';
import type { ConnectionSource } from '../connection.js';
import { generationSeat, nodeLink, nodeReads, type RealtimeBudgetOptions } from '../node-link.js';
import { NodeSession } from '../node-session.js';
import type { RealtimeSegmentResult, SessionTimings } from '../waterfall.js';
import { ReliableMachine } from './machine.js';
import type { MachineOptions, PartialSegmentPolicy } from './types.js';
import type { TransportSummary } from '../../transport.js';

/**
 * The machine's options (`MachineOptions`: each recovery bound and its
 * default is documented there, once) plus what the shell needs to reach the
 * service.
 */
export interface ReliableSessionOptions extends Omit<MachineOptions, 'requestId' | 'eventIdPrefix'>, Omit<RealtimeBudgetOptions, 'signal'> {
  /** `{ws_url}` of the realtime service. */
  wsUrl: string;
  /** `{rt_http_url}` of the realtime service (status route, manifest audio). */
  rtHttpUrl: string;
  /** API key (Bearer header on the handshake and the HTTP reads). */
  apiKey: string;
  /** Idempotency key of this generation; default a random UUID. Reused on every resume. */
  requestId?: string;
  /** Per connection: TCP, handshake and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number;
  /** Idle time before a keep-alive `ping`; default 15_000 ms. */
  keepAliveMs?: number;
  /** Per download of a segment's audio from the manifest; default 10_000 ms (status reads have `statusTimeoutMs`). */
  httpTimeoutMs?: number;
  /** Aborts the session (as `abort()`). */
  signal?: AbortSignal;
  /** Where connections come from; default a new `connect()` each time (a pool hands out authenticated ones). */
  connectionSource?: ConnectionSource;
}

/** What `end()` resolves with. */
export interface ReliableSummary extends TransportSummary {
  segments: RealtimeSegmentResult[];
  /** Reads of the request-status route. */
  statusReads: number;
  timings: SessionTimings;
}

export class ReliableSession extends NodeSession<ReliableMachine, ReliableSummary> {
  readonly requestId: string;

  constructor(options: ReliableSessionOptions) {
    const requestId = options.requestId ?? randomUUID();
    // The machine's options pass through by construction: all but what this shell itself uses.
    const { wsUrl, rtHttpUrl, apiKey, requestId: _requestId, connectTimeoutMs, keepAliveMs, httpTimeoutMs, signal, connectionSource, overload, maxConcurrency, priority, queueTimeoutMs, ...machine } = options;
    const machineOptions: MachineOptions = {
      ...defined(machine),
      requestId,
      eventIdPrefix: `ev-${randomUUID().slice(0, 8)}`,
      overload: overload ?? new OverloadWatch(serverActivity(wsUrl)),
    };
    // One slot of the deployment's budget for the whole request: every resume reconnects on it.
    const seat = generationSeat(wsUrl, apiKey, { maxConcurrency, priority, queueTimeoutMs, signal });
    super({
      machine: (port) => new ReliableMachine(machineOptions, port),
      link: nodeLink({ wsUrl, apiKey, connectTimeoutMs, keepAliveMs, connectionSource, seat }),
      seat,
      reads: nodeReads({ rtHttpUrl, apiKey, statusTimeoutMs: options.statusTimeoutMs, httpTimeoutMs }),
      requestId,
      wsUrl,
      partialPolicy: options.onPartialSegment,
      signal,
    });
    this.requestId = requestId;
  }

  /** The `onPartialSegment` policy in force once `ready` arrived. */
  get partialPolicy(): PartialSegmentPolicy {
    return this.driver.machine.partialPolicy;
  }

  audioArrived(segmentId: string): boolean {
    return this.driver.machine.audioArrived(segmentId);
  }

  /** Retries, resumes and status reads so far. */
  summary(): ReliableSummary {
    return this.driver.summary ?? this.summarize();
  }

  protected summarize(): ReliableSummary {
    const s = this.driver.machine.summary();
    return {
      requestId: s.requestId,
      units: s.units,
      retries: s.retries,
      resumed: s.resumed,
      statusReads: s.statusReads,
      segments: s.segments.map((r) => this.driver.result(r)),
      timings: { ...this.driver.timings },
    };
  }
}
