/**
 * Fetching reference audio from `audioUrl`: the public-URL rule on the URL
 * and on every redirect (a public host must not bounce the server to a LAN
 * address), a size limit while reading, and a timeout.
 */
import { checkPublicUrl, PublicUrlError } from '../webhooks/public-url.js';

/** The URL was refused, unreachable, answered an error, or sent too much. */
export class ReferenceFetchError extends Error {
  override name = 'ReferenceFetchError';
}

export interface FetchAudioOptions {
  /** Allow loopback and LAN addresses (server option `allowPrivateUrls`). */
  allowPrivate: boolean;
  /** Largest body read; default 26_214_400 bytes (25 MiB, as uploads). */
  maxBytes?: number;
  /** Timeout of the whole download; default 30_000 ms. */
  timeoutMs?: number;
  /** Redirects followed; default 3. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

/** Download `rawUrl` as a Buffer. Throws ReferenceFetchError. */
export async function fetchReferenceAudio(rawUrl: string, options: FetchAudioOptions): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? 25 * 1024 * 1024; // 25 MiB
  const timeoutMs = options.timeoutMs ?? 30_000; // 30 s
  const maxRedirects = options.maxRedirects ?? 3;
  const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  let target = rawUrl;
  try {
    for (let hop = 0; ; hop++) {
      const url = await checkPublicUrl(target, options.allowPrivate, 'audioUrl');
      const res = await fetch(url, { redirect: 'manual', signal });
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        await res.body?.cancel();
        if (hop >= maxRedirects) throw new ReferenceFetchError(`audioUrl redirected more than ${maxRedirects} times`);
        target = new URL(res.headers.get('location')!, url).toString();
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new ReferenceFetchError(`audioUrl answered HTTP ${res.status}`);
      }
      const declared = Number(res.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        await res.body?.cancel();
        throw new ReferenceFetchError(`reference audio exceeds ${maxBytes} bytes`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const reader = res.body?.getReader();
      for (let read = await reader?.read(); reader && read && !read.done; read = await reader.read()) {
        size += read.value.length;
        if (size > maxBytes) {
          await reader.cancel();
          throw new ReferenceFetchError(`reference audio exceeds ${maxBytes} bytes`);
        }
        chunks.push(Buffer.from(read.value));
      }
      return Buffer.concat(chunks);
    }
  } catch (err) {
    if (err instanceof ReferenceFetchError) throw err;
    if (err instanceof PublicUrlError) throw new ReferenceFetchError(err.message);
    if ((err as Error)?.name === 'TimeoutError') throw new ReferenceFetchError(`audioUrl did not answer within ${timeoutMs} ms`);
    throw new ReferenceFetchError('audioUrl could not be fetched (connection failed)');
  }
}
