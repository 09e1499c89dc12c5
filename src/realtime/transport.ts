/**
 * One entry point for the stream layer: a realtime `SegmentTransport` in the
 * chosen mode. Reliable is the default: it speaks each segment as soon as it
 * is complete and resumes after failures; simple speaks only after `end()`.
 */
import { Mode } from '../protocol/constants.js';
import { ReliableSession, type ReliableSessionOptions } from './reliable/session.js';
import { SimpleSession, type SimpleSessionOptions } from './simple-session.js';

export type RealtimeTransportOptions =
  | ({ mode?: typeof Mode.reliable } & ReliableSessionOptions)
  | ({ mode: typeof Mode.simple } & SimpleSessionOptions);

/** A realtime transport; `mode` defaults to `reliable`. */
export function createRealtimeTransport(options: RealtimeTransportOptions): ReliableSession | SimpleSession {
  if (options.mode === Mode.simple) {
    const { mode: _mode, ...rest } = options;
    return new SimpleSession(rest);
  }
  const { mode: _mode, ...rest } = options;
  return new ReliableSession(rest);
}
