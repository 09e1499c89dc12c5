/**
 * Turn a non-2xx response into a typed `ApiError` (spec 7): the subclass is
 * chosen from the status, and the body's `code`, `message`, `requestId` and
 * every extra property are kept, from either body shape:
 * `{ error: { code, message, requestId, ... } }` or flat `{ code, message, requestId }`.
 * Unknown codes are kept as given; a body without a code gets one from the status.
 *
 * The one exception: a 401 is always `unauthorized` (a wrong or missing key
 * has one code on every path: REST, the status route, discovery, tickets and
 * the WebSocket handshake, whatever each route's body calls it); a
 * different code of the body is kept as `details.serverCode`.
 *
 * Every path that carries the key parses its failures here: the REST client
 * core (`client.ts`, which the status route, discovery and tickets go
 * through) and the refused WebSocket handshake (`realtime/handshake.ts`).
 */
import { apiErrorFromStatus, RateLimitError, redact, type ApiError } from '../errors.js';
import { parseRetryAfterMs } from './retry.js';
import { HEADERS } from '../protocol/rest.js';

/** Code used when the body names none, by status (spec 7.3). */
const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  422: 'unprocessable',
  429: 'rate_limited',
};

/** The code of every 401, whatever its body says. */
const UNAUTHORIZED = 'unauthorized';

/** Longest excerpt of a non-JSON body quoted in a message, in characters. */
const MAX_QUOTED_BODY_CHARS = 120;

/**
 * A non-JSON error body (an HTML 500 page, a proxy's text) as one short line:
 * markup, scripts and styles dropped, entities of whitespace and the common
 * five decoded, whitespace collapsed, cut at `MAX_QUOTED_BODY_CHARS` with an
 * ellipsis. Empty when nothing readable is left.
 */
export function bodyExcerpt(bodyText: string, maxChars: number = MAX_QUOTED_BODY_CHARS): string {
  const looksLikeMarkup = /<\/?[a-z!][^>]*>/i.test(bodyText);
  const text = looksLikeMarkup
    ? bodyText
        .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
        .replace(/<!--[\s\S]*?-->/g, ' ')
        .replace(/<[^>]*>/g, ' ')
        .replace(/&nbsp;/gi, ' ')
        .replace(/&lt;/gi, '<')
        .replace(/&gt;/gi, '>')
        .replace(/&quot;/gi, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/gi, '&')
    : bodyText;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= maxChars ? line : `${line.slice(0, maxChars - 1).trimEnd()}…`;
}

/** A message of the server's as one line (the error contract: one line per error). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Headers that carry the server's request id (spec 4.1). */
export const REQUEST_ID_HEADERS = [HEADERS.requestId, HEADERS.svcRequestId] as const;

export function requestIdFromHeaders(headers: Headers): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers.get(name);
    if (value) return value;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys of the error object that become fields of the error rather than `details`. */
const CORE_KEYS = new Set(['code', 'message', 'requestId', 'request_id']);

/** The error object of a parsed body: the `error` member when it is an object, else the body itself. */
function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (!isRecord(body)) return undefined;
  if (isRecord(body['error'])) return body['error'];
  return body;
}

/**
 * Build the error for a failed response.
 * @param bodyText the raw body (possibly empty or not JSON)
 * @param context `METHOD /path` for the message when the body has none
 */
export function apiErrorFromResponse(status: number, headers: Headers, bodyText: string, context: string, nowMs: number = Date.now()): ApiError {
  let parsed: unknown;
  try {
    parsed = bodyText.trim() === '' ? undefined : JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const obj = errorObject(parsed);
  const rawCode = obj?.['code'];
  const bodyCode = typeof rawCode === 'string' && rawCode !== '' ? rawCode : typeof rawCode === 'number' ? String(rawCode) : (CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : `http_${status}`));
  // A string `error` member (e.g. `{ error: "..." }`) is the message of some bodies.
  const rawMessage = obj?.['message'] ?? (isRecord(parsed) && typeof parsed['error'] === 'string' ? parsed['error'] : undefined);
  // A body that is not JSON (an HTML error page, a proxy's text): status, content type and a short excerpt, on one line.
  const contentType = headers.get('content-type')?.split(';')[0]?.trim();
  // Redacted before it is cut, so no part of an echoed key can survive the cut.
  const excerpt = obj === undefined ? bodyExcerpt(redact(bodyText)) : '';
  const quoted = `${contentType ? ` (${contentType})` : ''}${excerpt ? `: ${excerpt}` : ''}`;
  const message = typeof rawMessage === 'string' && oneLine(rawMessage) !== '' ? oneLine(rawMessage) : `${context} failed with HTTP ${status}${obj === undefined ? quoted : ''}`;
  const bodyRequestId = obj?.['requestId'] ?? obj?.['request_id'] ?? (isRecord(parsed) ? (parsed['requestId'] ?? parsed['request_id']) : undefined);
  const requestId = typeof bodyRequestId === 'string' ? bodyRequestId : requestIdFromHeaders(headers);
  const code = status === 401 ? UNAUTHORIZED : bodyCode;

  const details: Record<string, unknown> = {};
  if (obj) for (const [k, v] of Object.entries(obj)) if (!CORE_KEYS.has(k)) details[k] = v;
  // Siblings of the `error` wrapper (e.g. `success: false`) are kept too, unless they collide.
  if (isRecord(parsed) && obj !== parsed) for (const [k, v] of Object.entries(parsed)) if (k !== 'error' && !CORE_KEYS.has(k) && !(k in details)) details[k] = v;
  if (code !== bodyCode) details['serverCode'] = bodyCode;

  const err = apiErrorFromStatus(status, code, message, { requestId, details });
  if (err instanceof RateLimitError) err.retryAfterMs = parseRetryAfterMs(headers.get('retry-after'), nowMs);
  return err;
}
