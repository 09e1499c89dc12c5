/**
 * What Node plugs into the driver (`driver.ts`): the link (`ws` with a
 * Bearer header through `connect()`, or a pool's connections), the reads
 * (the one HTTP client core, `status-client.ts`), and audio as `Buffer`s.
 */
import { connect, type ConnectionSource, type ConnectOptions } from './connection.js';
import type { Link, LinkHandlers, Reads } from './driver.js';
import { RECOVERY_DEFAULTS } from './budgets.js';
import { fetchRequestStatus, fetchSegmentAudio } from './status-client.js';
import { defined } from '../defined.js';
import { RateLimitError, VoxpipeError } from '../errors.js';
import { deploymentBudget, type Priority, type Seat } from '../budget.js';
import { AttemptOutcome, endpointOf, publish } from '../telemetry/channels.js';
import { CloseCode } from '../protocol/constants.js';
import type { SegmentTransport } from '../transport.js';

export interface NodeLinkOptions {
  /** `{ws_url}` of the realtime service. */
  wsUrl: string;
  /** API key (Bearer header on the handshake). */
  apiKey: string;
  /** Per connection: TCP, handshake and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number | undefined;
  /** Idle time before a keep-alive `ping`; default 15_000 ms. */
  keepAliveMs?: number | undefined;
  /** Where connections come from; default a new `connect()` each time (a pool hands out authenticated ones). */
  connectionSource?: ConnectionSource | undefined;
  /** The generation's place in its deployment's budget (`generationSeat`); without one, connections are not budgeted. */
  seat?: Seat | undefined;
}

/** The budget options of a realtime generation (`budget.ts`). */
export interface RealtimeBudgetOptions {
  /** Generations this process runs at once on the deployment (shared with its REST creations); default unlimited (`VOXPIPE_MAX_CONCURRENCY` when set), learnt from refusals. */
  maxConcurrency?: number | undefined;
  /** Its place in the queue for a slot; default `interactive`. */
  priority?: Priority | undefined;
  /** Longest wait for a slot, ms (then `queue_timeout`); default unbounded. */
  queueTimeoutMs?: number | undefined;
  /** Stops the wait for a slot. */
  signal?: AbortSignal | undefined;
}

/** The seat of one realtime generation in the budget of the deployment at `wsUrl` for `apiKey`. */
export function generationSeat(wsUrl: string, apiKey: string, options: RealtimeBudgetOptions): Seat {
  return deploymentBudget(wsUrl, apiKey, { maxConcurrency: options.maxConcurrency }).seat({ priority: options.priority, queueTimeoutMs: options.queueTimeoutMs, signal: options.signal });
}

/**
 * Refused handshakes (429) one connection waits out before its refusal is
 * the caller's: enough for a deployment whose cap is being learnt, bounded
 * for one that never admits this key.
 */
const MAX_REFUSALS = 20;

/**
 * Connections to `wsUrl` with the key in the handshake's header. With a
 * seat, each connection waits while the deployment is closed by a
 * `Retry-After`, and a handshake refused with 429 gives the seat's slot
 * back (the budget learns the cap) and lines up again, first, without the
 * machine seeing it: the deployment did no work, so nothing is resumed.
 */
export function nodeLink(options: NodeLinkOptions): Link {
  const source = options.connectionSource ?? connect;
  const seat = options.seat;
  const base: Omit<ConnectOptions, 'onEvent' | 'onClose'> = { wsUrl: options.wsUrl, apiKey: options.apiKey, ...defined({ connectTimeoutMs: options.connectTimeoutMs, keepAliveMs: options.keepAliveMs }) };
  return async (handlers) => {
    for (let refusals = 0; ; refusals++) {
      if (seat) {
        const closed = seat.budget.closedForMs();
        if (closed > 0) await new Promise((resolve) => setTimeout(resolve, closed));
        await seat.take();
      }
      try {
        return await source({ ...base, onEvent: handlers.onEvent, onClose: handlers.onClose });
      } catch (err) {
        if (seat && refusals < MAX_REFUSALS && err instanceof RateLimitError) {
          seat.refused(err.retryAfterMs);
          continue;
        }
        // A connection source of one's own may throw anything; the driver hands the machine VoxpipeErrors.
        throw err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
      }
    }
  };
}

/**
 * `link` with each connection attempt published (`attempt:start`, then
 * `attempt:end` once it could not connect or, connected, closed). Only when
 * someone subscribes: otherwise the link itself, and the frames never pass
 * through here.
 */
export function observedLink(link: Link, session: SegmentTransport, requestId: string | undefined, wsUrl: string | undefined): Link {
  let attempts = 0;
  return (handlers) => {
    attempts++;
    if (!publish.attemptStart.hasSubscribers && !publish.attemptEnd.hasSubscribers) return link(handlers);
    const start = { session, requestId, attempt: attempts, server: wsUrl === undefined ? undefined : endpointOf(wsUrl) };
    publish.attemptStart.publish(start);
    const onClose: LinkHandlers['onClose'] = (info) => {
      if (publish.attemptEnd.hasSubscribers) publish.attemptEnd.publish({ ...start, outcome: info.code === CloseCode.normal ? AttemptOutcome.closed : AttemptOutcome.dropped, code: info.code, reason: info.reason, error: info.error });
      handlers.onClose(info);
    };
    return link({ onEvent: handlers.onEvent, onClose }).catch((err: unknown) => {
      if (publish.attemptEnd.hasSubscribers) publish.attemptEnd.publish({ ...start, outcome: AttemptOutcome.failed, code: undefined, reason: undefined, error: err as VoxpipeError });
      throw err;
    });
  };
}

export interface NodeReadsOptions {
  /** `{rt_http_url}` of the realtime service (status route, manifest audio). */
  rtHttpUrl: string;
  /** API key, only to the origin of `rtHttpUrl`. */
  apiKey: string;
  /** Deadline of one status read: the machine's; default `RECOVERY_DEFAULTS.statusTimeoutMs`. */
  statusTimeoutMs?: number | undefined;
  /** Per download of a segment's audio from the manifest; default 10_000 ms. */
  httpTimeoutMs?: number | undefined;
}

/** The reliable machine's reads through the HTTP client core. */
export function nodeReads(options: NodeReadsOptions): Reads {
  const { rtHttpUrl, apiKey } = options;
  // The status read's own deadline is the machine's (`statusTimeoutMs`), so a hung read is also cancelled.
  const statusTimeoutMs = options.statusTimeoutMs ?? RECOVERY_DEFAULTS.statusTimeoutMs;
  const audio = defined({ timeoutMs: options.httpTimeoutMs });
  return {
    status: (requestId, signal) => fetchRequestStatus(requestId, { rtHttpUrl, apiKey, signal, timeoutMs: statusTimeoutMs }),
    segmentAudio: (url, signal) => fetchSegmentAudio(url, { rtHttpUrl, apiKey, signal, ...audio }),
  };
}

/** Audio bytes as a `Buffer` over the same memory (the reader's frames already are one: no second view per frame). */
export function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
