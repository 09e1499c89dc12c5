/**
 * One budget per deployment: every generation a process starts on one
 * deployment with one key (a realtime request, which holds one connection at
 * a time per spec 8 "one generation per realtime connection", or a charging
 * HTTP creation) takes a slot of one shared limiter, so 500 agents behind
 * one key queue in this process instead of hammering the deployment.
 *
 * - The cap is an option (`maxConcurrency`, `VOXPIPE_MAX_CONCURRENCY`),
 *   unlimited by default, and learnt from the deployment: a refusal (429)
 *   lowers it, quiet raises it again (see `refused` and `#release`).
 * - Waiting is fair: first come, first served within a priority, and
 *   `interactive` (speech someone listens to) before `batch`. A slot refused
 *   by the deployment goes back to the head of its queue: it came first.
 * - A 429's `Retry-After` (or a realtime close 1013's backoff) closes the
 *   deployment for every caller of this process at once (one "closed
 *   until" time), not each on its own.
 * - A slot is held for a generation's whole life, resumes and reconnects
 *   included, and given back once, however the generation ends.
 *
 * The deployment's identity is its origin and a hash of the key: the key
 * itself is never kept here, nor shown.
 */
import { createHash } from 'node:crypto';
import { AbortError, QueueTimeoutError } from './errors.js';

/** Which waiting generation goes first: `interactive` before `batch`, each first come first served. */
export const Priority = {
  /** Speech a listener waits for (SpeechStream, sync TTS, compat speech): the default. */
  interactive: 'interactive',
  /** Work nobody hears live (async jobs, ASR and media tasks). */
  batch: 'batch',
} as const;
export type Priority = (typeof Priority)[keyof typeof Priority];

export interface BudgetOptions {
  /**
   * Generations this process runs at once on the deployment; default
   * unlimited (`VOXPIPE_MAX_CONCURRENCY` when set). The cap in force is
   * this or what the deployment's refusals taught, whichever is lower.
   */
  maxConcurrency?: number | undefined;
  /** Quiet time after the last refusal before a learnt cap is raised again; default 5_000 ms. */
  probeAfterMs?: number | undefined;
  /** Clock, ms; default `Date.now`. */
  now?: (() => number) | undefined;
}

export interface SeatOptions {
  /** Default `interactive`. */
  priority?: Priority | undefined;
  /** Longest wait for a slot, ms; past it the wait ends in a `QueueTimeoutError` (`queue_timeout`); default unbounded. */
  queueTimeoutMs?: number | undefined;
  /** Stops waiting (an `AbortError`); a held slot is kept until `release()`. */
  signal?: AbortSignal | undefined;
}

/** What a budget has seen, for callers and benches. */
export interface BudgetStats {
  /** Slots held now. */
  running: number;
  /** Generations waiting for a slot. */
  queued: number;
  /** The cap in force; null while unlimited. */
  limit: number | null;
  /** Most slots held at once. */
  peak: number;
  /** Refusals (429) the deployment answered. */
  refusals: number;
  /** How long the deployment stays closed by a `Retry-After`, ms (0: open). */
  closedForMs: number;
}

/** Quiet time after a refusal before a learnt cap grows again (see `released`). */
const DEFAULT_PROBE_AFTER_MS = 5_000; // 5 s

const SeatState = { idle: 'idle', queued: 'queued', held: 'held', ended: 'ended' } as const;
type SeatState = (typeof SeatState)[keyof typeof SeatState];

/**
 * One generation's place in its deployment's budget. `take()` waits for a
 * slot (at once when it holds one), `refused()` gives it back after the
 * deployment said 429, `release()` ends it; each idempotent where it
 * matters, so no ending counts twice.
 */
export class Seat {
  readonly priority: Priority;
  #state: SeatState = SeatState.idle;
  /** Refused once: it queues again in its first place, ahead of everyone who came after it. */
  #front = false;
  /** Its place in line: the order of first asking. */
  ticket = 0;
  #wait: Promise<void> | undefined;
  #grant: (() => void) | undefined;
  #reject: ((err: Error) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #unlink: (() => void) | undefined;

  constructor(
    readonly budget: DeploymentBudget,
    readonly options: SeatOptions,
  ) {
    this.priority = options.priority ?? Priority.interactive;
  }

  /** Whether the seat holds a slot now. */
  get held(): boolean {
    return this.#state === SeatState.held;
  }

  /** While waiting for a slot: resolves once it holds one, or settles with the wait's end. */
  get waiting(): Promise<void> | undefined {
    return this.#state === SeatState.queued ? this.#wait : undefined;
  }

