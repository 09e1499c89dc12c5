/**
 * List queries and pagination shared by every task list (spec 2.4, 2.5, 4.3,
 * 4.4, 8): `page` (default 1), `limit` (1 to 100, default 20), `offset`
 * (default 0), `status`, `createdAfter` (ISO 8601). Lists are newest first.
 */
import { z } from 'zod';
import { LIMITS } from '../../../protocol/limits.js';

/** An ISO 8601 timestamp as a query value (anything `Date.parse` reads). */
export const isoTimestamp = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp')
  .meta({ format: 'date-time' });

/** Query fields of every list; extend with a `status` enum per task family. */
export const listQueryShape = {
  page: z.coerce.number().int().min(1).default(1).meta({ description: 'Page number, from 1 (envelope shape).' }),
  limit: z.coerce.number().int().min(LIMITS.listLimitMin).max(LIMITS.listLimitMax).default(LIMITS.listLimitDefault).meta({ description: 'Items per page, 1 to 100.' }),
  offset: z.coerce.number().int().min(0).default(0).meta({ description: 'Items to skip (flat shape); added to the page start.' }),
  createdAfter: isoTimestamp.optional().meta({ description: 'Only items created strictly after this ISO 8601 time.' }),
};

/** The list query without `status` (each family adds its own enum). */
export const listQuery = z.object(listQueryShape);
export type ListQuery = z.infer<typeof listQuery>;

/** One page of a list. */
export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  offset: number;
  hasMore: boolean;
  /** The next page number, or null on the last page. */
  nextPage: number | null;
}

/**
 * Slice `items` (already filtered and newest first): the page starts at
 * `(page - 1) * limit + offset`.
 */
export function paginate<T>(items: readonly T[], query: Pick<ListQuery, 'page' | 'limit' | 'offset'>): Page<T> {
  const start = (query.page - 1) * query.limit + query.offset;
  const slice = items.slice(start, start + query.limit);
  const hasMore = start + query.limit < items.length;
  return { items: slice, page: query.page, limit: query.limit, offset: query.offset, hasMore, nextPage: hasMore ? query.page + 1 : null };
}

/** Keep the items created strictly after `createdAfter` (an ISO 8601 string); all when absent. */
export function createdAfterFilter(createdAfter: string | undefined): (item: { createdAt: string }) => boolean {
  if (createdAfter === undefined) return () => true;
  const after = Date.parse(createdAfter);
  return (item) => Date.parse(item.createdAt) > after;
}
