/**
 * Every item of a list route, across whatever paging the deployment uses
 * (spec 4.8: "response fields and filters: not shown"). One reader for all
 * the ways seen, in this order of trust:
 *
 * 1. a `Link: <...>; rel="next"` header;
 * 2. a next link in the body (`next`, `next_url`, `links.next`,
 *    `_links.next.href`, `pagination.next`, ...), absolute or relative to
 *    the page it came in;
 * 3. a cursor (`next_cursor`, `nextCursor`, `next_page_token`,
 *    `paging.cursors.after`, `pageInfo.endCursor`, a `next` that is no URL),
 *    sent back under the name its field implies (`cursor`, `page_token`,
 *    `after`, ...);
 * 4. page numbers (`page` with `total`, `totalPages`, `hasMore` or
 *    `next_page`), asked again with the page size the deployment used;
 * 5. offsets (`offset` with `total` or `hasMore`), advanced by what came;
 * 6. `has_more` alone: `starting_after` the last item's id;
 * 7. nothing said: a bare page exactly as long as asked for is followed by
 *    offset once; a page that adds nothing new ends the list.
 *
 * Bounded: at most `maxPages` pages and `maxItems` items; a link or query
 * already followed, or a page with nothing new, ends the walk (a deployment
 * that ignores the paging parameters answers the first page again).
 */
import { arr, isObject, num, str, bool, type JsonObject } from '../protocol/fields.js';
import type { HttpClient, QueryValue } from './client.js';

export interface ListAllOptions {
  /** Path under `{base_url}` (or `{root_url}` when `root`), or an absolute URL. */
  path: string;
  root?: boolean;
  /** Query of the first page (filters); the paging parameters are added to it. */
  query?: Record<string, QueryValue>;
  /** Page size asked for (as `limit`); default 100 (the spec's largest list `limit`). */
  pageSize?: number;
  /** Pages read at most; default 50. */
  maxPages?: number;
  /** Items kept at most; default 10_000. */
  maxItems?: number;
  /** Identity of an item, to drop repeats across pages and to page by `starting_after`; default its `id`-like field. */
  keyOf?: (item: unknown) => string | undefined;
  signal?: AbortSignal | undefined;
  /** Per page; default the client's. */
  timeoutMs?: number;
  /** Retries per page; default the client's. */
  maxRetries?: number;
}

export interface ListAllResult {
  items: unknown[];
  /** Pages read. */
  pages: number;
  /** False when a bound (`maxPages`, `maxItems`) stopped the walk while the deployment said there was more. */
  complete: boolean;
}

export const PAGING_DEFAULTS = {
  pageSize: 100,
  maxPages: 50,
  maxItems: 10_000,
} as const;

/** Keys that hold the items of a page. */
const ITEM_KEYS = ['data', 'items', 'voices', 'results', 'list', 'entries', 'records', 'jobs', 'tasks'] as const;

/** The items of a page: a bare array, or the first array under one of `ITEM_KEYS` (also inside a `data` object). */
export function pageItems(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (!isObject(body)) return [];
  const top = arr(body, ...ITEM_KEYS);
  if (top) return top;
  const data = body['data'];
  return isObject(data) ? (arr(data, ...ITEM_KEYS) ?? []) : [];
}

function defaultKeyOf(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  return isObject(item) ? str(item, 'id', 'voiceId', 'voice_id', 'taskId', 'task_id', 'uuid') : undefined;
}

/** Where the paging fields of a page may be. */
function containers(body: JsonObject): JsonObject[] {
  const out: JsonObject[] = [body];
  const data = isObject(body['data']) ? body['data'] : undefined;
  if (data) out.push(data);
  for (const holder of [body, data, isObject(body['meta']) ? body['meta'] : undefined]) {
    if (!holder) continue;
    for (const key of ['pagination', 'paging', 'page_info', 'pageInfo', 'meta', 'links', '_links', 'cursor', 'cursors']) {
      const v = holder[key];
      if (isObject(v)) out.push(v);
    }
  }
  const paging = isObject(body['paging']) ? body['paging'] : undefined;
  if (paging && isObject(paging['cursors'])) out.push(paging['cursors']);
  return out;
}

