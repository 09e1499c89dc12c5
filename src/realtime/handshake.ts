/**
 * Turning a refused WebSocket handshake (an HTTP response instead of
 * `101 Switching Protocols`, spec 5.5) into the same typed error a REST call
 * gets for that status (`AuthenticationError` for 401, `PermissionDeniedError`
 * for 403, `RateLimitError` for 429, ...: same failure, same class whatever
 * the transport), carrying the status and the server's error code.
 */
import type { IncomingMessage } from 'node:http';
import type { ApiError } from '../errors.js';
import { apiErrorFromResponse } from '../http/api-error.js';
import { REALTIME_PATHS } from '../protocol/constants.js';

/** Most of a refusal body worth reading (bytes). */
const MAX_BODY_BYTES = 16 * 1024; // 16 KiB
/** Give up on a body that trickles (ms). */
const BODY_TIMEOUT_MS = 2_000; // 2 s

/** Read at most MAX_BODY_BYTES of a response body; never throws. */
async function readSmallBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      res.removeAllListeners('data');
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, BODY_TIMEOUT_MS);
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_BODY_BYTES) chunks.push(chunk.subarray(0, MAX_BODY_BYTES - size));
      size += chunk.length;
      if (size >= MAX_BODY_BYTES) done();
    });
    res.once('end', done);
    res.once('error', done);
    res.once('close', done);
  });
}

/** The response's headers as a fetch `Headers` (what the one error parser reads). */
function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  return headers;
}

/** What a refused handshake's message starts with. */
const CONTEXT = `realtime handshake GET ${REALTIME_PATHS.live}`;

/**
 * The error for a refused handshake, parsed by the one parser of every
 * keyed path (`http/api-error.ts`): the same status gets the same class and
 * code as on REST (a 401 is `unauthorized`), a non-JSON body is quoted on
 * one line. 5xx and 429 are retryable (the service is restarting or busy);
 * every other status is the caller's to fix.
 */
export async function handshakeError(res: IncomingMessage): Promise<ApiError> {
  const status = res.statusCode ?? 0;
  const error = apiErrorFromResponse(status, headersOf(res), await readSmallBody(res), CONTEXT);
  // The server's own message: say where it came from.
  if (!error.message.startsWith(CONTEXT)) error.message = `${CONTEXT} refused with HTTP ${status}: ${error.message}`;
  return error;
}
