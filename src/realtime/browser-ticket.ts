/**
 * `POST {rt_http_url}/v2/tts/browser-tickets` (spec 4.10, 5.5): a trusted
 * server exchanges its API key for a single-use, short-lived ticket bound
 * to the site, Host and Origin, which a browser then sends in its first
 * `auth` frame (`connect({ ticket, origin })`).
 */
import { apiErrorFromStatus, ConnectionError, ProtocolError } from '../errors.js';
import { isObject, str } from '../protocol/fields.js';
import { INVALID_SERVER_FRAME } from '../protocol/server-reader.js';
import { ErrorCode, REALTIME_PATHS } from '../protocol/constants.js';
import { parseErrorBody } from './handshake.js';

export interface BrowserTicket {
  ticket: string;
  /** ISO 8601 expiry. */
  expiresAt: string;
  origin: string;
  site?: string;
}

export interface BrowserTicketOptions {
  rtHttpUrl: string;
  apiKey: string;
  /** The browser page's origin, e.g. `https://app.example.com`. */
  origin: string;
  /** Default 10_000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Ask the realtime service for a browser ticket. Throws ApiError (non-2xx), ConnectionError or ProtocolError. */
export async function createBrowserTicket(opts: BrowserTicketOptions): Promise<BrowserTicket> {
  const url = `${opts.rtHttpUrl.replace(/\/+$/, '')}${REALTIME_PATHS.browserTickets}`;
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 10_000); // 10 s
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ origin: opts.origin }),
      signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
    });
  } catch (err) {
    throw new ConnectionError('connection_failed', `browser ticket request failed: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err });
  }
  const text = await res.text();
  if (!res.ok) {
    const { code, message } = parseErrorBody(text);
    throw apiErrorFromStatus(res.status, code ?? `http_${res.status}`, message ?? `HTTP ${res.status}`);
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ProtocolError(ErrorCode.invalidMessage, 'browser ticket response is not JSON');
  }
  // The field's name is not fixed by the spec ("returning a ticket"): read the reasonable spellings.
  const value = str(isObject(body['data']) ? { ...body, ...body['data'] } : body, 'ticket', 'ticket_token', 'ticketToken', 'token');
  if (value === undefined) throw new ProtocolError(INVALID_SERVER_FRAME, 'browser ticket response has no ticket');
  const ticket: BrowserTicket = {
    ticket: value,
    expiresAt: typeof body['expires_at'] === 'string' ? body['expires_at'] : '',
    origin: typeof body['origin'] === 'string' ? body['origin'] : opts.origin,
  };
  if (typeof body['site'] === 'string') ticket.site = body['site'];
  return ticket;
}

/**
 * For an app's server: a single-use ticket with which a page at `origin`
 * may open one realtime connection (`voxpipe/browser`'s `getTicket`). The
 * key stays on the server.
 */
export function mintTicket(config: { rtHttpUrl: string; apiKey: string }, origin: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<BrowserTicket> {
  return createBrowserTicket({ rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, origin, ...options });
}
