import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../src/server/http/errors.js';
import { idempotencyKeyOf, IdempotencyStore } from '../../../../src/server/rest/common/idempotency.js';
import { testContext } from './context.js';

async function errorOf(p: Promise<unknown>): Promise<HttpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HttpError);
  return err as HttpError;
}

describe('IdempotencyStore', () => {
  it('runs once per key and body, replaying the stored reply with idempotent-replayed', async () => {
    const t = testContext();
    const store = new IdempotencyStore(t.ctx);
    const account = t.account();
    let runs = 0;
    const produce = async () => ({ status: 202, json: { n: ++runs } });
    const first = await store.run(account, 'scope', 'k1', { a: 1, b: 2 }, produce);
    // Same body with keys in another order is the same body.
    const again = await store.run(account, 'scope', 'k1', { b: 2, a: 1 }, produce);
    expect(first.json).toEqual({ n: 1 });
    expect(again).toMatchObject({ status: 202, json: { n: 1 }, headers: { 'idempotent-replayed': 'true' } });
    expect(runs).toBe(1);
    // Other scope, other account, or no key: a new run.
    await store.run(account, 'other-scope', 'k1', { a: 1, b: 2 }, produce);
    await store.run(t.account(), 'scope', 'k1', { a: 1, b: 2 }, produce);
    await store.run(account, 'scope', undefined, { a: 1, b: 2 }, produce);
    expect(runs).toBe(4);
  });

  it('422 idempotency_key_reused for another body; 409 while the first still runs', async () => {
    const t = testContext();
    const store = new IdempotencyStore(t.ctx);
    const account = t.account();
    let release!: () => void;
    const slow = store.run(account, 's', 'k', { x: 1 }, () => new Promise((r) => (release = () => r({ status: 200, json: {} }))));
    const inProgress = await errorOf(store.run(account, 's', 'k', { x: 1 }, async () => ({ status: 200 })));
    expect([inProgress.status, inProgress.code]).toEqual([409, 'idempotency_key_in_progress']);
    release();
    await slow;
    const reused = await errorOf(store.run(account, 's', 'k', { x: 2 }, async () => ({ status: 200 })));
    expect([reused.status, reused.code]).toEqual([422, 'idempotency_key_reused']);
  });

  it('does not keep error replies or thrown errors: the key can be retried', async () => {
    const t = testContext();
    const store = new IdempotencyStore(t.ctx);
    const account = t.account();
    await errorOf(store.run(account, 's', 'k', {}, async () => Promise.reject(new HttpError(402, 'insufficient_credits', 'short'))));
    await store.run(account, 's', 'k', {}, async () => ({ status: 500, json: {} }));
    const ok = await store.run(account, 's', 'k', {}, async () => ({ status: 200, json: { ok: true } }));
    expect(ok.json).toEqual({ ok: true });
  });

  it('forgets keys after the ttl; requires a key when asked; validates the header', async () => {
    const t = testContext();
    const store = new IdempotencyStore(t.ctx, { ttlMs: 1000 });
    const account = t.account();
    let runs = 0;
    const produce = async () => ({ status: 200, json: { n: ++runs } });
    await store.run(account, 's', 'k', {}, produce);
    t.advance(1001);
    expect((await store.run(account, 's', 'k', {}, produce)).json).toEqual({ n: 2 });
    const required = await errorOf(store.run(account, 's', undefined, {}, produce, true));
    expect([required.status, required.code]).toEqual([400, 'idempotency_key_required']);
    expect(idempotencyKeyOf({ 'idempotency-key': 'abc-123' })).toBe('abc-123');
    expect(idempotencyKeyOf({})).toBeUndefined();
    expect(() => idempotencyKeyOf({ 'idempotency-key': 'x'.repeat(256) })).toThrow(HttpError);
  });
});
