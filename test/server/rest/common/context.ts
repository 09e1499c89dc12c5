/** A minimal server context for unit tests of the REST helpers (no HTTP, no engine). */
import type { ServerContext } from '../../../../src/server/context.js';
import { newId } from '../../../../src/server/context.js';
import { Faults } from '../../../../src/server/faults.js';
import { Ledger } from '../../../../src/server/ledger.js';
import { MemoryStore } from '../../../../src/server/store/memory.js';
import { accountFromSeed, type AccountSeed } from '../../../../src/server/app.js';
import type { Account } from '../../../../src/server/store/types.js';

export interface TestContext {
  ctx: ServerContext;
  /** Move the clock by `ms`. */
  advance(ms: number): void;
  account(seed?: Partial<AccountSeed>): Account;
  /** What the server logged as internal errors. */
  logs: { where: string; error: unknown }[];
}

export function testContext(): TestContext {
  const store = new MemoryStore();
  let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
  let n = 0;
  const logs: { where: string; error: unknown }[] = [];
  const ctx = {
    store,
    ledger: new Ledger(store),
    faults: new Faults(),
    urls: { baseUrl: 'http://test/api/open/v1', rootUrl: 'http://test', wsUrl: 'ws://test', rtHttpUrl: 'http://test' },
    now: () => new Date(nowMs),
    newId,
    log: (where: string, error: unknown) => logs.push({ where, error }),
  } as unknown as ServerContext;
  return {
    ctx,
    logs,
    advance(ms) {
      nowMs += ms;
    },
    account(seed = {}) {
      n++;
      const account = accountFromSeed({ apiKey: `sk-unit-${n}`, userId: `unit-${n}`, credits: 100, ...seed });
      store.accounts.set(account.userId, account);
      return account;
    },
  };
}
