/**
 * Authentication of REST and realtime requests (spec 5): the key comes only
 * in `Authorization: Bearer <key>`; a key in the URL is refused; keys never
 * appear in messages.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Account, Store } from '../store/types.js';
import { unauthorized } from './errors.js';

/** Query parameters that would carry credentials in a URL: always refused. */
export const URL_CREDENTIAL_PARAMS = ['token', 'api_key', 'apikey', 'api-key', 'key', 'access_token', 'authorization'] as const;

export function hasUrlCredentials(url: URL): boolean {
  for (const name of url.searchParams.keys()) if ((URL_CREDENTIAL_PARAMS as readonly string[]).includes(name.toLowerCase())) return true;
  return false;
}

/** The bearer token of the headers; undefined when absent; throws 401 when malformed. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const value = headers.authorization;
  if (value === undefined) return undefined;
  const m = /^Bearer ([\x21-\x7e]{4,512})$/.exec(value.trim());
  if (!m) throw unauthorized('malformed Authorization header: expected "Bearer <API key>"');
  return m[1];
}

/** Index accounts by key once per lookup; the store is small in the reference server. */
export function accountByKey(store: Store, key: string): Account | undefined {
  for (const a of store.accounts.values()) if (a.apiKey === key) return a;
  return undefined;
}

/** The account of a request, or 401 (missing, malformed, unknown, disabled, or URL-borne key). */
export function authenticate(store: Store, headers: IncomingHttpHeaders, url: URL): Account {
  if (hasUrlCredentials(url)) throw unauthorized('credentials in the URL are not accepted; send Authorization: Bearer <API key>');
  const key = bearerToken(headers);
  if (key === undefined) throw unauthorized('missing Authorization: Bearer <API key>');
  const account = accountByKey(store, key);
  if (!account) throw unauthorized('invalid API key');
  if (account.disabled) throw unauthorized('account disabled');
  return account;
}
