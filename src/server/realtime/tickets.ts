/**
 * Browser tickets (spec 4.10, 5.5): a trusted server exchanges its API key for
 * a single-use, short-lived ticket; the browser, which cannot set headers,
 * sends it as the first frame `{ event: 'auth', token }`. A ticket is bound to
 * the site, the Host the ticket was asked from and the Origin given in the
 * body: the upgrade's Host and Origin headers must match both.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { REALTIME_PATHS } from '../../protocol/constants.js';
import type { ServerContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { defineRoute, type RouteDef } from '../http/router.js';
import type { Account, Collection, Release } from '../store/types.js';
import { REALTIME_TUNING } from './tuning.js';

interface TicketRecord {
  ticket: string;
  userId: string;
  site: string;
  host: string;
  origin: string;
  expiresAtMs: number;
}

/** Why a ticket was refused (the message of `authentication_failed`; never echoes the ticket). */
export type TicketRefusal = 'unknown or already used ticket' | 'ticket expired' | 'ticket not valid for this site' | 'ticket not valid for this host' | 'ticket not valid for this origin' | 'account unavailable';

/** The origin of `value` when it is exactly an http(s) origin (`scheme://host[:port]`, no path), else undefined. */
export function normalizeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // `new URL` lower-cases the host and drops a default port; a trailing slash is tolerated.
  return value.replace(/\/$/, '').toLowerCase() === url.origin.toLowerCase() ? url.origin : undefined;
}

/** Issues and redeems browser tickets, kept in the store's `realtime-tickets` collection. */
export class TicketBook {
  readonly #tickets: Collection<TicketRecord>;

  /** `ttlMs`: lifetime of a ticket; default REALTIME_TUNING.ticketTtlMs (60 s). */
  constructor(private readonly ctx: ServerContext, private readonly ttlMs?: number) {
    this.#tickets = ctx.store.collection<TicketRecord>('realtime-tickets');
  }

  /** A new ticket for `account`, bound to `host` and `origin` (already normalized). */
  issue(account: Account, host: string, origin: string): TicketRecord {
    this.#sweep();
    const record: TicketRecord = {
      ticket: `tkt_${randomBytes(32).toString('base64url')}`,
      userId: account.userId,
      site: this.ctx.site,
      host: host.toLowerCase(),
      origin,
      expiresAtMs: this.ctx.now().getTime() + (this.ttlMs ?? REALTIME_TUNING.ticketTtlMs),
    };
    this.#tickets.set(record.ticket, record);
    return record;
  }

  /**
   * The account of `ticket` when it is valid for this upgrade's Host and
   * Origin, else the refusal. Every attempt consumes the ticket, so a stolen
   * ticket tried from the wrong origin cannot be tried again.
   *
   * Single use across processes sharing the store: the redemption runs
   * under the ticket's claim (a process trying it meanwhile is refused), reads
   * what other processes wrote once it holds the claim (a redemption that
   * ended elsewhere shows as the ticket's deletion), and lets the claim go
   * only once its own deletion is kept.
   */
  async redeem(ticket: string, host: string | undefined, origin: string | undefined): Promise<Account | TicketRefusal> {
    const { store } = this.ctx;
    let release: Release | undefined;
    if (store.processes) {
      // The lock's name carries a digest, never the ticket itself.
      release = await store.processes.claim(`ticket:${createHash('sha256').update(ticket).digest('base64url')}`);
      if (!release) return 'unknown or already used ticket';
    }
    try {
      if (release) await store.sync?.();
      const record = this.#tickets.get(ticket);
      if (!record) return 'unknown or already used ticket';
      this.#tickets.delete(ticket);
      if (release) await store.flush?.();
      return this.#check(record, host, origin);
    } finally {
      await release?.();
    }
  }

  #check(record: TicketRecord, host: string | undefined, origin: string | undefined): Account | TicketRefusal {
    if (this.ctx.now().getTime() > record.expiresAtMs) return 'ticket expired';
    if (record.site !== this.ctx.site) return 'ticket not valid for this site';
    if (host === undefined || host.toLowerCase() !== record.host) return 'ticket not valid for this host';
    if (origin === undefined || normalizeOrigin(origin) !== record.origin) return 'ticket not valid for this origin';
    const account = this.ctx.store.accounts.get(record.userId);
    if (!account || account.disabled) return 'account unavailable';
    return account;
  }

  #sweep(): void {
    const now = this.ctx.now().getTime();
    for (const r of [...this.#tickets.values()]) if (now > r.expiresAtMs) this.#tickets.delete(r.ticket);
  }
}

const TicketBodySchema = z.object({ origin: z.string().min(1).max(2048) });
const TicketResponseSchema = z.object({ ticket: z.string(), expires_at: z.string(), site: z.string(), origin: z.string() });

/** `POST /v2/tts/browser-tickets` with Bearer key and `{ origin }`. */
export function browserTicketRoute(ctx: Pick<ServerContext, 'dialect'>, book: TicketBook): RouteDef<z.infer<typeof TicketBodySchema>> {
  return defineRoute({
    method: 'POST',
    path: REALTIME_PATHS.browserTickets,
    summary: 'Exchange the API key for a single-use browser ticket of the realtime service',
    tags: ['realtime'],
    body: TicketBodySchema,
    responses: { 200: { description: 'ticket, valid once for 60 s from the given origin on this host', schema: TicketResponseSchema } },
    handler({ body, account, req }) {
      const origin = normalizeOrigin(body.origin);
      if (origin === undefined) throw badRequest('origin must be an http(s) origin such as https://app.example.com (no path)');
      const host = req.headers.host;
      if (!host) throw badRequest('missing Host header');
      const record = book.issue(account, host, origin);
      // The ticket's field name is a deployment's choice (spec 4.10: "returning a ticket"); the dialect picks it.
      return { json: { [ctx.dialect.ticketField]: record.ticket, expires_at: new Date(record.expiresAtMs).toISOString(), site: record.site, origin: record.origin } };
    },
  });
}