/** The URL of `rel="next"` in a `Link` header. */
export function linkHeaderNext(value: string | null): string | undefined {
  if (!value) return undefined;
  for (const part of value.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?/i.test(m[2]!)) return m[1]!;
  }
  return undefined;
}

const LINK_KEYS = ['next', 'next_url', 'nextUrl', 'next_link', 'nextLink', 'next_page_url', 'nextPageUrl', '@odata.nextLink', 'next_href', 'nextHref'];

/** A link rather than a cursor: absolute, rooted, a query, or a relative path with a query (cursors carry no `?`). */
const looksLikeUrl = (v: string) => /^(https?:\/\/|\/|\?|\.\.?\/)/i.test(v) || /^[\w.~-]+(\/[\w.~-]*)*\?\S*=/.test(v);

/** What to ask next. */
type Next = { url: URL } | undefined;

interface PageContext {
  body: unknown;
  headers: Headers;
  /** The URL this page came from (after redirects). */
  url: URL;
  /** Items on this page. */
  got: number;
  /** The last item's key, for `starting_after`. */
  lastKey: string | undefined;
  /** Items collected so far (all pages). */
  total: number;
  pageSize: number;
}

function withQuery(url: URL, set: Record<string, string | number>): URL {
  const next = new URL(url);
  for (const [k, v] of Object.entries(set)) next.searchParams.set(k, String(v));
  return next;
}

/** The next page's URL from whatever paging this page shows; undefined at the end. */
export function nextPageUrl(page: PageContext): Next {
  const fromHeader = linkHeaderNext(page.headers.get('link'));
  if (fromHeader) return { url: new URL(fromHeader, page.url) };
  if (!isObject(page.body)) {
    // A bare array says nothing: one more page by offset when this one was full.
    return Array.isArray(page.body) && page.got >= page.pageSize && page.got > 0 ? { url: withQuery(page.url, { offset: page.total, limit: page.pageSize }) } : undefined;
  }
  const places = containers(page.body);
  const hasMore = firstBool(places, 'hasMore', 'has_more', 'hasNextPage', 'has_next_page', 'has_next', 'more');
  if (hasMore === false) return undefined;

  // A next link, or a `next` that is a cursor.
  for (const place of places) {
    for (const key of LINK_KEYS) {
      if (!(key in place)) continue;
      const v = place[key];
      if (v === null || v === false || v === '') return undefined;
      const href = typeof v === 'string' ? v : isObject(v) ? str(v, 'href', 'url') : undefined;
      if (href === undefined) continue;
      if (looksLikeUrl(href)) return { url: new URL(href, page.url) };
      if (key === 'next') return { url: withQuery(page.url, { cursor: href }) };
    }
  }

  // Cursors, sent back under the name their field implies.
  const cursorFields: [string, string][] = [
    ['next_cursor', 'cursor'],
    ['nextCursor', 'cursor'],
    ['next_page_token', 'page_token'],
    ['nextPageToken', 'pageToken'],
    ['next_token', 'next_token'],
    ['nextToken', 'nextToken'],
    ['continuation', 'continuation'],
    ['continuationToken', 'continuationToken'],
  ];
  for (const place of places) {
    for (const [field, param] of cursorFields) {
      if (!(field in place)) continue;
      const v = place[field];
      if (v === null || v === '' || v === false) return undefined;
      if (typeof v === 'string' || typeof v === 'number') return { url: withQuery(page.url, { [param]: v }) };
    }
  }
  const after = firstStr(places, 'after', 'endCursor', 'end_cursor');
  if (after !== undefined && (hasMore === true || page.got > 0)) return { url: withQuery(page.url, { after }) };

  const total = firstNum(places, 'total', 'totalCount', 'total_count', 'totalItems', 'total_items');
  if (total !== undefined && page.total >= total) return undefined;

  // Page numbers: ask the next with the size the deployment used, under its name.
  const pageNo = firstNum(places, 'page', 'currentPage', 'current_page', 'pageNumber', 'page_number');
  if (pageNo !== undefined) {
    const nextNo = firstNum(places, 'next_page', 'nextPage');
    const totalPages = firstNum(places, 'totalPages', 'total_pages', 'pageCount', 'page_count', 'last_page', 'lastPage');
    const sizeField = firstKey(places, 'pageSize', 'page_size', 'per_page', 'perPage', 'limit', 'size');
    const more = hasMore === true || nextNo !== undefined || (totalPages !== undefined ? pageNo < totalPages : total !== undefined ? page.total < total : page.got > 0 && sizeField !== undefined && page.got >= sizeField.value);
    if (!more) return undefined;
    const pageParam = firstKey(places, 'page', 'currentPage', 'current_page', 'pageNumber', 'page_number')!.key;
    const set: Record<string, number> = { [pageParam === 'currentPage' ? 'page' : pageParam === 'current_page' ? 'page' : pageParam]: nextNo ?? pageNo + 1 };
    if (sizeField) set[sizeField.key] = sizeField.value;
    return { url: withQuery(page.url, set) };
  }

  // Offsets: advanced by what came.
  const offset = firstNum(places, 'offset', 'skip', 'start');
  if (offset !== undefined) {
    const limit = firstKey(places, 'limit', 'pageSize', 'page_size', 'per_page', 'size');
    const more = hasMore === true || (total !== undefined ? offset + page.got < total : page.got > 0 && limit !== undefined && page.got >= limit.value);
    if (!more || page.got === 0) return undefined;
    const offsetParam = firstKey(places, 'offset', 'skip', 'start')!.key;
    return { url: withQuery(page.url, { [offsetParam]: offset + page.got, ...(limit && { [limit.key]: limit.value }) }) };
  }

  // `has_more` and nothing else: after the last item (Stripe-like lists).
  if (hasMore === true && page.lastKey !== undefined) return { url: withQuery(page.url, { starting_after: page.lastKey }) };
  return undefined;
}

