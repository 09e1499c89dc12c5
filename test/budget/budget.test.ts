/**
 * The deployment budget alone (`src/budget.ts`): slots, the fair queue with
 * its priority, a refusal's lesson and shared wait, and a slot given back
 * once however a generation ends. The clock is injected; no time passes.
 */
import { describe, expect, it } from 'vitest';
import { DeploymentBudget, deploymentBudget, envMaxConcurrency, Priority } from '../../src/budget.js';
import { AbortError, QueueTimeoutError } from '../../src/errors.js';

/** Settle pending promise callbacks. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('DeploymentBudget', () => {
  it('grants up to the cap, then first come first served, interactive before batch', async () => {
    const budget = new DeploymentBudget({ maxConcurrency: 1 });
    const first = budget.seat();
    await first.take();
    const order: string[] = [];
    const waiting = [
      ['batch-1', budget.seat({ priority: Priority.batch })],
      ['batch-2', budget.seat({ priority: Priority.batch })],
      ['interactive-1', budget.seat({ priority: Priority.interactive })],
      ['interactive-2', budget.seat()],
    ] as const;
    for (const [name, seat] of waiting) void seat.take().then(() => order.push(name));
    await tick();
    expect(order).toEqual([]);
    expect(budget.stats()).toMatchObject({ running: 1, queued: 4, limit: 1 });
    first.release();
    const byName = new Map<string, (typeof waiting)[number][1]>(waiting);
    for (let i = 0; i < waiting.length; i++) {
      await tick();
      byName.get(order[i]!)!.release();
    }
    await tick();
    expect(order).toEqual(['interactive-1', 'interactive-2', 'batch-1', 'batch-2']);
    expect(budget.stats()).toMatchObject({ running: 0, queued: 0, peak: 1 });
  });

  it('gives a slot back once, whatever ends the generation and however often', async () => {
    const budget = new DeploymentBudget({ maxConcurrency: 2 });
    const a = budget.seat();
    const b = budget.seat();
    await a.take();
    await b.take();
    await a.take(); // held: no second slot
    expect(budget.stats().running).toBe(2);
    a.release();
    a.release();
    expect(budget.stats().running).toBe(1);
    // A seat that ends while waiting leaves the queue and takes nothing.
    const c = budget.seat();
    const d = budget.seat();
    await c.take();
    const waited = d.take().catch((e: unknown) => e);
    c.release();
    await tick();
    d.release();
    b.release();
    await tick();
    expect(await waited).toBeUndefined();
    expect(budget.stats()).toMatchObject({ running: 0, queued: 0 });
    const e = budget.seat();
    const f = budget.seat();
    await e.take();
    await f.take();
    const g = budget.seat();
    const gone = g.take().catch((err: unknown) => err);
    g.release();
    expect(await gone).toBeInstanceOf(AbortError);
    e.release();
    f.release();
    expect(budget.stats()).toMatchObject({ running: 0, queued: 0 });
  });

  it('learns the cap from a refusal: the slots still held are what the deployment admitted', async () => {
    let now = 1_000;
    const budget = new DeploymentBudget({ now: () => now });
    const seats = Array.from({ length: 10 }, () => budget.seat());
    for (const s of seats) await s.take();
    expect(budget.stats().limit).toBeNull();
    // The deployment admitted 4 of 10: six refusals teach a cap of 4.
    for (const s of seats.slice(4)) s.refused(undefined);
    expect(budget.stats()).toMatchObject({ running: 4, limit: 4, refusals: 6 });
    // The refused line up first again, and wait for the admitted to end.
    const order: number[] = [];
    seats.slice(4).forEach((s, i) => void s.take().then(() => order.push(i)));
    const late = budget.seat();
    void late.take().then(() => order.push(99));
    await tick();
    expect(order).toEqual([]);
    seats[0]!.release();
    await tick();
    expect(order).toEqual([0]);
    // Quiet long enough, ending generations raise the learnt cap again (one per `limit` of them).
    now += 10_000;
    for (const s of seats.slice(1, 4)) s.release();
    await tick();
    for (const s of seats.slice(4)) s.release();
    await tick();
    expect(budget.stats().limit).toBeGreaterThan(4);
    late.release();
  });

  it("closes the deployment for everyone for a refusal's Retry-After", async () => {
    let now = 0;
    const budget = new DeploymentBudget({ now: () => now });
    const refused = budget.seat();
    await refused.take();
    refused.refused(1_000);
    expect(budget.closedForMs()).toBe(1_000);
    // Another generation, never refused itself, waits too.
    const other = budget.seat();
    let started = false;
    void other.take().then(() => (started = true));
    await tick();
    expect(started).toBe(false);
    now = 1_000;
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect(started).toBe(true);
    other.release();
    refused.release();
  });

  it('ends a wait past queueTimeoutMs in a typed queue_timeout that names the wait', async () => {
    const budget = new DeploymentBudget({ maxConcurrency: 1 });
    const holder = budget.seat();
    await holder.take();
    const err = await budget
      .seat({ queueTimeoutMs: 20 })
      .take()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueTimeoutError);
    expect(err).toMatchObject({ code: 'queue_timeout', retryable: true, waitedMs: 20 });
    expect((err as Error).message).toMatch(/no slot .* within 20 ms/);
    expect(budget.stats()).toMatchObject({ running: 1, queued: 0 });
    holder.release();
  });

  it('takes its default cap from VOXPIPE_MAX_CONCURRENCY, a whole number from 1', () => {
    expect(envMaxConcurrency({ VOXPIPE_MAX_CONCURRENCY: '50' })).toBe(50);
    expect(envMaxConcurrency({})).toBeUndefined();
    expect(envMaxConcurrency({ VOXPIPE_MAX_CONCURRENCY: '0' })).toBeUndefined();
    expect(envMaxConcurrency({ VOXPIPE_MAX_CONCURRENCY: 'lots' })).toBeUndefined();
  });

  it('is one per deployment: every URL of the origin and the same key share it; the key is not kept in the clear', () => {
    const key = 'sk-budget-identity-0123456789';
    const rest = deploymentBudget('http://127.0.0.1:9/api/open/v1', key);
    expect(deploymentBudget('ws://127.0.0.1:9', key)).toBe(rest);
    expect(deploymentBudget('http://127.0.0.1:9/api/open/v1', 'sk-another-key-0123456789')).not.toBe(rest);
    expect(deploymentBudget('http://127.0.0.1:10/api/open/v1', key)).not.toBe(rest);
    expect(JSON.stringify(rest.stats())).not.toContain(key);
  });
});
