/**
 * The two HTTP reads of reliable-mode recovery: the request-status route
 * (`GET {rt_http_url}/v2/tts/requests/{request_id}`, spec 4.10) and a
 * manifest entry's `audio_url`. Both answer with a result, never throw, so
 * the session can hand the outcome straight to the state machine.
 *
 * Both go through the one client core (`http/client.ts`): the key only to
 * the realtime service's origin, its deadline, its error parsing (a 401 is
 * `unauthorized` as on every keyed path). Each read is one attempt within
 * its own deadline (`timeoutMs`; the status read's is the machine's
 * `statusTimeoutMs`, `budgets.ts`): the machine bounds and spaces the
 * attempts (`maxStatusPolls`), so the core does not retry on its own.
 */
import { AbortError, ApiError, ConnectionError, ProtocolError, VoxpipeError } from '../errors.js';
import { requestStatusUrl, segmentAudioUrl } from '../config.js';
import { HttpClient } from '../http/client.js';
import { ClientErrorCode } from '../protocol/codes.js';
import { readRequestStatus } from '../protocol/server-reader.js';
import type { SegmentAudioResult, StatusResult } from './reliable/types.js';

export interface HttpReadOptions {
  /** `{rt_http_url}`. */
  rtHttpUrl: string;
  /** Sent as `Authorization: Bearer`, only to the origin of `rtHttpUrl`; without one, nothing is sent. */
  apiKey?: string | undefined;
  /** Per read; default 10_000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

/** Clients kept, one per realtime root and key (a session reads many times): the oldest goes past this many. */
const MAX_CLIENTS = 16;
const clients = new Map<string, HttpClient>();

/** The core client of `rtHttpUrl` and this key (built once, shared by every read). */
function clientFor(opts: HttpReadOptions): HttpClient {
  const id = `${opts.rtHttpUrl}\n${opts.apiKey ?? ''}`;
  let client = clients.get(id);
  if (!client) {
    // Its URLs are absolute (`config.ts`); `{base_url}` is not used.
    client = new HttpClient({ apiKey: opts.apiKey || null, baseUrl: opts.rtHttpUrl, rootUrl: opts.rtHttpUrl, maxRetries: 0 });
    if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value as string);
    clients.set(id, client);
  }
  return client;
}

const UNREADABLE: ReadonlySet<string> = new Set([ClientErrorCode.invalidResponse, ClientErrorCode.unexpectedResponse]);

/** A failure as a result: the core's typed error, or (for anything else) a connection failure naming what was read. */
function failureOf(err: unknown, what: string): VoxpipeError {
  // A body that cannot be read (an HTML page, broken JSON) may be a proxy's one-off: retryable, as a dropped connection is.
  const unreadable = err instanceof SyntaxError || (err instanceof VoxpipeError && UNREADABLE.has(err.code));
  if (err instanceof VoxpipeError && !(err instanceof AbortError) && !unreadable) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ConnectionError(ClientErrorCode.connectionFailed, `${what} failed: ${message}`, { retryable: true, cause: err });
}

/** Read the state (and manifest) of a reliable request. */
export async function fetchRequestStatus(requestId: string, opts: HttpReadOptions): Promise<StatusResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000; // 10 s
  try {
    const client = clientFor(opts);
    const res = await client.request({ path: requestStatusUrl(client.rootUrl, requestId), timeoutMs, deadlineMs: timeoutMs, signal: opts.signal });
    const body = res.kind === 'json' ? res.data : JSON.parse(res.data.toString('utf8'));
    const status = readRequestStatus(body);
    if (status instanceof ProtocolError) return { kind: 'error', error: status };
    return { kind: 'found', status };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { kind: 'not-found' };
    return { kind: 'error', error: failureOf(err, 'reading the request status') };
  }
}

/** Download one segment's complete audio from its manifest `audio_url` (relative to `rtHttpUrl` or absolute). */
export async function fetchSegmentAudio(audioUrl: string, opts: HttpReadOptions): Promise<SegmentAudioResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000; // 10 s
  try {
    const client = clientFor(opts);
    const res = await client.request({ path: segmentAudioUrl(client.rootUrl, audioUrl), timeoutMs, deadlineMs: timeoutMs, signal: opts.signal });
    if (res.kind !== 'binary') return { kind: 'error', error: new VoxpipeError(ClientErrorCode.unexpectedResponse, `GET ${new URL(res.url).pathname} returned JSON, expected segment audio`, { requestId: res.requestId }) };
    return { kind: 'ok', data: new Uint8Array(res.data) };
  } catch (err) {
    return { kind: 'error', error: failureOf(err, 'downloading segment audio') };
  }
}
