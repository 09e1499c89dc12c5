/**
 * Turning a refused WebSocket handshake (an HTTP response instead of
 * `101 Switching Protocols`, spec 5.5) into the same typed error a REST call
 * gets for that status (`AuthenticationError` for 401, `PermissionDeniedError`
 * for 403, `RateLimitError` for 429, ...: same failure, same class whatever
 * the transport), carrying the status and the server's error code.
 */
import type { IncomingMessage } from 'node:http';
import { apiErrorFromStatus, type ApiError } from '../errors.js';

/** Most of a refusal body worth reading (bytes). */
const MAX_BODY_BYTES = 16 * 1024; // 16 KiB
/** Give up on a body that trickles (ms). */
const BODY_TIMEOUT_MS = 2_000; // 2 s

/** Code of a refused handshake whose body names no error code. */
export const HANDSHAKE_FAILED = 'handshake_failed';

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

/** The error code and message of a JSON error body (`{ error: { code, message } }` or flat), if any. */
export function parseErrorBody(body: string): { code?: string; message?: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return {};
  }
  if (json === null || typeof json !== 'object') return {};
  const root = json as Record<string, unknown>;
  const inner = root['error'] !== null && typeof root['error'] === 'object' ? (root['error'] as Record<string, unknown>) : root;
  const out: { code?: string; message?: string } = {};
  if (typeof inner['code'] === 'string') out.code = inner['code'];
  if (typeof inner['message'] === 'string') out.message = inner['message'];
  return out;
}

/**
 * The error for a refused handshake. 5xx and 429 are retryable (the service
 * is restarting or busy); every other status is the caller's to fix.
 */
export async function handshakeError(res: IncomingMessage): Promise<ApiError> {
  const status = res.statusCode ?? 0;
  const { code, message } = parseErrorBody(await readSmallBody(res));
  const requestId = res.headers['x-request-id'];
  // apiErrorFromStatus marks 429 and 5xx retryable, as before.
  return apiErrorFromStatus(status, code ?? HANDSHAKE_FAILED, `realtime handshake refused: HTTP ${status}${message ? `: ${message}` : ''}`, {
    requestId: typeof requestId === 'string' ? requestId : undefined,
  });
}
