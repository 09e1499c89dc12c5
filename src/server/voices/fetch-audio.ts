/**
 * Fetching reference audio from `audioUrl`: the media fetch (`../media/fetch.ts`),
 * so the public-URL rule holds on the URL, on every redirect (a public host
 * must not bounce the server to a LAN address) and at connect time, with a
 * size limit while reading and a timeout.
 */
import { fetchMedia, MediaFetchError } from '../media-engines/fetch.js';

/** The URL was refused, unreachable, answered an error, or sent too much. */
export class ReferenceFetchError extends Error {
  override name = 'ReferenceFetchError';
}

export interface FetchAudioOptions {
  /** Allow loopback and LAN addresses (server option `allowPrivateUrls`). */
  allowPrivate: boolean;
  /** Largest body read; default 26_214_400 bytes (25 MiB, as uploads). */
  maxBytes?: number;
  /** Timeout of the whole download, redirects included; default 30_000 ms. */
  timeoutMs?: number;
  /** Redirects followed; default 3. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

/** Download `rawUrl` as a Buffer. Throws ReferenceFetchError (its message names `audioUrl`). */
export async function fetchReferenceAudio(rawUrl: string, options: FetchAudioOptions): Promise<Buffer> {
  try {
    const fetched = await fetchMedia(rawUrl, {
      allowPrivate: options.allowPrivate,
      maxBytes: options.maxBytes ?? 25 * 1024 * 1024, // 25 MiB
      timeoutMs: options.timeoutMs ?? 30_000, // 30 s
      maxRedirects: options.maxRedirects ?? 3,
      signal: options.signal,
    });
    return fetched.data;
  } catch (err) {
    if (err instanceof MediaFetchError) throw new ReferenceFetchError(`audioUrl ${err.message}`);
    throw new ReferenceFetchError('audioUrl could not be fetched (connection failed)');
  }
}
