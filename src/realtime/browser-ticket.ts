/**
 * `POST {rt_http_url}/v2/tts/browser-tickets` (spec 4.10, 5.5): a trusted
 * server exchanges its API key for a single-use, short-lived ticket bound
 * to the site, Host and Origin, which a browser then sends in its first
 * `auth` frame (`connect({ ticket, origin })`).
 *
 * The request goes through the one client core (`http/client.ts`): the key
 * only to the realtime service's origin, its deadline, typed errors parsed
 * as every keyed path's are (a 401 is `unauthorized`). A POST that may have
 * reached the service is not sent again (a ticket is single-use).
 */
import { ProtocolError } from '../errors.js';
import { browserTicketsUrl } from '../config.js';
import { HttpClient } from '../http/client.js';
import { HttpMethod } from '../http/retry.js';
import { isObject, str } from '../protocol/fields.js';
import { INVALID_SERVER_FRAME } from '../protocol/server-reader.js';
import { ErrorCode } from '../protocol/constants.js';

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

/**
 * Ask the realtime service for a browser ticket. Throws ApiError (non-2xx),
 * ConnectionError, TimeoutError, ProtocolError (no ticket in the answer), or
 * VoxpipeError `missing_api_key` / `invalid_config` (bad configuration).
 */
export async function createBrowserTicket(opts: BrowserTicketOptions): Promise<BrowserTicket> {
  const timeoutMs = opts.timeoutMs ?? 10_000; // 10 s
  const client = new HttpClient({ apiKey: opts.apiKey, baseUrl: opts.rtHttpUrl, rootUrl: opts.rtHttpUrl, timeoutMs, deadlineMs: timeoutMs, maxRetries: 1 });
  const res = await client.request({ method: HttpMethod.post, path: browserTicketsUrl(client.rootUrl), body: { origin: opts.origin }, signal: opts.signal });
  let body: unknown = res.data;
  if (res.kind === 'binary') {
    try {
      body = JSON.parse(res.data.toString('utf8'));
    } catch {
      throw new ProtocolError(ErrorCode.invalidMessage, 'browser ticket response is not JSON');
    }
  }
  if (!isObject(body)) throw new ProtocolError(ErrorCode.invalidMessage, 'browser ticket response is not a JSON object');
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
