/**
 * Usage summary (spec 4.9): `GET /usage` gives the balance, API usage
 * (`apiUsage.totalCreditsCharged` and friends, over the whole ledger) and
 * the most recent ledger entries, newest first (`limit`, default 20).
 * "Charged" means held or committed and not refunded, as `Ledger.totalCharged`.
 */
import type { ServerContext } from '../../context.js';
import { defineRoute, type RouteDef } from '../../http/router.js';
import type { Account, LedgerEntry } from '../../store/types.js';
import { accountErrors } from './docs.js';
import { usageQuery, usageResponse, type UsageQuery } from './schemas.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const USAGE_PATH = serverPath(REST_ROUTES.usage);

function refunded(entries: readonly LedgerEntry[], currency: LedgerEntry['currency']): number {
  return entries.filter((e) => e.currency === currency && e.state === 'released').reduce((sum, e) => sum + e.amount, 0);
}

/** The usage summary of `account`. */
export function usageSummary(ctx: ServerContext, account: Account, query: UsageQuery): Record<string, unknown> {
  const entries = ctx.ledger.entriesOf(account.userId);
  const shown = entries.filter((e) => query.currency === undefined || e.currency === query.currency);
  return {
    user_id: account.userId,
    balance: { credits: account.credits, apiQuota: account.apiQuota },
    apiUsage: {
      totalCreditsCharged: ctx.ledger.totalCharged(account.userId, 'credits'),
      totalQuotaCharged: ctx.ledger.totalCharged(account.userId, 'quota'),
      totalCreditsRefunded: refunded(entries, 'credits'),
      totalQuotaRefunded: refunded(entries, 'quota'),
      charges: entries.length,
    },
    ledger: shown.slice(0, query.limit).map((e) => ({
      refId: e.refId,
      currency: e.currency,
      amount: e.amount,
      state: e.state,
      reason: e.reason,
      createdAt: e.createdAt,
      releasedAt: e.releasedAt ?? null,
    })),
    pagination: { limit: query.limit, hasMore: shown.length > query.limit },
  };
}

export function usageRoutes(ctx: ServerContext): RouteDef<never, never>[] {
  return [
    defineRoute<unknown, UsageQuery>({
      method: 'GET',
      path: USAGE_PATH,
      summary: 'Usage summary: balance, API usage (apiUsage.totalCreditsCharged) and the recent ledger',
      tags: ['account'],
      query: usageQuery,
      responses: { 200: { description: 'Usage summary', schema: usageResponse }, ...accountErrors(400, 401) },
      handler: ({ account, query }) => ({ json: usageSummary(ctx, account, query) }),
    }),
  ] as unknown as RouteDef<never, never>[];
}
