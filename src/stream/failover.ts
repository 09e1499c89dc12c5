/**
 * When a SpeechStream hands its segments to its fallback transport: the one
 * failover policy, asked by the stream at opening, sending and ending alike.
 */
import { VoxpipeError } from '../errors.js';
import { CodeKind } from '../protocol/codes.js';

/**
 * Failover decides on the error's kind (`protocol/codes.ts`), not on a list
 * of codes: a request the service refuses (`request`), an account that may
 * not (`account`) or a caller who stopped (`aborted`) would be answered the
 * same way by another transport, so the user gets the spec's code. Anything
 * else (connection lost, provider down, resume exhausted, a frame the client
 * cannot use) fails over when a fallback is configured. An HTTP 4xx other
 * than 408 and 429 is the request's fault whatever its code says.
 */
export function shouldFailover(err: unknown): boolean {
  if (!(err instanceof VoxpipeError)) return true;
  const kind = err.kind;
  if (kind === CodeKind.request || kind === CodeKind.account || kind === CodeKind.aborted) return false;
  const status = (err as { status?: unknown }).status;
  return !(typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 429);
}