function firstNum(places: JsonObject[], ...keys: string[]): number | undefined {
  for (const p of places) {
    const v = num(p, ...keys);
    if (v !== undefined) return v;
  }
  return undefined;
}

function firstStr(places: JsonObject[], ...keys: string[]): string | undefined {
  for (const p of places) {
    const v = str(p, ...keys);
    if (v !== undefined) return v;
  }
  return undefined;
}

function firstBool(places: JsonObject[], ...keys: string[]): boolean | undefined {
  for (const p of places) {
    const v = bool(p, ...keys);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The first of `keys` with a number, and under which name. */
function firstKey(places: JsonObject[], ...keys: string[]): { key: string; value: number } | undefined {
  for (const p of places) {
    for (const key of keys) {
      const v = num(p, key);
      if (v !== undefined) return { key, value: v };
    }
  }
  return undefined;
}

/**
 * Read every page of a list route (see the module comment for the paging
 * styles followed and the bounds). Errors of a page are thrown as the client
 * core types them.
 */
export async function listAll(client: HttpClient, options: ListAllOptions): Promise<ListAllResult> {
  const pageSize = options.pageSize ?? PAGING_DEFAULTS.pageSize;
  const maxPages = options.maxPages ?? PAGING_DEFAULTS.maxPages;
  const maxItems = options.maxItems ?? PAGING_DEFAULTS.maxItems;
  const keyOf = options.keyOf ?? defaultKeyOf;
  const items: unknown[] = [];
  const seenKeys = new Set<string>();
  const seenUrls = new Set<string>();
  let url: URL | undefined = client.url(options.path, options.root ?? false, { ...options.query, limit: pageSize });
  let pages = 0;
  while (url) {
    if (pages >= maxPages || items.length >= maxItems) return { items, pages, complete: false };
    seenUrls.add(url.href);
    const res = await client.json({ path: url.href, signal: options.signal, ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }), ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }) });
    pages++;
    const got = pageItems(res.data);
    let added = 0;
    for (const item of got) {
      const key = keyOf(item);
      if (key !== undefined) {
        if (seenKeys.has(key)) continue;
        seenKeys.add(key);
      }
      if (items.length >= maxItems) break;
      items.push(item);
      added++;
    }
    // The first page again (paging parameters ignored), or an empty page: the end.
    if (added === 0) break;
    const next = nextPageUrl({ body: res.data, headers: res.headers, url: new URL(res.url), got: got.length, lastKey: keyOf(got[got.length - 1]), total: items.length, pageSize });
    url = next && !seenUrls.has(next.url.href) ? next.url : undefined;
  }
  return { items, pages, complete: true };
}
