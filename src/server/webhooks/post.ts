/**
 * One webhook POST under the public-URL rule: the connection goes through
 * the guarded DNS lookup of `../net/public-url.ts`, so a host that resolved
 * to a public address when the URL was checked cannot be re-pointed at a
 * LAN or loopback address before an attempt (DNS rebinding). Redirects are
 * not followed: the status is the receiver's answer.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup } from '../net/public-url.js';

/** The attempt ran out of time before the receiver's response headers. */
export class PostTimeoutError extends Error {
  override name = 'PostTimeoutError';
  constructor() {
    super('timed out');
  }
}

export interface PostOptions {
  headers: Record<string, string>;
  /** Accept loopback and LAN addresses (server option `allowPrivateUrls`). */
  allowPrivate: boolean;
  /** Connect to response headers. */
  timeoutMs: number;
  /** Aborts the attempt (server close). */
  signal: AbortSignal;
}

/**
 * POST `body` to `url` and resolve with the response status (the response
 * body is discarded). Rejects with PostTimeoutError after `timeoutMs`, or
 * with the network error (code `EPRIVATE` when the lookup was refused).
 */
export function postOnce(url: string, body: string, options: PostOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, {
      method: 'POST',
      headers: { ...options.headers, 'content-length': Buffer.byteLength(body) },
      lookup: guardedLookup(options.allowPrivate),
      // One connection per attempt: no pooled socket outlives the delivery.
      agent: false,
      signal: options.signal,
    });
    const timer = setTimeout(() => req.destroy(new PostTimeoutError()), options.timeoutMs);
    req.on('response', (res) => {
      clearTimeout(timer);
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}
