/**
 * Task-completion webhooks (decided here; the spec names only the profile's
 * `webhookUrl`, section 6).
 *
 * - When any task of any family reaches a terminal state, one event is sent
 *   to the owner's `webhookUrl` (as set at that moment):
 *   `{ id, type, createdAt, data: { taskId, taskType, status, ... } }` with
 *   `type` one of WebhookEventType.
 * - Signed as `verify.ts` describes, with the account's `webhookSecret`.
 * - A non-2xx answer (a redirect included: redirects are not followed), a
 *   network error or a timeout is retried with exponential backoff, at most
 *   `maxAttempts` times; the event id and body stay the same on every
 *   attempt, the signature is fresh.
 * - Exactly one event per task and terminal state: deliveries are keyed by
 *   task type, id and state, and a second report of the same state sends
 *   nothing. Once a receiver accepts an event (2xx), it is never sent again.
 * - A URL that breaks the public-URL rule (unless the server allows private
 *   URLs) fails the delivery without any attempt.
 * - The delivery and its retry schedule (attempts made, when the next is
 *   due) are kept in the store, written before the wait for the next attempt
 *   begins. A delivery is sent by the process holding its claim (like a
 *   task): on a store shared by several processes, one whose process died
 *   (or stopped) while it waited is taken over by another, which makes the
 *   next attempt when it is due; on a persistent store of one process, a
 *   restart picks up the deliveries left pending.
 */
import { backoffDelayMs } from '../../backoff.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerContext } from '../context.js';
import type { Collection, Release } from '../store/types.js';
import type { Task } from '../rest/common/task-runner.js';
import { checkPublicUrl, PublicUrlError } from '../net/public-url.js';
import { postOnce, PostTimeoutError } from './post.js';
import { signWebhook, WEBHOOK_ATTEMPT_HEADER, WEBHOOK_EVENT_ID_HEADER, WEBHOOK_EVENT_TYPE_HEADER, WEBHOOK_SIGNATURE_HEADER } from '../../protocol/webhooks.js';

/** Event types, by the task's terminal state. */
export const WebhookEventType = {
  succeeded: 'task.succeeded',
  /** Part of the work failed; a usable result exists (envelope TTS `partial_fail`). */
  partial: 'task.partially_failed',
  failed: 'task.failed',
} as const;
export type WebhookEventType = (typeof WebhookEventType)[keyof typeof WebhookEventType];

/** States of one delivery. */
export const DeliveryState = {
  pending: 'pending',
  delivered: 'delivered',
  /** Every attempt failed, or the URL was refused. */
  failed: 'failed',
} as const;
export type DeliveryState = (typeof DeliveryState)[keyof typeof DeliveryState];

/** The JSON body of a webhook request. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  /** ISO 8601: when the task became terminal. */
  createdAt: string;
  data: {
    taskId: string;
    taskType: string;
    /** `succeeded`, `partial` or `failed` (the task runner's state). */
    status: string;
    errorCode: string | null;
    errorMessage: string | null;
    creditsCharged: number;
    refunded: boolean;
    requestId: string;
    createdAt: string;
    completedAt: string | null;
  };
}

/** One event's delivery record (store collection `webhook-deliveries`). */
export interface WebhookDelivery {
  /** `<taskType>:<taskId>:<state>`: the dedupe key. */
  key: string;
  eventId: string;
  userId: string;
  url: string;
  type: WebhookEventType;
  body: string;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  /** When the next attempt is due (ISO 8601); null: at once. */
  nextAttemptAt?: string | null;
}

export interface WebhookOptions {
  /** Attempts per event, the first included; default 6. */
  maxAttempts?: number;
  /** Delay before the first retry, doubled for each next one; default 1_000 ms. */
  initialDelayMs?: number;
  /** Cap of the retry delay; default 60_000 ms. */
  maxDelayMs?: number;
  /** Timeout of one attempt (connect to response headers); default 10_000 ms. */
  timeoutMs?: number;
}

/** How often a process sharing the store looks for deliveries nobody sends. */
const WEBHOOK_SCAN_MS = 1_000;

/** Store collection of delivery records. */
export const WEBHOOK_DELIVERIES_COLLECTION = 'webhook-deliveries';

const STATE_EVENT: Record<string, WebhookEventType> = {
  succeeded: WebhookEventType.succeeded,
  partial: WebhookEventType.partial,
  failed: WebhookEventType.failed,
};

/** Options from the environment (VOXPIPE_WEBHOOK_MAX_ATTEMPTS, VOXPIPE_WEBHOOK_RETRY_DELAY_MS, VOXPIPE_WEBHOOK_TIMEOUT_MS). */
export function webhookOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookOptions {
  const num = (name: string): number | undefined => {
    const v = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(v) && v >= 0 ? v : undefined;
  };
  const out: WebhookOptions = {};
  const attempts = num('VOXPIPE_WEBHOOK_MAX_ATTEMPTS');
  const delay = num('VOXPIPE_WEBHOOK_RETRY_DELAY_MS');
  const timeout = num('VOXPIPE_WEBHOOK_TIMEOUT_MS');
  if (attempts !== undefined) out.maxAttempts = Math.max(1, Math.floor(attempts));
  if (delay !== undefined) out.initialDelayMs = delay;
  if (timeout !== undefined) out.timeoutMs = timeout;
  return out;
}