  /** Hold a slot: at once when one is held or free, else in the queue. */
  take(): Promise<void> {
    if (this.#state === SeatState.held) return Promise.resolve();
    if (this.#state === SeatState.queued) return this.#wait!;
    if (this.#state === SeatState.ended) return Promise.reject(new AbortError('the generation ended before it had a slot'));
    const signal = this.options.signal;
    if (signal?.aborted) return Promise.reject(new AbortError('aborted while waiting for a slot', { cause: signal.reason }));
    this.#state = SeatState.queued;
    this.ticket ||= this.budget.nextTicket();
    this.#wait = new Promise<void>((resolve, reject) => {
      this.#grant = resolve;
      this.#reject = reject;
    });
    // Whoever awaits it hears how the wait ended; nobody awaiting it is no unhandled rejection.
    this.#wait.catch(() => undefined);
    const timeout = this.options.queueTimeoutMs;
    if (timeout !== undefined && Number.isFinite(timeout)) {
      this.#timer = setTimeout(() => this.#fail(new QueueTimeoutError(timeout, this.budget.stats())), Math.max(0, timeout));
    }
    if (signal) {
      const onAbort = (): void => this.#fail(new AbortError('aborted while waiting for a slot', { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
      this.#unlink = () => signal.removeEventListener('abort', onAbort);
    }
    this.budget.enqueue(this, this.#front);
    return this.#wait;
  }

  /**
   * The deployment refused this generation (429, or a realtime refusal):
   * give the slot back, teach the budget, close the deployment for
   * `retryAfterMs` for everyone. The next `take()` queues at the head.
   */
  refused(retryAfterMs: number | undefined): void {
    const held = this.#state === SeatState.held;
    if (held) this.#state = SeatState.idle;
    this.#front = true;
    this.budget.refused(held, retryAfterMs);
  }

  /** The generation ended (completed, failed, aborted, destroyed): the slot goes to the next in line. Once. */
  release(): void {
    const was = this.#state;
    if (was === SeatState.ended) return;
    this.#state = SeatState.ended;
    if (was === SeatState.held) this.budget.released();
    else if (was === SeatState.queued) this.#fail(new AbortError('the generation ended while it waited for a slot'), true);
  }

  /** The budget gives it a slot. */
  granted(): void {
    this.#settle();
    this.#state = SeatState.held;
    this.#grant?.();
  }

  #fail(err: Error, ended = false): void {
    if (this.#state !== SeatState.queued && !ended) return;
    this.budget.dequeue(this);
    this.#settle();
    if (!ended) this.#state = SeatState.idle;
    this.#reject?.(err);
  }

  #settle(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#unlink?.();
    this.#unlink = undefined;
  }
}

/** The limiter of one deployment (origin and key). Get it with `deploymentBudget()`. */
export class DeploymentBudget {
  readonly now: () => number;
  #max: number;
  /** What the deployment's refusals taught; Infinity until the first one. */
  #learnt = Number.POSITIVE_INFINITY;
  /** Fractional growth toward the next slot of a learnt cap. */
  #credit = 0;
  readonly #probeAfterMs: number;
  #running = 0;
  #peak = 0;
  #refusals = 0;
  #lastRefusal = Number.NEGATIVE_INFINITY;
  #closedUntil = 0;
  #reopen: ReturnType<typeof setTimeout> | undefined;
  readonly #queues: Record<Priority, Seat[]> = { interactive: [], batch: [] };
  #tickets = 0;

  constructor(options: BudgetOptions = {}) {
    this.now = options.now ?? Date.now;
    this.#max = capOf(options.maxConcurrency);
    this.#probeAfterMs = options.probeAfterMs ?? DEFAULT_PROBE_AFTER_MS;
  }

