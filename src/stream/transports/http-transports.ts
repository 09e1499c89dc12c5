/**
 * The one place that maps an HTTP transport's name to its class:
 * `createTransport` (speech.ts, and so `auto` failover and the CLI's
 * `--transport`) and the bench build them here.
 */
import { TransportName } from '../../transport.js';
import { AsyncTransport, type AsyncTransportOptions } from './async.js';
import { CompatTransport } from './compat.js';
import type { HttpSegmentTransport } from './http-base.js';
import { SyncTransport } from './sync.js';

export type HttpTransportName = Exclude<TransportName, 'realtime'>;

export const HTTP_TRANSPORTS: readonly HttpTransportName[] = [TransportName.sync, TransportName.async, TransportName.compat];

/** Build the HTTP transport `name` (`family` and `poll` only matter to `async`). */
export function createHttpTransport(name: HttpTransportName, options: AsyncTransportOptions): HttpSegmentTransport {
  switch (name) {
    case TransportName.sync:
      return new SyncTransport(options);
    case TransportName.async:
      return new AsyncTransport(options);
    case TransportName.compat:
      return new CompatTransport(options);
  }
}
