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
import { VoxpipeError } from '../errors.js';
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
}

/** Connections to `wsUrl` with the key in the handshake's header. */
export function nodeLink(options: NodeLinkOptions): Link {
  const source = options.connectionSource ?? connect;
  const base: Omit<ConnectOptions, 'onEvent' | 'onClose'> = { wsUrl: options.wsUrl, apiKey: options.apiKey, ...defined({ connectTimeoutMs: options.connectTimeoutMs, keepAliveMs: options.keepAliveMs }) };
  return (handlers) =>
    source({ ...base, onEvent: handlers.onEvent, onClose: handlers.onClose }).catch((err: unknown) => {
      // A connection source of one's own may throw anything; the driver hands the machine VoxpipeErrors.
      throw err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
    });
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
