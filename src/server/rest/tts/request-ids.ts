/**
 * The sync TTS `X-Request-Id` table (spec 3.6), per account and request id:
 *
 * | earlier request        | same id, same payload            | same id, other payload |
 * |------------------------|----------------------------------|------------------------|
 * | in progress            | 409 ERR_REQUEST_IN_PROGRESS      | 409 ERR_REQUEST_ID_CONFLICT |
 * | completed, cache=true  | replay the stored JSON, no charge| 409 ERR_REQUEST_ID_CONFLICT |
 * | completed, binary      | 409 ERR_REQUEST_ALREADY_COMPLETED| 409 ERR_REQUEST_ID_CONFLICT |
 * | refunded (gen. failed) | 409 ERR_REQUEST_PREVIOUSLY_REFUNDED | 409 ERR_REQUEST_ID_CONFLICT |
 *
 * A request rejected before any charge (400, 402, 403) leaves no entry, so the
 * same id can be used again once the cause is fixed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LIMITS } from '../../../protocol/limits.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, HttpError, badRequest } from '../../http/errors.js';
import type { Account, Collection } from '../../store/types.js';
import { HEADERS } from '../../../protocol/rest.js';

export const RequestIdState = {
  inProgress: 'in_progress',
  completedCache: 'completed_cache',
  completedBinary: 'completed_binary',
  refunded: 'refunded',
} as const;
export type RequestIdState = (typeof RequestIdState)[keyof typeof RequestIdState];

interface RequestIdRecord {
  userId: string;
  requestId: string;
  fingerprint: string;
  state: RequestIdState;
  /** The stored JSON of a `cache: true` success. */
  response?: unknown;
  updatedAt: string;
}

/** What `begin` decided. */
export type RequestIdSlot = { kind: 'new'; key: string } | { kind: 'replay'; response: unknown };

/** The `X-Request-Id` header, validated (1 to 128 printable characters); undefined when absent. */
export function clientRequestIdOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers[HEADERS.requestId];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return undefined;
  if (value.length < LIMITS.idMinChars || value.length > LIMITS.idMaxChars || !/^[\x21-\x7e]+$/.test(value)) {
    throw badRequest('X-Request-Id must be 1 to 128 printable ASCII characters');
  }
  return value;
}

/** 409: another request with this X-Request-Id runs now. */
export const requestInProgress = () => new HttpError(409, ApiErrorCode.requestInProgress, 'a request with this X-Request-Id is still in progress');

export class RequestIdTable {
  readonly #records: Collection<RequestIdRecord>;

  constructor(private readonly ctx: ServerContext) {
    this.#records = ctx.store.collection<RequestIdRecord>('sync-tts-request-ids');
  }

  /** Claim `requestId` for a new generation, replay a cached result, or throw the 409 of the table. */
  begin(account: Account, requestId: string, fingerprint: string): RequestIdSlot {
    const key = `${account.userId}\u0000${requestId}`;
    const existing = this.#records.get(key);
    if (!existing) {
      this.#records.set(key, { userId: account.userId, requestId, fingerprint, state: RequestIdState.inProgress, updatedAt: this.ctx.now().toISOString() });
      return { kind: 'new', key };
    }
    if (existing.fingerprint !== fingerprint) {
      throw new HttpError(409, ApiErrorCode.requestIdConflict, 'this X-Request-Id was used with a different payload; use a new id for a new generation');
    }
    switch (existing.state) {
      case RequestIdState.inProgress:
        throw requestInProgress();
      case RequestIdState.completedCache:
        return { kind: 'replay', response: existing.response };
      case RequestIdState.completedBinary:
        throw new HttpError(409, ApiErrorCode.requestAlreadyCompleted, 'this X-Request-Id already completed with binary audio; its audio cannot be replayed (use cache: true to get a replayable URL)');
      case RequestIdState.refunded:
        throw new HttpError(409, ApiErrorCode.requestPreviouslyRefunded, 'this X-Request-Id failed and was refunded; fix the failure and send a new id');
    }
  }

  /** The generation finished (`response` given for cache=true results). */
  complete(key: string, response?: unknown): void {
    this.#update(key, response === undefined ? { state: RequestIdState.completedBinary } : { state: RequestIdState.completedCache, response });
  }

  /** The generation failed and its charge was given back. */
  refunded(key: string): void {
    this.#update(key, { state: RequestIdState.refunded });
  }

  /** Nothing was charged (e.g. 402): forget the id so it can be used again. */
  abandon(key: string): void {
    this.#records.delete(key);
  }

  #update(key: string, patch: Partial<RequestIdRecord>): void {
    const record = this.#records.get(key);
    if (!record) return;
    Object.assign(record, patch, { updatedAt: this.ctx.now().toISOString() });
    this.#records.set(key, record);
  }
}
