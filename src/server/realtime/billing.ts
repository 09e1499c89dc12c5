/**
 * Realtime billing (spec 6 rule 4, 8): one unit per character of a segment,
 * counted in the account's API quota. Units are reserved (a ledger hold)
 * before the engine runs, committed at the segment's first valid audio, and
 * released when the segment fails before any audio. A session carries at most
 * LIMITS.sessionMaxUnits units.
 *
 * The hold's refId is `rt:<userId>:<requestId>:<segmentId>`, so a segment
 * re-executed by `retry_failed` reuses it and is never charged twice. Only
 * when an earlier attempt was refunded (it failed before any audio) does a
 * retry take a fresh refId (`...#2`, `#3`), because a refunded hold cannot be
 * held again and the segment would otherwise be generated for free.
 */
import { ErrorCode } from '../../protocol/constants.js';
import { LIMITS } from '../../protocol/limits.js';
import { InsufficientBalance, type Ledger } from '../ledger.js';
import type { Account, Store } from '../store/types.js';
import { RealtimeFailure } from './failure.js';

/** Currency of realtime TTS. */
export const REALTIME_CURRENCY = 'quota' as const;

/**
 * Base refId of a segment's hold. The parts are URI-encoded so that ids
 * holding `:` cannot collide (request `a:b` + segment `c` against request
 * `a` + segment `b:c`), which would let one segment ride on another's charge.
 */
export function segmentRefId(userId: string, requestId: string, segmentId: string): string {
  return `rt:${[userId, requestId, segmentId].map(encodeURIComponent).join(':')}`;
}

export interface Reservation {
  refId: string;
  units: number;
  /** False when the refId was already held by an earlier attempt: nothing new was charged. */
  charged: boolean;
  /** Set by the first commit. */
  committed: boolean;
}

/** The units of one connection (session) and its holds. */
export class SessionBilling {
  /** Units of segments reserved on this session and not released (what the session limit counts). */
  units = 0;
  /** Units of this session's segments that delivered audio (`usage.session_units`). */
  committedUnits = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly store: Store,
    private readonly account: Account,
    private readonly maxUnits: number = LIMITS.sessionMaxUnits,
  ) {}

  /** Quota left on the account. */
  get quotaRemaining(): number {
    return this.account.apiQuota;
  }

  /**
   * Reserve `units` under `baseRefId` (or the refId of a previous attempt):
   * the hold is the store's atomic step (the balance checked inside it).
   * Rejects with `session_limit_exceeded` or `quota_exceeded` (both non-terminal:
   * the flush is refused and the connection stays usable).
   */
  async reserve(units: number, baseRefId: string): Promise<Reservation> {
    if (this.units + units > this.maxUnits) {
      throw new RealtimeFailure(ErrorCode.sessionLimitExceeded, `segment of ${units} units would exceed the session limit of ${this.maxUnits} units (${this.units} used)`, { stage: 'billing' });
    }
    let refId = baseRefId;
    for (let attempt = 2; this.store.ledger.get(refId)?.state === 'released'; attempt++) refId = `${baseRefId}#${attempt}`;
    // Counted before the hold resolves, so the session limit holds while it waits.
    this.units += units;
    try {
      const { charged } = await this.ledger.hold(this.account, REALTIME_CURRENCY, units, refId, 'realtime tts segment');
      return { refId, units, charged, committed: false };
    } catch (err) {
      this.units -= units;
      if (err instanceof InsufficientBalance) {
        throw new RealtimeFailure(ErrorCode.quotaExceeded, `insufficient API quota: segment needs ${units} units, ${err.available} remaining`, { stage: 'billing' });
      }
      throw err;
    }
  }

  /** Make the hold final at the first valid audio (idempotent). */
  commit(reservation: Reservation): void {
    if (reservation.committed) return;
    reservation.committed = true;
    this.committedUnits += reservation.units;
    this.ledger.commit(reservation.refId);
  }

  /**
   * Give back a hold whose segment produced no audio. A hold taken by an
   * earlier attempt (charged false) is released too, since no attempt of that
   * segment has delivered audio while it is still held rather than committed.
   */
  release(reservation: Reservation): void {
    const entry = this.store.ledger.get(reservation.refId);
    if (entry?.state === 'held') this.ledger.release(reservation.refId);
    this.units -= reservation.units;
  }
}
