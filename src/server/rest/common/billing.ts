/**
 * Billing rules of the HTTP routes (decided here; spec 1, 3.1, 4.1-4.3, 5, 8).
 *
 * - HTTP text to speech (sync `/speech/tts`, compatible `/v1/audio/speech`,
 *   async `/speech/tts/jobs` and `/tts/tasks`) is paid in **credits**, one
 *   credit per character (Unicode code point) of the text.
 * - Sync and compatible TTS charge on success: the charge is held before
 *   generation (so a short balance answers 402 before any work), committed
 *   when the audio is complete, and released when generation fails (the
 *   request is then "refunded" in the sense of spec 3.6).
 * - Async jobs pre-deduct once at accept with ledger refId `job:<taskId>`;
 *   a job that fails is refunded idempotently (`ledger.release` restores the
 *   balance exactly once, however often the failure is reported). A job that
 *   ends `partial_fail` keeps the charge of the characters it delivered and
 *   gives back the rest (see `settle`).
 * - 402 `insufficient_credits` when the balance is short; nothing is held.
 * - `quota_remaining`, `quotaRemaining` and `X-OpenAPI-Quota-Remaining`
 *   report the account's remaining API quota (`account.apiQuota`, spec 2.1).
 * - Authentication, status reads, lists, downloads and repeated downloads
 *   never charge.
 */
import { countChars } from '../../../protocol/limits.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, HttpError } from '../../http/errors.js';
import { InsufficientBalance, type HoldResult } from '../../ledger.js';
import type { Account, Currency } from '../../store/types.js';

/** Credits charged for synthesizing `text`: one per code point. */
export function ttsCredits(text: string): number {
  return countChars(text);
}

/**
 * Hold `amount` of `currency` under `refId` (idempotent per refId), turning a
 * short balance into 402 `insufficient_credits` with the needed and available
 * amounts as extra properties.
 */
export async function holdOr402(ctx: ServerContext, account: Account, currency: Currency, amount: number, refId: string, reason: string): Promise<HoldResult> {
  try {
    return await ctx.ledger.hold(account, currency, amount, refId, reason);
  } catch (err) {
    if (err instanceof InsufficientBalance) {
      throw new HttpError(402, ApiErrorCode.insufficientCredits, err.message, { currency: err.currency, needed: err.needed, available: err.available });
    }
    throw err;
  }
}

/**
 * Keep only `keep` of the hold `refId` (partial delivery): the whole hold is
 * released and `keep` is held again under `<refId>:settled`. Both steps are
 * idempotent, so settling twice changes nothing more. Returns the amount now
 * charged at once; the second hold completes in the background (`done`).
 */
export function settle(ctx: ServerContext, account: Account, refId: string, keep: number): { charged: number; done: Promise<void> } {
  const entry = ctx.store.ledger.get(refId);
  if (!entry) return { charged: 0, done: Promise.resolve() };
  if (keep >= entry.amount) {
    ctx.ledger.commit(refId);
    return { charged: entry.amount, done: Promise.resolve() };
  }
  ctx.ledger.release(refId);
  if (keep <= 0) return { charged: 0, done: Promise.resolve() };
  const done = ctx.ledger.hold(account, entry.currency, keep, `${refId}:settled`, `${entry.reason} (partial delivery)`).then((settled) => {
    ctx.ledger.commit(settled.entry.refId);
  });
  return { charged: keep, done };
}

/** Remaining API quota as reported by `quota_remaining` and `X-OpenAPI-Quota-Remaining`. */
export function quotaRemaining(account: Account): number {
  return account.apiQuota;
}
