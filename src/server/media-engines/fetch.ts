/**
 * Fetching inputs by URL (spec 4.4, 4.7: public URLs only) under the public
 * URL rule of `../net/public-url.ts`, checked again on every redirect hop
 * and at connect time (a guarded DNS lookup), so neither a redirect nor a
 * DNS answer that changed in between can reach a LAN or loopback address.
 * Downloads are capped in size and time. Used for media inputs and for the
 * reference audio of voice cloning.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkPublicUrl, guardedLookup, PRIVATE_LOOKUP_CODE, PublicUrlError, PublicUrlErrorKind, type UrlPolicy } from '../net/public-url.js';

/** Why a URL was refused (the kinds of PublicUrlError) or a fetch failed. */
export const MediaFetchErrorKind = {
  ...PublicUrlErrorKind,
  /** Connection refused or reset, TLS failure... */
  unreachable: 'unreachable',
  /** The server answered with a non-2xx status (or too many redirects). */
  httpStatus: 'http_status',
  tooLarge: 'too_large',
  timeout: 'timeout',
  aborted: 'aborted',
} as const;
export type MediaFetchErrorKind = (typeof MediaFetchErrorKind)[keyof typeof MediaFetchErrorKind];

export class MediaFetchError extends Error {
  override name = 'MediaFetchError';
  constructor(readonly kind: MediaFetchErrorKind, message: string, readonly status?: number) {
    super(message);
  }
}

/** The URL policy's refusal as a fetch error (same kind and message). */
async function checkHop(raw: string, policy: UrlPolicy): Promise<URL> {
  try {
    return await checkPublicUrl(raw, policy);
  } catch (err) {
    if (err instanceof PublicUrlError) throw new MediaFetchError(err.kind, err.message);
    throw err;
  }
}

export interface FetchMediaOptions extends UrlPolicy {
  /** Largest body accepted; default 50 MiB. */
  maxBytes?: number;
  /** Whole download, redirects included; default 30_000 ms (30 s). */
  timeoutMs?: number;
  /** Redirects followed; default 3. */
  maxRedirects?: number;
  signal?: AbortSignal | undefined;
}

export interface FetchedMedia {
  data: Buffer;
  /** Content-Type as sent (may be absent or wrong: callers sniff the bytes). */
  contentType: string | undefined;
  /** Final URL after redirects. */
  url: string;
}

/** Default cap of a fetched input: 50 MiB. */
export const MAX_MEDIA_BYTES = 50 * 1024 * 1024;

/** Download a media input under the URL policy, following a few redirects (each hop checked). */
export async function fetchMedia(raw: string, options: FetchMediaOptions = {}): Promise<FetchedMedia> {
  const maxBytes = options.maxBytes ?? MAX_MEDIA_BYTES;
  const timeoutMs = options.timeoutMs ?? 30_000; // 30 s
  const maxRedirects = options.maxRedirects ?? 3;
  const deadline = Date.now() + timeoutMs;
  let current = raw;
  for (let hop = 0; ; hop++) {
    const url = await checkHop(current, options);
    const res = await get(url, { allowPrivate: options.allowPrivate ?? false, deadline, signal: options.signal });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= maxRedirects) throw new MediaFetchError(MediaFetchErrorKind.httpStatus, `more than ${maxRedirects} redirects`, status);
      current = new URL(res.headers.location, url).href;
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw new MediaFetchError(MediaFetchErrorKind.httpStatus, `answered HTTP ${status}`, status);
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      res.destroy();
      throw new MediaFetchError(MediaFetchErrorKind.tooLarge, `is larger than ${maxBytes} bytes`);
    }
    const data = await readLimited(res, maxBytes, deadline, options.signal);
    return { data, contentType: res.headers['content-type'], url: url.href };
  }
}

function networkError(err: unknown): MediaFetchError {
  if (err instanceof MediaFetchError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === PRIVATE_LOOKUP_CODE) return new MediaFetchError(MediaFetchErrorKind.privateAddress, e.message);
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return new MediaFetchError(MediaFetchErrorKind.unresolvable, 'host does not resolve');
  return new MediaFetchError(MediaFetchErrorKind.unreachable, `could not be fetched (${e?.code ?? e?.message ?? 'network error'})`);
}

function get(url: URL, o: { allowPrivate: boolean; deadline: number; signal: AbortSignal | undefined }): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const remaining = o.deadline - Date.now();
    if (remaining <= 0) {
      reject(new MediaFetchError(MediaFetchErrorKind.timeout, 'download timed out'));
      return;
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, { method: 'GET', lookup: guardedLookup(o.allowPrivate), headers: { 'user-agent': 'voxpipe-reference-server', accept: '*/*' }, signal: o.signal });
    const timer = setTimeout(() => req.destroy(new MediaFetchError(MediaFetchErrorKind.timeout, 'download timed out')), remaining);
    req.on('response', (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      if ((err as Error).name === 'AbortError') reject(new MediaFetchError(MediaFetchErrorKind.aborted, 'download aborted'));
      else reject(networkError(err));
    });
    req.end();
  });
}

function readLimited(res: IncomingMessage, maxBytes: number, deadline: number, signal: AbortSignal | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: MediaFetchError) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      res.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new MediaFetchError(MediaFetchErrorKind.timeout, 'download timed out')), Math.max(0, deadline - Date.now()));
    const onAbort = () => fail(new MediaFetchError(MediaFetchErrorKind.aborted, 'download aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) fail(new MediaFetchError(MediaFetchErrorKind.tooLarge, `is larger than ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    res.on('error', (err) => fail(networkError(err)));
    res.on('end', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(Buffer.concat(chunks));
    });
  });
}
