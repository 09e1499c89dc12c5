/**
 * The checks of a `/v2/tts/live` upgrade that happen before `101 Switching
 * Protocols` (spec 5.5): a refused handshake is an HTTP response with the
 * spec's JSON error body, never a WebSocket that opens and closes.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SUBPROTOCOL } from '../../protocol/constants.js';
import { errorBody, type ServerContext } from '../context.js';
import { accountByKey, bearerToken, hasUrlCredentials } from '../http/auth.js';
import { ApiErrorCode, HttpError, badRequest, unauthorized } from '../http/errors.js';
import { endLingering } from '../net/linger.js';
import type { Account } from '../store/types.js';

/** What an accepted handshake tells the session. */
export interface HandshakeResult {
  /** The account of the Bearer key; undefined when the first frame must be a browser ticket. */
  account: Account | undefined;
  /** Host and Origin headers, which a browser ticket must match. */
  host: string | undefined;
  origin: string | undefined;
  /** Ends the connection's count among the account's concurrent generations (`concurrency.ts`): at `finish`, or when it closes. */
  endGeneration?: () => void;
}

/** Subprotocols offered in `Sec-WebSocket-Protocol`. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (header === undefined) return [];
  return header.split(',').map((p) => p.trim()).filter(Boolean);
}

/**
 * Check an upgrade request. Order: draining (503, so clients retry
 * elsewhere), credentials in the URL (401), missing subprotocol (400), then
 * the Bearer key when there is one (401).
 */
export function checkHandshake(ctx: ServerContext, req: IncomingMessage): HandshakeResult {
  if (ctx.draining) throw new HttpError(503, ApiErrorCode.unavailable, 'server is draining; reconnect shortly', {}, { 'Retry-After': '1' });
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (hasUrlCredentials(url)) throw unauthorized('credentials in the URL are not accepted; send Authorization: Bearer <API key> or a browser ticket in the first frame');
  if (!offeredProtocols(req).includes(SUBPROTOCOL)) throw badRequest(`the WebSocket subprotocol ${SUBPROTOCOL} is required (Sec-WebSocket-Protocol)`);
  const key = bearerToken(req.headers);
  let account: Account | undefined;
  if (key !== undefined) {
    account = accountByKey(ctx.store, key);
    if (!account) throw unauthorized('invalid API key');
    if (account.disabled) throw unauthorized('account disabled');
  }
  return { account, host: req.headers.host, origin: req.headers.origin };
}

/** Answer a refused upgrade with an HTTP error response and close the socket. */
export function rejectUpgrade(ctx: Pick<ServerContext, 'dialect'>, socket: Duplex, err: HttpError, requestId: string): void {
  const body = JSON.stringify(errorBody(ctx, { code: err.code, message: err.message, requestId, ...err.extra }));
  const headers = [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    ...Object.entries(err.headers).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
  ];
  // Read what the client still sends before closing, so it can read this answer.
  endLingering(socket, `${headers.join('\r\n')}\r\n\r\n${body}`);
}
