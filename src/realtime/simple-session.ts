/**
 * `SimpleSession`: the simple-mode `SegmentTransport` (spec 3.4b, 4.10).
 *
 * Simple mode carries one generation per connection and commits once: the
 * text of every `send()` goes out as `input` frames with `commit: false`,
 * and `end()` sends the last one with `commit: true`. So simple mode speaks
 * only after `end()`: its protocol has no per-segment commit followed by a
 * later finish (a committed segment that leaves nothing queued finishes the
 * request). Use reliable mode (`ReliableSession`) to hear each segment as
 * soon as it is complete, and for resume: simple mode never retries.
 *
 * The whole request holds at most 10,000 characters. Per-segment results
 * are known only at `finish`: every `send()` resolves then, the last one
 * carrying the request's units and audio bytes (and `expectedBytes` when the
 * server states them), the others zero. The request's audio is one
 * generation: it is tagged with the last part, the one that committed it.
 *
 * Every decision is the sans-IO `SimpleMachine`'s (`simple/machine.ts`,
 * transitions in test/realtime/simple-machine-transitions.md), the
 * lifecycle the driver's (`driver.ts`); this class adds the options and the
 * summary.
 */
import type { StartRequest } from '../protocol/events.js';
import type { TransportSummary } from '../transport.js';
import { checkBudgets } from './budgets.js';
import type { ConnectionSource } from './connection.js';
import { generationSeat, nodeLink, type RealtimeBudgetOptions } from './node-link.js';
import { NodeSession } from './node-session.js';
import { SimpleMachine } from './simple/machine.js';
import type { SessionTimings } from './waterfall.js';
import { defined } from '../defined.js';

export interface SimpleSessionOptions extends Omit<RealtimeBudgetOptions, 'signal'> {
  /** `{ws_url}` of the realtime service. */
  wsUrl: string;
  /** API key (Bearer header on the handshake). */
  apiKey: string;
  /** Generation parameters of `start.request`. */
  request: StartRequest;
  /** Correlation id sent as `start.request_id`; default: the server makes one. */
  requestId?: string;
  /** TCP, handshake and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number;
  /** Idle time before a keep-alive `ping`; default 15_000 ms. */
  keepAliveMs?: number;
  /** `audio` frames held while an earlier `sequence` is missing; default 16. */
  reorderWindowFrames?: number;
  /** `start` to `ready`; default 10_000 ms. */
  startTimeoutMs?: number;
  /**
   * After the commit, longest quiet before failing with a retryable
   * TimeoutError; default 5_000 ms (`RECOVERY_DEFAULTS`). Only audio,
   * `finish` and `error` are progress: `pong`s, warnings and other events
   * are not. Not while paused.
   */
  progressTimeoutMs?: number;
  /** Aborts the session (as `abort()`). */
  signal?: AbortSignal;
  /** Where connections come from; default a new `connect()` each time (a pool hands out authenticated ones). */
  connectionSource?: ConnectionSource;
}

/** What `end()` resolves with. */
export interface SimpleSummary extends TransportSummary {
  /** Audio bytes of the request. */
  audioBytes: number;
  timings: SessionTimings;
}

export class SimpleSession extends NodeSession<SimpleMachine, SimpleSummary> {
  constructor(options: SimpleSessionOptions) {
    checkBudgets(options); // every budget given, also those simple mode has no use for: a typo is never silent
    const { request, requestId, startTimeoutMs, progressTimeoutMs, reorderWindowFrames } = options;
    const seat = generationSeat(options.wsUrl, options.apiKey, options);
    super({
      machine: (port) => new SimpleMachine({ request, ...defined({ requestId, startTimeoutMs, progressTimeoutMs, reorderWindowFrames }) }, port),
      link: nodeLink({ ...options, seat }),
      seat,
      requestId,
      wsUrl: options.wsUrl,
      signal: options.signal,
    });
  }

  protected summarize(): SimpleSummary {
    const s = this.driver.machine.summary!;
    return { requestId: s.requestId, units: s.units, retries: 0, resumed: 0, segments: s.segments.map((r) => this.driver.result(r)), audioBytes: s.audioBytes, timings: { ...this.driver.timings } };
  }
}
