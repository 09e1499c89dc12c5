/**
 * Work keyed by a client's id (an `Idempotency-Key`, an `X-Request-Id`) that
 * must not run twice at once. One process sees its own in-progress record;
 * several processes on one store (`SharedProcesses`) might not, in the few
 * milliseconds before it is written and read: so there the work runs under a
 * claim on the key, the store read again under it, and a second request
 * meanwhile, on any process, gets `busy()` (the route's 409 "in progress").
 */
import type { ServerContext } from '../../context.js';

export async function exclusively<T>(ctx: ServerContext, name: string, busy: () => Error, work: () => Promise<T>): Promise<T> {
  const processes = ctx.store.processes;
  if (!processes) return work();
  const release = await processes.claim(name);
  if (!release) throw busy();
  try {
    await ctx.store.sync?.();
    const result = await work();
    // Written before another process may take the key and read its record.
    await ctx.store.flush?.();
    return result;
  } finally {
    await release();
  }
}
