/**
 * Short-lived signed URLs for audio and media files. The Bearer-protected
 * download routes answer 302 to one of these, so the file itself can be
 * fetched without the key (players, `<audio src>`), and the key never
 * appears in a URL. HMAC-SHA256 over the path and the sorted query, with a
 * per-store secret (processes sharing a store share the secret).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServerContext } from '../../context.js';

/** How long a signed URL stays valid by default: 300_000 ms (5 min). */
export const SIGNED_URL_TTL_MS = 300_000;

const SECRET_KEY = 'url-signing';

function secretOf(ctx: ServerContext): Buffer {
  const secrets = ctx.store.collection<{ secret: string }>('server-secrets');
  let record = secrets.get(SECRET_KEY);
  if (!record) {
    record = { secret: randomBytes(32).toString('base64') };
    secrets.set(SECRET_KEY, record);
  }
  return Buffer.from(record.secret, 'base64');
}

function canonical(path: string, params: URLSearchParams): string {
  const entries = [...params.entries()].filter(([k]) => k !== 'sig').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${path}?${new URLSearchParams(entries).toString()}`;
}

function sign(ctx: ServerContext, path: string, params: URLSearchParams): string {
  return createHmac('sha256', secretOf(ctx)).update(canonical(path, params)).digest('base64url');
}

/**
 * An absolute URL of `path` (from the host root) valid for `ttlMs`
 * (default SIGNED_URL_TTL_MS), carrying `params`, `expires` (Unix ms) and `sig`.
 */
export function signUrl(ctx: ServerContext, path: string, params: Record<string, string> = {}, ttlMs = SIGNED_URL_TTL_MS): string {
  const search = new URLSearchParams(params);
  search.set('expires', String(ctx.now().getTime() + ttlMs));
  search.set('sig', sign(ctx, path, search));
  return `${ctx.urls.rootUrl}${path}?${search.toString()}`;
}

/** Whether `url` carries a valid, unexpired signature for its path and query. */
export function verifySignedUrl(ctx: ServerContext, url: URL): boolean {
  const sig = url.searchParams.get('sig');
  const expires = Number(url.searchParams.get('expires'));
  if (!sig || !Number.isFinite(expires) || expires < ctx.now().getTime()) return false;
  const expected = Buffer.from(sign(ctx, url.pathname, url.searchParams));
  const given = Buffer.from(sig);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
