/**
 * The server's internal errors go to its injected log, never to
 * the client: the client gets a plain 500, the log gets where and the error.
 */
import { expect, it } from 'vitest';
import { defineRoute, type RouteDef } from '../../../src/server/http/router.js';
import { startServer } from '../../../src/server/index.js';

it('an internal error is logged once with where it happened, and the client sees only internal_error', async () => {
  const logged: { where: string; error: unknown }[] = [];
  const server = await startServer({ engine: 'tone', log: (where, error) => logged.push({ where, error }) });
  try {
    server.router.add(defineRoute({ method: 'GET', path: '/api/open/v1/boom', summary: 'test', auth: false, handler: () => { throw new Error('kaboom in a handler'); } }) as unknown as RouteDef<never, never>);
    const res = await fetch(`${server.baseUrl}/boom`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).toContain('internal_error');
    expect(body).not.toContain('kaboom');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.where).toBe('internal error on GET /api/open/v1/boom');
    expect((logged[0]!.error as Error).message).toBe('kaboom in a handler');
  } finally {
    await server.close();
  }
});
