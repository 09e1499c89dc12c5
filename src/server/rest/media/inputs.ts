/**
 * Media inputs of the routes: URL checks at create (400 naming the field),
 * fetching (400 when unreachable, 422 from the callers when unprocessable),
 * the "capability unavailable" answer, and the failures a worker reports.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, badRequest, HttpError } from '../../http/errors.js';
import { UnprocessableMediaError } from '../../audio/decode.js';
import { fetchMedia, MediaFetchError, MediaFetchErrorKind, type FetchMediaOptions } from '../../media-engines/fetch.js';
import { ProcessError } from '../../media-engines/process.js';
import { checkPublicUrl, PublicUrlError } from '../../net/public-url.js';
import { TaskFailure } from '../common/task-runner.js';
import { MediaErrorCode } from './catalog.js';

/** 503 `capability_unavailable`: the machine lacks what the capability needs. */
export function unavailable(capability: string, why: string): HttpError {
  return new HttpError(503, ApiErrorCode.unavailable, `${capability} is not available on this server: ${why}`, { capability });
}

/** 422 `unprocessable_media` (spec 7.2: reachable but unprocessable). */
export function unprocessable(field: string, why: string): HttpError {
  return new HttpError(422, ApiErrorCode.unprocessable, `${field} ${why}`, { field });
}

/** A fetch or URL error as the 400 of a create call. */
function urlError(field: string, err: MediaFetchError | PublicUrlError): HttpError {
  return badRequest(`${field} ${err.message}`, { field, reason: err.kind });
}

/**
 * Check one input URL at create: 400 naming `field` when it is not a public
 * http(s) URL. A host that does not resolve right now is accepted: the task
 * then fails with an error code and is refunded if it still does not when
 * fetched (private and loopback addresses are refused at every hop then).
 */
export async function checkUrlField(ctx: ServerContext, field: string, url: string): Promise<string> {
  try {
    return (await checkPublicUrl(url, { allowPrivate: ctx.allowPrivateUrls, acceptUnresolvable: true })).href;
  } catch (err) {
    if (err instanceof PublicUrlError) throw urlError(field, err);
    throw err;
  }
}

/** Check several input URLs at once (`field[i]` in messages). */
export async function checkUrlList(ctx: ServerContext, field: string, urls: readonly string[]): Promise<string[]> {
  return Promise.all(urls.map((u, i) => checkUrlField(ctx, `${field}[${i}]`, u)));
}

/** Fetch an input at create: 400 naming `field` when the URL is refused or the download fails. */
export async function fetchField(ctx: ServerContext, field: string, url: string, options: FetchMediaOptions = {}): Promise<Buffer> {
  try {
    return (await fetchMedia(url, { ...options, allowPrivate: ctx.allowPrivateUrls })).data;
  } catch (err) {
    if (err instanceof MediaFetchError) throw urlError(field, err);
    throw err;
  }
}

/** Fetch an input inside a worker: failures become the task's `media_fetch_failed`. */
export async function fetchForTask(ctx: ServerContext, field: string, url: string, options: FetchMediaOptions = {}): Promise<Buffer> {
  try {
    return (await fetchMedia(url, { ...options, allowPrivate: ctx.allowPrivateUrls })).data;
  } catch (err) {
    if (err instanceof MediaFetchError && err.kind !== MediaFetchErrorKind.aborted) throw new TaskFailure(MediaErrorCode.fetchFailed, `${field} ${err.message}`);
    throw err;
  }
}

/**
 * The injected faults a media engine honours: `latencyMs` (a delay before
 * the work, so tests can watch `processing`) and `engineFailure` (fails the
 * task when `match` is absent or found in `subject`, the prompt or input URL).
 */
export async function engineFaults(ctx: ServerContext, subject: string, signal: AbortSignal): Promise<void> {
  const latencyMs = ctx.faults.latencyMs;
  if (latencyMs > 0) await sleep(latencyMs, undefined, { signal }).catch(() => undefined);
  if (ctx.faults.take('engineFailure', (f) => !f.match || subject.includes(f.match))) {
    throw new TaskFailure(MediaErrorCode.generationFailed, 'the media engine failed (injected fault); the charge was refunded');
  }
}

/** Map what an engine threw to the task's failure. */
export function engineFailure(err: unknown, what: string): unknown {
  if (err instanceof TaskFailure) return err;
  if (err instanceof UnprocessableMediaError) return new TaskFailure(MediaErrorCode.unprocessable, `${what} ${err.message}`);
  if (err instanceof ProcessError) return new TaskFailure(MediaErrorCode.generationFailed, `${what} failed: ${err.message}`);
  return err;
}
