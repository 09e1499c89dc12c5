/**
 * `Idempotency-Key` replay for creating POSTs (spec 3.5b, 8): the first
 * successful result of a key is stored and returned again for the same key
 * and the same body, without a second task or charge.
 *
 * Decisions (the spec leaves them open):
 * - Keys are scoped per account and per route (`scope`), 1 to 255 printable
 *   ASCII characters, and kept 24 h.
 * - Same key, different body: 422 `idempotency_key_reused` (the request is
 *   well formed but cannot be processed under that key; use a new key).
 * - Same key while the first request still runs: 409
 *   `idempotency_key_in_progress` (retry later).
 * - Only 2xx results are stored. An error (400, 402, 500...) frees the key,
 *   so the same request can be retried after fixing the cause.
 * - A missing key where a route requires one: 400 `idempotency_key_required`.
 * - A replay carries the header `idempotent-replayed: true`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { exclusively } from './exclusive.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, HttpError, badRequest } from '../../http/errors.js';
import type { Reply } from '../../http/router.js';
import type { Account, Collection } from '../../store/types.js';
import { payloadFingerprint } from './fingerprint.js';
import { HEADERS } from '../../../protocol/rest.js';

/** Error codes of Idempotency-Key handling. */
export const IdempotencyErrorCode = {
  required: ApiErrorCode.idempotencyKeyRequired,
  reused: ApiErrorCode.idempotencyKeyReused,
  inProgress: 'idempotency_key_in_progress',
} as const;

/** Name of the request header. */
export const IDEMPOTENCY_HEADER = HEADERS.idempotencyKey;
/** Header set on a replayed response. */
export const REPLAYED_HEADER = 'idempotent-replayed';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

interface IdempotencyRecord {
  scope: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  reply?: Reply;
  createdAt: number;
}

export interface IdempotencyOptions {
  /** How long a completed key is replayed; default 86_400_000 ms (24 h). */
  ttlMs?: number;
  /** Store collection; default `idempotency-keys`. */
  collection?: string;
}

/** The `Idempotency-Key` header of a request, validated; undefined when absent. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers[IDEMPOTENCY_HEADER];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return undefined;
  if (!KEY_PATTERN.test(value)) throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters');
  return value;
}

const inProgress = () => new HttpError(409, IdempotencyErrorCode.inProgress, 'a request with this Idempotency-Key is still in progress; retry later');

export class IdempotencyStore {
  readonly #ctx: ServerContext;
  readonly #records: Collection<IdempotencyRecord>;
  readonly #ttlMs: number;
  readonly #now: () => Date;

  constructor(ctx: ServerContext, options: IdempotencyOptions = {}) {
    this.#ctx = ctx;
    this.#records = ctx.store.collection<IdempotencyRecord>(options.collection ?? 'idempotency-keys');
    this.#ttlMs = options.ttlMs ?? 86_400_000; // 24 h
    this.#now = () => ctx.now();
  }

  /**
   * Run `produce` at most once per (account, scope, key, body): replay the
   * stored reply for a repeat, refuse a changed body or a concurrent repeat.
   * Without a key, `produce` runs (or 400 when `required`).
   */
  async run(account: Account, scope: string, key: string | undefined, payload: unknown, produce: () => Promise<Reply>, required = false): Promise<Reply> {
    if (key === undefined) {
      if (required) throw new HttpError(400, IdempotencyErrorCode.required, 'this route requires an Idempotency-Key header');
      return produce();
    }
    const id = `${account.userId}\u0000${scope}\u0000${key}`;
    return exclusively(this.#ctx, `idempotency:${id}`, () => inProgress(), () => this.#run(id, scope, payload, produce));
  }

  async #run(id: string, scope: string, payload: unknown, produce: () => Promise<Reply>): Promise<Reply> {
    const fingerprint = payloadFingerprint(payload);
    const now = this.#now().getTime();
    const existing = this.#records.get(id);
    if (existing && now - existing.createdAt < this.#ttlMs) {
      if (existing.fingerprint !== fingerprint) {
        throw new HttpError(422, IdempotencyErrorCode.reused, 'this Idempotency-Key was used with a different request body; use a new key for a changed request');
      }
      if (existing.state === 'in_progress' || !existing.reply) throw inProgress();
      return { ...existing.reply, headers: { ...existing.reply.headers, [REPLAYED_HEADER]: 'true' } };
    }
    const record: IdempotencyRecord = { scope, fingerprint, state: 'in_progress', createdAt: now };
    this.#records.set(id, record);
    try {
      const reply = await produce();
      const status = reply.status ?? 200;
      if (status >= 200 && status < 300) {
        record.state = 'completed';
        record.reply = reply;
        this.#records.set(id, record);
      } else {
        this.#records.delete(id);
      }
      return reply;
    } catch (err) {
      this.#records.delete(id);
      throw err;
    }
  }
}