  /** The cap in force: the option or the learnt one, whichever is lower. */
  get limit(): number {
    return Math.min(this.#max, this.#learnt);
  }

  /** Set the cap this process was told (a later option of the same deployment wins). */
  setMaxConcurrency(value: number | undefined): void {
    this.#max = capOf(value);
    this.#dispatch();
  }

  /** A seat for one generation. */
  seat(options: SeatOptions = {}): Seat {
    return new Seat(this, options);
  }

  /** How long the deployment stays closed by a `Retry-After`, ms. */
  closedForMs(): number {
    return Math.max(0, this.#closedUntil - this.now());
  }

  /** A `Retry-After` of `ms`: nothing of this deployment starts before it passed, whoever asked. */
  pause(ms: number): void {
    if (!(ms > 0)) return;
    this.#closedUntil = Math.max(this.#closedUntil, this.now() + ms);
    this.#dispatch();
  }

  stats(): BudgetStats {
    const limit = this.limit;
    return { running: this.#running, queued: this.#queues.interactive.length + this.#queues.batch.length, limit: Number.isFinite(limit) ? limit : null, peak: this.#peak, refusals: this.#refusals, closedForMs: this.closedForMs() };
  }

  /** @internal the next place in line */
  nextTicket(): number {
    return ++this.#tickets;
  }

  /** @internal a seat waits: at the back, or a refused one back in its first place */
  enqueue(seat: Seat, again: boolean): void {
    const queue = this.#queues[seat.priority];
    const at = again ? queue.findIndex((s) => s.ticket > seat.ticket) : -1;
    if (at < 0) queue.push(seat);
    else queue.splice(at, 0, seat);
    this.#dispatch();
  }

  /** @internal a seat stops waiting */
  dequeue(seat: Seat): void {
    const queue = this.#queues[seat.priority];
    const i = queue.indexOf(seat);
    if (i >= 0) queue.splice(i, 1);
  }

  /**
   * @internal A refusal. Multiplicative decrease, sized by what the
   * deployment admitted: the cap becomes the slots still held once the
   * refused one is given back, which is what the deployment was running for
   * this key when it said no (the first wave of 500 against a cap of 50
   * learns 50, not half of something). Only a slot's refusal teaches: a 429
   * on a poll or a download only closes the deployment for its wait.
   */
  refused(held: boolean, retryAfterMs: number | undefined): void {
    this.#refusals++;
    this.#lastRefusal = this.now();
    if (held) {
      this.#running--;
      this.#learnt = Math.max(1, Math.min(this.#learnt, this.#running));
      this.#credit = 0;
    }
    if (retryAfterMs !== undefined) this.pause(retryAfterMs);
    this.#dispatch();
  }

  /**
   * @internal A slot given back. Additive increase: once the deployment has
   * been quiet for `probeAfterMs`, every `limit` generations that end raise
   * a learnt cap by one, so a deployment whose cap was raised (or whose
   * refusals were another tenant's burst) is used again, while a probe past
   * its real cap costs one 429 and one shared pause, rarely.
   */
  released(): void {
    this.#running--;
    if (Number.isFinite(this.#learnt) && this.now() - this.#lastRefusal >= this.#probeAfterMs) {
      this.#credit += 1 / this.#learnt;
      if (this.#credit >= 1) {
        this.#credit = 0;
        this.#learnt = this.#learnt + 1 >= this.#max ? Number.POSITIVE_INFINITY : this.#learnt + 1;
      }
    }
    this.#dispatch();
  }

  #dispatch(): void {
    const closed = this.closedForMs();
    if (closed > 0) {
      if (this.#reopen === undefined && this.#queues.interactive.length + this.#queues.batch.length > 0) {
        this.#reopen = setTimeout(() => {
          this.#reopen = undefined;
          this.#dispatch();
        }, closed);
      }
      return;
    }
    while (this.#running < this.limit) {
      const seat = this.#queues.interactive.shift() ?? this.#queues.batch.shift();
      if (!seat) return;
      this.#running++;
      if (this.#running > this.#peak) this.#peak = this.#running;
      seat.granted();
    }
  }
}

function capOf(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : Number.POSITIVE_INFINITY;
}

/** The environment's cap (`VOXPIPE_MAX_CONCURRENCY`), when set to a positive integer. */
export function envMaxConcurrency(env: Readonly<Record<string, string | undefined>> = process.env): number | undefined {
  const value = Number(env['VOXPIPE_MAX_CONCURRENCY']);
  return Number.isInteger(value) && value >= 1 ? value : undefined;
}

const budgets = new Map<string, DeploymentBudget>();

/** The deployment an URL and key name: the origin (ws and wss as http and https: one service) and a hash of the key. */
function deploymentId(url: string, apiKey: string | null | undefined): string {
  const u = new URL(url);
  const scheme = u.protocol === 'ws:' ? 'http:' : u.protocol === 'wss:' ? 'https:' : u.protocol;
  const key = apiKey ? createHash('sha256').update(apiKey, 'utf8').digest('hex').slice(0, 16) : '-';
  return `${scheme}//${u.host} ${key}`;
}

/**
 * The one budget of the deployment at `url` (any of its URLs: REST, realtime)
 * for `apiKey`, shared by everything of this process that uses both. A
 * `maxConcurrency` given here sets its cap; without one, the first setting
 * (or `VOXPIPE_MAX_CONCURRENCY`) stays.
 */
export function deploymentBudget(url: string, apiKey: string | null | undefined, options: BudgetOptions = {}): DeploymentBudget {
  const id = deploymentId(url, apiKey);
  let budget = budgets.get(id);
  if (!budget) {
    budget = new DeploymentBudget({ ...options, maxConcurrency: options.maxConcurrency ?? envMaxConcurrency() });
    budgets.set(id, budget);
  } else if (options.maxConcurrency !== undefined) budget.setMaxConcurrency(options.maxConcurrency);
  return budget;
}
