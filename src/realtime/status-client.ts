/**
 * The two HTTP reads of reliable-mode recovery: the request-status route
 * (`GET {rt_http_url}/v2/tts/requests/{request_id}`, spec 4.10) and a
 * manifest entry's `audio_url`. Both answer with a result, never throw, so
 * the session can hand the outcome straight to the state machine.
 */
import { ConnectionError, ProtocolError, TimeoutError, type VoxpipeError } from '../errors.js';
import { apiErrorFromResponse } from '../http/api-error.js';
import { REALTIME_PATHS } from '../protocol/constants.js';
import { readRequestStatus } from '../protocol/server-reader.js';
import type { SegmentAudioResult, StatusResult } from './reliable/types.js';

export interface HttpReadOptions {
  /** `{rt_http_url}`. */
  rtHttpUrl: string;
  /** Sent as `Authorization: Bearer`, only to the origin of `rtHttpUrl`. */
  apiKey?: string | undefined;
  /** Per read; default 10_000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

function joinUrl(root: string, path: string): string {
  return `${root.replace(/\/+$/, '')}${path}`;
}

/** Headers for `url`: the key goes only to the realtime service's own origin, never elsewhere. */
function headersFor(url: URL, opts: HttpReadOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (opts.apiKey && url.origin === new URL(opts.rtHttpUrl).origin) headers['authorization'] = `Bearer ${opts.apiKey}`;
  return headers;
}

/**
 * The signal of one read: the caller's, plus a timeout. A plain timer is
 * kept and cleared (not `AbortSignal.any([signal, AbortSignal.timeout()])`:
 * on Node 20 that combined signal can lose its timeout once the inner
 * timeout signal is garbage-collected, and the read then never times out).
 */
function deadlineFor(opts: HttpReadOptions): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const ms = opts.timeoutMs ?? 10_000; // 10 s
  const timer = setTimeout(() => controller.abort(new TimeoutError(`HTTP read took over ${ms} ms`, { retryable: true })), ms);
  const onAbort = () => controller.abort(opts.signal?.reason);
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** A failed read's error, parsed as every REST answer is (`http/api-error.ts`): one code per status, one line per body. */
async function responseError(res: Response, url: URL): Promise<VoxpipeError> {
  return apiErrorFromResponse(res.status, res.headers, await res.text().catch(() => ''), `GET ${url.pathname}`);
}

function networkError(err: unknown, what: string, signal: AbortSignal): VoxpipeError {
  // Our own timeout: the TimeoutError it aborted with.
  if (signal.aborted && signal.reason instanceof TimeoutError) return signal.reason;
  const message = err instanceof Error ? err.message : String(err);
  return new ConnectionError('connection_failed', `${what} failed: ${message}`, { retryable: true, cause: err });
}

/** Read the state (and manifest) of a reliable request. */
export async function fetchRequestStatus(requestId: string, opts: HttpReadOptions): Promise<StatusResult> {
  const url = new URL(joinUrl(opts.rtHttpUrl, `${REALTIME_PATHS.requests}/${encodeURIComponent(requestId)}`));
  const deadline = deadlineFor(opts);
  try {
    const res = await fetch(url, { headers: headersFor(url, opts), signal: deadline.signal });
    if (res.status === 404) {
      await res.body?.cancel();
      return { kind: 'not-found' };
    }
    if (!res.ok) return { kind: 'error', error: await responseError(res, url) };
    const status = readRequestStatus(await res.json());
    if (status instanceof ProtocolError) return { kind: 'error', error: status };
    return { kind: 'found', status };
  } catch (err) {
    return { kind: 'error', error: networkError(err, 'reading the request status', deadline.signal) };
  } finally {
    deadline.done();
  }
}

/** Download one segment's complete audio from its manifest `audio_url` (relative to `rtHttpUrl` or absolute). */
export async function fetchSegmentAudio(audioUrl: string, opts: HttpReadOptions): Promise<SegmentAudioResult> {
  const deadline = deadlineFor(opts);
  try {
    const url = new URL(audioUrl, `${opts.rtHttpUrl.replace(/\/+$/, '')}/`);
    const res = await fetch(url, { headers: headersFor(url, opts), signal: deadline.signal });
    if (!res.ok) return { kind: 'error', error: await responseError(res, url) };
    return { kind: 'ok', data: new Uint8Array(await res.arrayBuffer()) };
  } catch (err) {
    return { kind: 'error', error: networkError(err, 'downloading segment audio', deadline.signal) };
  } finally {
    deadline.done();
  }
}
