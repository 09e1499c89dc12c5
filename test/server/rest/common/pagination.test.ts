import { describe, expect, it } from 'vitest';
import { createdAfterFilter, listQuery, paginate } from '../../../../src/server/rest/common/pagination.js';

describe('list queries and pagination', () => {
  const items = Array.from({ length: 45 }, (_, i) => i);

  it('defaults page 1, limit 20, offset 0 and coerces query strings', () => {
    expect(listQuery.parse({})).toEqual({ page: 1, limit: 20, offset: 0 });
    expect(listQuery.parse({ page: '2', limit: '100', offset: '3' })).toEqual({ page: 2, limit: 100, offset: 3 });
    for (const bad of [{ limit: '0' }, { limit: '101' }, { page: '0' }, { offset: '-1' }, { limit: '2.5' }, { createdAfter: 'soon' }]) {
      expect(listQuery.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('pages with hasMore and nextPage, offset added to the page start', () => {
    expect(paginate(items, { page: 1, limit: 20, offset: 0 })).toMatchObject({ items: items.slice(0, 20), hasMore: true, nextPage: 2 });
    expect(paginate(items, { page: 3, limit: 20, offset: 0 })).toMatchObject({ items: items.slice(40), hasMore: false, nextPage: null });
    expect(paginate(items, { page: 1, limit: 20, offset: 25 })).toMatchObject({ items: items.slice(25, 45), hasMore: false });
    expect(paginate(items, { page: 9, limit: 20, offset: 0 }).items).toEqual([]);
    expect(paginate(items.slice(0, 20), { page: 1, limit: 20, offset: 0 }).hasMore).toBe(false);
  });

  it('createdAfter is strict', () => {
    const keep = createdAfterFilter('2026-01-01T00:00:00Z');
    expect(keep({ createdAt: '2026-01-01T00:00:00.000Z' })).toBe(false);
    expect(keep({ createdAt: '2026-01-01T00:00:00.001Z' })).toBe(true);
    expect(createdAfterFilter(undefined)({ createdAt: '1970-01-01T00:00:00Z' })).toBe(true);
  });
});