/** Delay before retry number `retry` (1 for the first retry): the shared backoff, doubling, no jitter. */
export function retryDelayMs(retry: number, initialDelayMs: number, maxDelayMs: number): number {
  return backoffDelayMs(retry, { baseMs: initialDelayMs, factor: 2, maxMs: maxDelayMs, jitter: 0 }, 0);
}

const dispatchers = new WeakMap<ServerContext, WebhookDispatcher>();

/** The webhook dispatcher of a server (tests tune its options through it). */
export function webhookDispatcherOf(ctx: ServerContext): WebhookDispatcher | undefined {
  return dispatchers.get(ctx);
}

export class WebhookDispatcher {
  readonly options: Required<WebhookOptions>;
  readonly #ctx: ServerContext;
  readonly #deliveries: Collection<WebhookDelivery>;
  readonly #abort = new AbortController();
  readonly #running = new Set<Promise<void>>();
  /** Deliveries this process sends now (or waits to retry). */
  readonly #local = new Set<string>();
  #scanTimer: NodeJS.Timeout | undefined;

  constructor(ctx: ServerContext, options: WebhookOptions = {}) {
    this.#ctx = ctx;
    this.#deliveries = ctx.store.collection<WebhookDelivery>(WEBHOOK_DELIVERIES_COLLECTION);
    this.options = {
      maxAttempts: options.maxAttempts ?? 6,
      initialDelayMs: options.initialDelayMs ?? 1_000, // 1 s, then 2, 4, 8, 16 s
      maxDelayMs: options.maxDelayMs ?? 60_000, // 1 min
      timeoutMs: options.timeoutMs ?? 10_000, // 10 s
    };
    dispatchers.set(ctx, this);
    if (ctx.store.processes) this.#scanEvery(WEBHOOK_SCAN_MS);
    else this.#recover();
  }

