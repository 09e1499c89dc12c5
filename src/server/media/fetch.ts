/**
 * Fetching media inputs by URL (spec 4.4, 4.7: public URLs only). A URL must
 * be http(s), carry no credentials (`user:pass@`), and its host must resolve
 * only to public addresses, unless the server allows private URLs (local
 * tests, the CLI's embedded server). The rule is checked when a request is
 * accepted, and again on every hop and at connect time (a guarded DNS
 * lookup), so neither a redirect nor a DNS answer that changed in between
 * can reach a LAN or loopback address. Downloads are capped in size and time.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from './private-address.js';

/** Why a URL was refused or a fetch failed. */
export const MediaFetchErrorKind = {
  /** Not an absolute http(s) URL, or it carries credentials. */
  invalidUrl: 'invalid_url',
  /** The host is (or resolves to) a loopback, LAN or otherwise non-public address. */
  privateAddress: 'private_address',
  /** The host name does not resolve. */
  unresolvable: 'unresolvable',
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

export interface UrlPolicy {
  /** Accept loopback, LAN and other private addresses; default false. */
  allowPrivate?: boolean;
}

/** Promise form of `dns.lookup` with every address. */
function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

/** Host name of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Parse and check the form of `raw` (no DNS): absolute http(s), a host, no credentials. */
export function parseMediaUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MediaFetchError(MediaFetchErrorKind.invalidUrl, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MediaFetchError(MediaFetchErrorKind.invalidUrl, `must use http or https, not ${url.protocol.replace(':', '')}`);
  if (url.username !== '' || url.password !== '') throw new MediaFetchError(MediaFetchErrorKind.invalidUrl, 'must not carry credentials (user:password@)');
  if (bareHost(url) === '') throw new MediaFetchError(MediaFetchErrorKind.invalidUrl, 'has no host');
  return url;
}

/**
 * Check that `raw` is a URL the server may fetch: its form, and every
 * address its host resolves to. Returns the parsed URL.
 */
export async function checkMediaUrl(raw: string, policy: UrlPolicy = {}): Promise<URL> {
  const url = parseMediaUrl(raw);
  if (policy.allowPrivate) return url;
  const host = bareHost(url);
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new MediaFetchError(MediaFetchErrorKind.privateAddress, `points to a non-public address (${host}); the service fetches public URLs only`);
    return url;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host);
  } catch {
    throw new MediaFetchError(MediaFetchErrorKind.unresolvable, `host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new MediaFetchError(MediaFetchErrorKind.unresolvable, `host ${host} does not resolve`);
  if (addresses.some((a) => isPrivateAddress(a.address))) {
    throw new MediaFetchError(MediaFetchErrorKind.privateAddress, `host ${host} resolves to a non-public address; the service fetches public URLs only`);
  }
  return url;
}

/** A DNS lookup for sockets that refuses non-public answers (defeats DNS rebinding between check and connect). */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const list = addresses as LookupAddress[];
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address))) {
        callback(Object.assign(new Error(`host ${hostname} resolves to a non-public address`), { code: 'EPRIVATE' }) as NodeJS.ErrnoException, '', 0);
        return;
      }
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
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
    const url = await checkMediaUrl(current, options);
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
  if (e?.code === 'EPRIVATE') return new MediaFetchError(MediaFetchErrorKind.privateAddress, `${e.message}; the service fetches public URLs only`);
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
