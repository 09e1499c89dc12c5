/**
 * The driver under both Node sessions: frames and a close that arrive
 * before the link's promise resolved (they come in the same read as
 * `authenticated`, or a pooled connection closes as it is handed over) are
 * held and replayed after `transport-opened`, in order, so both modes see
 * the close and end the request with it, the same way, instead of one of
 * them waiting for a `ready` that can never come.
 */
import { describe, expect, it } from 'vitest';
import type { ClientEvent } from '../../src/protocol/events.js';
import type { ConnectionSource, RealtimeConnection } from '../../src/realtime/connection.js';
import { ReliableSession } from '../../src/realtime/reliable/session.js';
import { SimpleSession } from '../../src/realtime/simple-session.js';
import { REQUEST } from './fixtures.js';

const POLICY_VIOLATION = 1008;

/** A source whose connection closes (with `code`) before it is handed over; what the session sent on it is kept in `sent`. */
function closingSource(code: number): { source: ConnectionSource; sent: ClientEvent[] } {
  const sent: ClientEvent[] = [];
  const connection = { send: (event: ClientEvent) => sent.push(event), pause() {}, resume() {}, close() {}, terminate() {}, closed: true, paused: false } as unknown as RealtimeConnection;
  const source: ConnectionSource = (options) => {
    options.onClose({ code, reason: 'policy', wasClean: true });
    return Promise.resolve(connection);
  };
  return { source, sent };
}

/** Long enough that a start timer is never what ends the request within the test. */
const START_TIMEOUT_MS = 60_000;

describe('a close that arrives before connect() resolved', () => {
  const base = { wsUrl: 'ws://127.0.0.1:9', apiKey: 'sk-unused', request: REQUEST, startTimeoutMs: START_TIMEOUT_MS };

  it.each([
    ['reliable', (source: ConnectionSource) => new ReliableSession({ ...base, rtHttpUrl: 'http://127.0.0.1:9', connectionSource: source })],
    ['simple', (source: ConnectionSource) => new SimpleSession({ ...base, connectionSource: source })],
  ])('%s mode: replayed after transport-opened, it ends the request with that close', async (_mode, make) => {
    const { source, sent } = closingSource(POLICY_VIOLATION);
    const session = make(source);
    const error = await session.open().catch((e: unknown) => e);
    // The machine saw the connection open first (it sent `start`), then the close.
    expect(sent.map((e) => e.event)).toEqual(['start']);
    expect(error).toMatchObject({ code: 'connection_closed', closeCode: POLICY_VIOLATION, retryable: false });
    await expect(session.end()).rejects.toBe(error);
  });
});