  /** The claim a process holds on a delivery while it sends it (a store shared by several processes). */
  #claimName(key: string): string {
    return `webhook:${key}`;
  }

  /** A persistent store of one process: the deliveries a previous run left pending go on where they were. */
  #recover(): void {
    for (const d of [...this.#deliveries.values()]) if (d.state === DeliveryState.pending) this.#start(d.key);
  }

  /** Look for pending deliveries nobody sends, at once and then every `ms`. */
  #scanEvery(ms: number): void {
    const tick = () => {
      this.#scanTimer = undefined;
      void this.#scan()
        .catch((err: unknown) => this.#ctx.log('webhooks: looking for deliveries nobody sends failed', err))
        .finally(() => {
          if (this.#abort.signal.aborted) return;
          this.#scanTimer = setTimeout(tick, ms);
          this.#scanTimer.unref();
        });
    };
    tick();
  }

  /**
   * A pending delivery whose claim is free was left by a process that died
   * or stopped: this one claims it, reads it again (its sender may have
   * ended it just before letting go) and goes on with its schedule.
   */
  async #scan(): Promise<void> {
    const { store } = this.#ctx;
    await store.sync?.();
    for (const d of [...this.#deliveries.values()]) {
      if (this.#abort.signal.aborted) return;
      if (d.state !== DeliveryState.pending || this.#local.has(d.key)) continue;
      const release = await store.processes!.claim(this.#claimName(d.key));
      if (!release) continue;
      await store.sync?.();
      const current = this.#deliveries.get(d.key);
      if (current?.state !== DeliveryState.pending || this.#local.has(d.key) || this.#abort.signal.aborted) {
        await release();
        continue;
      }
      this.#start(d.key, release);
    }
  }

  /** Send delivery `key` here (under `claimed`, when the caller holds its claim). */
  #start(key: string, claimed?: Release): void {
    this.#local.add(key);
    const run = this.#claimAndDeliver(key, claimed).finally(() => this.#local.delete(key));
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  async #claimAndDeliver(key: string, claimed: Release | undefined): Promise<void> {
    const { store } = this.#ctx;
    const release = claimed ?? (store.processes ? await store.processes.claim(this.#claimName(key)) : undefined);
    if (store.processes && !release) return;
    try {
      const d = this.#deliveries.get(key);
      if (d?.state === DeliveryState.pending) await this.#deliver(d);
    } catch (err) {
      this.#ctx.log(`webhooks: delivery ${key} failed`, err);
    } finally {
      if (release) {
        // What it did is kept before another process may take the delivery over.
        await store.flush?.().catch(() => undefined);
        await release().catch(() => undefined);
      }
    }
  }

  /** Change options at run time (tests shorten the delays). */
  configure(options: WebhookOptions): void {
    Object.assign(this.options, Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)));
  }

  /**
   * A task became terminal: send its event once to the owner's webhook URL.
   * Returns the delivery record, or undefined when nothing is sent (no URL,
   * not a terminal state, or this task and state were already handled).
   */
  taskTerminal(task: Readonly<Task>): WebhookDelivery | undefined {
    const type = STATE_EVENT[task.state];
    if (!type) return undefined;
    const key = `${task.type}:${task.taskId}:${task.state}`;
    if (this.#deliveries.get(key)) return undefined;
    const account = this.#ctx.store.accounts.get(task.userId);
    if (!account?.webhookUrl) return undefined;
    const event: WebhookEvent = {
      id: this.#ctx.newId('evt'),
      type,
      createdAt: task.completedAt ?? this.#ctx.now().toISOString(),
      data: {
        taskId: task.taskId,
        taskType: task.type,
        status: task.state,
        errorCode: task.errorCode,
        errorMessage: task.errorMessage,
        creditsCharged: task.creditsCharged,
        refunded: task.refunded,
        requestId: task.requestId,
        createdAt: task.createdAt,
        completedAt: task.completedAt,
      },
    };
    const delivery: WebhookDelivery = {
      key,
      eventId: event.id,
      userId: task.userId,
      url: account.webhookUrl,
      type,
      body: JSON.stringify(event),
      state: DeliveryState.pending,
      attempts: 0,
      lastStatus: null,
      lastError: null,
      createdAt: this.#ctx.now().toISOString(),
      deliveredAt: null,
    };
    this.#deliveries.set(key, delivery);
    this.#start(key);
    return delivery;
  }

  /** Delivery records of an account, newest first. */
  deliveriesOf(userId: string): WebhookDelivery[] {
    return [...this.#deliveries.values()].filter((d) => d.userId === userId).reverse();
  }

  /** Resolves when no delivery is in progress (tests). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Stop: pending retries are left to another process or the next start (their records stay `pending`, with their schedule). */
  async close(): Promise<void> {
    this.#abort.abort();
    if (this.#scanTimer) clearTimeout(this.#scanTimer);
    await Promise.allSettled([...this.#running]);
  }

  async #deliver(d: WebhookDelivery): Promise<void> {
    const signal = this.#abort.signal;
    try {
      await checkPublicUrl(d.url, { allowPrivate: this.#ctx.allowPrivateUrls });
    } catch (err) {
      if (!(err instanceof PublicUrlError)) throw err;
      this.#update(d, { state: DeliveryState.failed, lastError: `webhookUrl ${err.message}` });
      return;
    }
    const account = this.#ctx.store.accounts.get(d.userId);
    if (!account) return;
    // The task's end and this record are kept before anyone is told (a reader then finds the task ended, wherever it asks).
    await this.#ctx.store.flush?.();
    // The attempts go on from the schedule kept with the delivery (another process's, after a takeover).
    while (!signal.aborted) {
      const wait = d.nextAttemptAt ? Date.parse(d.nextAttemptAt) - this.#ctx.now().getTime() : 0;
      if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      const attempt = d.attempts + 1;
      const outcome = await this.#attempt(d, account.webhookSecret, attempt, signal);
      if (!outcome.ok && signal.aborted) return; // closing: left pending, to be sent again
      const seen = { attempts: attempt, lastStatus: outcome.status, lastError: outcome.error };
      if (outcome.ok) {
        this.#update(d, { ...seen, state: DeliveryState.delivered, deliveredAt: this.#ctx.now().toISOString(), nextAttemptAt: null });
        return;
      }
      if (attempt >= this.options.maxAttempts) {
        this.#update(d, { ...seen, state: DeliveryState.failed, nextAttemptAt: null });
        return;
      }
      const next = this.#ctx.now().getTime() + retryDelayMs(attempt, this.options.initialDelayMs, this.options.maxDelayMs);
      this.#update(d, { ...seen, nextAttemptAt: new Date(next).toISOString() });
      // The schedule is kept before the wait: a process taking over after a crash goes on from it.
      await this.#ctx.store.flush?.();
    }
  }

  async #attempt(d: WebhookDelivery, secret: string, attempt: number, closing: AbortSignal): Promise<{ ok: boolean; status: number | null; error: string | null }> {
    const timestampSec = Math.floor(this.#ctx.now().getTime() / 1000);
    try {
      const status = await postOnce(d.url, d.body, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'voxpipe-webhooks/1',
          [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, d.body, timestampSec),
          [WEBHOOK_EVENT_ID_HEADER]: d.eventId,
          [WEBHOOK_EVENT_TYPE_HEADER]: d.type,
          [WEBHOOK_ATTEMPT_HEADER]: String(attempt),
        },
        allowPrivate: this.#ctx.allowPrivateUrls,
        timeoutMs: this.options.timeoutMs,
        signal: closing,
      });
      const ok = status >= 200 && status < 300;
      return { ok, status, error: ok ? null : `receiver answered ${status}` };
    } catch (err) {
      return { ok: false, status: null, error: err instanceof PostTimeoutError ? 'timed out' : `network error: ${(err as Error)?.message ?? String(err)}` };
    }
  }

  #update(d: WebhookDelivery, patch: Partial<WebhookDelivery>): void {
    Object.assign(d, patch);
    this.#deliveries.set(d.key, d);
  }
}
