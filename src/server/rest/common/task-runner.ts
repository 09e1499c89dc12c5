/**
 * A generic asynchronous task runner for every task family (TTS jobs, ASR,
 * image, video, lip-sync): create with pre-deduction, run a worker in
 * process, move through the states, refund idempotently on failure, never
 * rewrite a terminal state, answer 404 for another account's task, list with
 * filters, and call completion hooks (webhooks plug in there).
 *
 * Internal states are one set; each route family maps them to its own words
 * (envelope TTS: success / partial_fail / fail; flat shape: succeeded / failed).
 */
import type { ServerContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import type { Account, Collection, Currency, Release } from '../../store/types.js';
import { holdOr402, settle } from './billing.js';
import { createdAfterFilter } from './pagination.js';

/** States of a task. `partial`: some of the work failed, a usable result exists. */
export const TaskState = {
  pending: 'pending',
  processing: 'processing',
  succeeded: 'succeeded',
  partial: 'partial',
  failed: 'failed',
} as const;
export type TaskState = (typeof TaskState)[keyof typeof TaskState];

/** States that are never left (and never rewritten). */
export const TERMINAL_TASK_STATES: readonly TaskState[] = [TaskState.succeeded, TaskState.partial, TaskState.failed];

export function isTerminal(state: TaskState): boolean {
  return TERMINAL_TASK_STATES.includes(state);
}

/** A pre-deduction made at create. */
export interface TaskCharge {
  currency: Currency;
  /** Amount held at create. */
  amount: number;
  /** Ledger refId: `job:<taskId>`. */
  refId: string;
}

/** A stored task. `I` is the create input, `R` the (possibly partial) result. */
export interface Task<I = unknown, R = unknown> {
  /** Row id (flat shape `id`). */
  id: string;
  taskId: string;
  /** Task family, e.g. `tts`, `asr`, `image`. */
  type: string;
  userId: string;
  state: TaskState;
  input: I;
  /** The worker's result; set during processing by `progress()`, final at the end. */
  result: R | null;
  errorCode: string | null;
  errorMessage: string | null;
  charge: TaskCharge | null;
  /** What the account is charged now: the hold, minus refunds. */
  creditsCharged: number;
  /** True once the charge was given back (failure). */
  refunded: boolean;
  /** Request id of the create call. */
  requestId: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

/** A failure the worker reports on purpose (with the error code the task shows). */
export class TaskFailure extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** What a worker returns: a result, optionally marked as partial. */
export interface TaskOutcome<R> {
  result: R;
  /** Set when part of the work failed: the task ends `partial` and keeps only `keepAmount` of its charge. */
  partial?: { errorCode: string; errorMessage: string; keepAmount: number };
  /** What a succeeded task costs when it is less than its hold (the rest is given back). */
  charge?: number;
}

export interface TaskWorkerContext<I, R> {
  task: Readonly<Task<I, R>>;
  /** The owner's account. */
  account: Account;
  /** Aborted when the server closes. */
  signal: AbortSignal;
  /** Publish an intermediate result (e.g. segments done so far). */
  progress(result: R): void;
}

export type TaskWorker<I, R> = (ctx: TaskWorkerContext<I, R>) => Promise<TaskOutcome<R>>;

/** Called once when a task reaches a terminal state. Errors are reported and ignored. */
export type TerminalHook = (task: Readonly<Task>) => void | Promise<void>;

export interface TaskRunnerOptions<I, R> {
  /** Task family, e.g. `tts`. */
  type: string;
  worker: TaskWorker<I, R>;
  /** Prefix of new task ids; default the type. */
  idPrefix?: string;
  /** Store collection; default `tasks:<type>`. */
  collection?: string;
  /**
   * Time a task stays `pending` before the worker starts; default 20 ms, so
   * a client polling right after create can observe `pending`.
   */
  startDelayMs?: number;
}

export interface CreateTaskOptions {
  /** Pre-deduction at create (402 when the balance is short); none when absent. */
  charge?: { currency: Currency; amount: number; reason?: string };
  /** Request id of the create call. */
  requestId: string;
}

export interface TaskListFilter<I, R> {
  states?: readonly TaskState[] | undefined;
  /** ISO 8601: only tasks created strictly after it. */
  createdAfter?: string | undefined;
  where?: (task: Task<I, R>) => boolean;
}

interface Registry {
  runners: Map<string, TaskRunner<never, never>>;
  hooks: TerminalHook[];
}

const registries = new WeakMap<ServerContext, Registry>();

/** Several processes on one store: how often each looks for tasks whose process died (1 s). */
const TASK_SCAN_MS = 1_000;
/** A pending task younger than this (5 s) is its creator's to start. */
const TASK_SCAN_GRACE_MS = 5_000;

function registryOf(ctx: ServerContext): Registry {
  let r = registries.get(ctx);
  if (!r) {
    r = { runners: new Map(), hooks: [] };
    registries.set(ctx, r);
  }
  return r;
}

/**
 * Hooks called for every task of every runner of this server when it becomes
 * terminal (webhook delivery registers here).
 */
export function taskTerminalHooks(ctx: ServerContext): TerminalHook[] {
  return registryOf(ctx).hooks;
}

/** Resolves once no task of any runner of this server is waiting to start or running; `active` counts them now. */
export function tasksIdle(ctx: ServerContext): { active: number; idle: Promise<void> } {
  const runners = [...registryOf(ctx).runners.values()];
  return { active: runners.reduce((n, r) => n + r.active, 0), idle: Promise.all(runners.map((r) => r.idle())).then(() => undefined) };
}

/** The runner registered for `type` on this server (tests and admin tools). */
export function taskRunnerOf<I = unknown, R = unknown>(ctx: ServerContext, type: string): TaskRunner<I, R> | undefined {
  return registryOf(ctx).runners.get(type) as TaskRunner<I, R> | undefined;
}

export class TaskRunner<I, R> {
  /** Hooks of this runner only, called after the server-wide ones. */
  readonly onTerminal: TerminalHook[] = [];
  readonly type: string;
  readonly #ctx: ServerContext;
  readonly #tasks: Collection<Task<I, R>>;
  readonly #worker: TaskWorker<I, R>;
  readonly #idPrefix: string;
  readonly #startDelayMs: number;
  readonly #abort = new AbortController();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #settled = new Map<string, { promise: Promise<Task<I, R>>; resolve: (t: Task<I, R>) => void }>();
  readonly #running = new Set<Promise<void>>();

  constructor(ctx: ServerContext, options: TaskRunnerOptions<I, R>) {
    this.#ctx = ctx;
    this.type = options.type;
    this.#tasks = ctx.store.collection<Task<I, R>>(options.collection ?? `tasks:${options.type}`);
    this.#worker = options.worker;
    this.#idPrefix = options.idPrefix ?? options.type;
    this.#startDelayMs = options.startDelayMs ?? 20; // 20 ms
    registryOf(ctx).runners.set(options.type, this as unknown as TaskRunner<never, never>);
    if (ctx.store.processes) this.#scanEvery(TASK_SCAN_MS);
    else this.#recover();
  }

  /** Tasks this process has scheduled or runs now. */
  readonly #local = new Set<string>();
  #scanTimer: NodeJS.Timeout | undefined;

  /** The claim a process holds on a task while it runs it (a store shared by several processes). */
  #claimName(taskId: string): string {
    return `task:${this.type}:${taskId}`;
  }

  /** Look for tasks nobody runs now, at once and then every `ms`. */
  #scanEvery(ms: number): void {
    const tick = () => {
      this.#scanTimer = undefined;
      void this.#scan()
        .catch((err: unknown) => this.#ctx.log(`${this.type} tasks: looking for tasks nobody runs failed`, err))
        .finally(() => {
          if (this.#abort.signal.aborted) return;
          this.#scanTimer = setTimeout(tick, ms);
          this.#scanTimer.unref();
        });
    };
    tick();
  }

  /**
   * Several processes on one store: a task not ended whose claim is free was
   * accepted by a process that died (or stopped) before it ended it. This one
   * claims it, reads it again (its owner may have ended it just before
   * letting go) and runs it from the start, under the charge it holds. A
   * task just created is left to its creator for TASK_SCAN_GRACE_MS (it
   * claims it within its start delay).
   */
  async #scan(): Promise<void> {
    const processes = this.#ctx.store.processes!;
    await this.#ctx.store.sync?.();
    const now = this.#ctx.now().getTime();
    for (const task of [...this.#tasks.values()]) {
      if (this.#abort.signal.aborted) return;
      if (isTerminal(task.state) || this.#local.has(task.taskId)) continue;
      if (task.state === TaskState.pending && now - Date.parse(task.createdAt) < TASK_SCAN_GRACE_MS) continue;
      const release = await processes.claim(this.#claimName(task.taskId));
      if (!release) continue;
      await this.#ctx.store.sync?.();
      const current = this.#tasks.get(task.taskId);
      if (!current || isTerminal(current.state) || this.#local.has(task.taskId)) {
        await release();
        continue;
      }
      Object.assign(current, { state: TaskState.pending, startedAt: null });
      this.#tasks.set(current.taskId, current);
      this.#schedule(current.taskId, release);
    }
  }

  /**
   * A persistent store may hold tasks a previous process accepted and never
   * ended (it exited or was killed): each runs again from the start, under
   * the charge it already holds, so it ends succeeded or failed and refunded
   * once. (The work is pure: synthesizing a text again gives the same audio.)
   */
  #recover(): void {
    for (const task of [...this.#tasks.values()]) {
      if (isTerminal(task.state)) continue;
      Object.assign(task, { state: TaskState.pending, startedAt: null });
      this.#tasks.set(task.taskId, task);
      this.#schedule(task.taskId);
    }
  }

  /** Run the task after the start delay (under `claimed`, when the caller holds its claim). */
  #schedule(taskId: string, claimed?: Release): void {
    let resolve!: (t: Task<I, R>) => void;
    const promise = new Promise<Task<I, R>>((r) => (resolve = r));
    this.#settled.set(taskId, { promise, resolve });
    this.#local.add(taskId);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const run = this.#claimAndRun(taskId, claimed).finally(() => this.#local.delete(taskId));
      this.#running.add(run);
      void run.finally(() => {
        this.#running.delete(run);
        if (this.#timers.size === 0 && this.#running.size === 0) for (const wake of this.#idle.splice(0)) wake();
      });
    }, this.#startDelayMs);
    this.#timers.add(timer);
  }

  readonly #idle: (() => void)[] = [];

  /** Resolves once no task of this runner is waiting to start or running. */
  idle(): Promise<void> {
    if (this.#timers.size === 0 && this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** How many tasks are waiting to start or running. */
  get active(): number {
    return this.#timers.size + this.#running.size;
  }

  /**
   * Create a task for `account`, pre-deducting `charge` under `job:<taskId>`
   * (402 when short), and schedule its worker. Returns the pending task.
   */
  async create(account: Account, input: I, options: CreateTaskOptions): Promise<Task<I, R>> {
    const taskId = this.#ctx.newId(this.#idPrefix);
    let charge: TaskCharge | null = null;
    if (options.charge) {
      const refId = `job:${taskId}`;
      await holdOr402(this.#ctx, account, options.charge.currency, options.charge.amount, refId, options.charge.reason ?? `${this.type} task ${taskId}`);
      charge = { currency: options.charge.currency, amount: options.charge.amount, refId };
    }
    const task: Task<I, R> = {
      id: this.#ctx.newId('row'),
      taskId,
      type: this.type,
      userId: account.userId,
      state: TaskState.pending,
      input,
      result: null,
      errorCode: null,
      errorMessage: null,
      charge,
      creditsCharged: charge?.amount ?? 0,
      refunded: false,
      requestId: options.requestId,
      createdAt: this.#ctx.now().toISOString(),
      startedAt: null,
      completedAt: null,
    };
    this.#tasks.set(taskId, task);
    this.#schedule(taskId);
    return task;
  }

  /** A task of `account`; 404 when absent or owned by another account. */
  get(account: Account, taskId: string): Task<I, R> {
    const task = this.#tasks.get(taskId);
    if (!task || task.userId !== account.userId) throw notFound('task');
    return task;
  }

  /** A task by id regardless of owner (internal use). */
  peek(taskId: string): Task<I, R> | undefined {
    return this.#tasks.get(taskId);
  }

  /** Tasks of `account` matching `filter`, newest first. */
  list(account: Account, filter: TaskListFilter<I, R> = {}): Task<I, R>[] {
    const after = createdAfterFilter(filter.createdAfter);
    const mine = [...this.#tasks.values()].filter(
      (t) => t.userId === account.userId && (!filter.states || filter.states.includes(t.state)) && after(t) && (!filter.where || filter.where(t)),
    );
    // Insertion order is creation order; reverse, then a stable sort keeps ties newest first.
    return mine.reverse().sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  }

  /** Resolves when the task is terminal (immediately if it already is). */
  settled(taskId: string): Promise<Task<I, R>> {
    const task = this.#tasks.get(taskId);
    if (task && isTerminal(task.state)) return Promise.resolve(task);
    const entry = this.#settled.get(taskId);
    if (!entry) return Promise.reject(notFound('task'));
    return entry.promise;
  }

  /**
   * Give the pre-deduction back. Idempotent: returns true only for the call
   * that restored the balance; later calls (a failure reported twice) change nothing.
   */
  refund(taskId: string): boolean {
    const task = this.#tasks.get(taskId);
    if (!task?.charge) return false;
    const released = this.#ctx.ledger.release(task.charge.refId);
    if (released || !task.refunded) {
      task.refunded = true;
      task.creditsCharged = 0;
      this.#tasks.set(taskId, task);
    }
    return released;
  }

  /**
   * Report a failure: the task becomes `failed` (unless already terminal:
   * terminal states are never rewritten) and its charge is refunded once.
   * Returns true when this call moved the task to `failed`.
   */
  fail(taskId: string, code: string, message: string): boolean {
    const task = this.#tasks.get(taskId);
    if (!task) return false;
    if (isTerminal(task.state)) {
      if (task.state === TaskState.failed) this.refund(taskId);
      return false;
    }
    Object.assign(task, { state: TaskState.failed, errorCode: code, errorMessage: message, completedAt: this.#ctx.now().toISOString() });
    this.#tasks.set(taskId, task);
    this.refund(taskId);
    this.#terminal(task);
    return true;
  }

  /**
   * Run the task where this process holds its claim (a shared store: another
   * process may have taken it first; then it runs there). The claim is let
   * go once the task's end is written.
   */
  async #claimAndRun(taskId: string, claimed: Release | undefined): Promise<void> {
    const processes = this.#ctx.store.processes;
    const release = claimed ?? (processes ? await processes.claim(this.#claimName(taskId)) : undefined);
    if (processes && !release) return;
    try {
      await this.#run(taskId);
    } finally {
      if (release) {
        await this.#ctx.store.flush?.().catch(() => undefined);
        await release().catch(() => undefined);
      }
    }
  }

  /** Stop scheduling and abort running workers (server close); a worker that stops on the signal fails its task (refunded). */
  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    if (this.#scanTimer) clearTimeout(this.#scanTimer);
    this.#abort.abort();
    await Promise.allSettled([...this.#running]);
    for (const wake of this.#idle.splice(0)) wake();
  }

  async #run(taskId: string): Promise<void> {
    const task = this.#tasks.get(taskId);
    if (!task || task.state !== TaskState.pending) return;
    const account = this.#ctx.store.accounts.get(task.userId);
    if (!account) {
      this.fail(taskId, 'internal_error', 'the owning account no longer exists');
      return;
    }
    Object.assign(task, { state: TaskState.processing, startedAt: this.#ctx.now().toISOString() });
    this.#tasks.set(taskId, task);
    try {
      const outcome = await this.#worker({
        task,
        account,
        signal: this.#abort.signal,
        progress: (result) => {
          if (isTerminal(task.state)) return;
          task.result = result;
          this.#tasks.set(taskId, task);
        },
      });
      this.#succeed(task, account, outcome);
    } catch (err) {
      if (err instanceof TaskFailure) this.fail(taskId, err.code, err.message);
      else {
        this.#ctx.log(`${this.type} task ${taskId} crashed`, err);
        this.fail(taskId, 'internal_error', 'internal error while processing the task');
      }
    }
  }

  #succeed(task: Task<I, R>, account: Account, outcome: TaskOutcome<R>): void {
    if (isTerminal(task.state)) return;
    task.result = outcome.result;
    task.completedAt = this.#ctx.now().toISOString();
    if (outcome.partial) {
      task.state = TaskState.partial;
      task.errorCode = outcome.partial.errorCode;
      task.errorMessage = outcome.partial.errorMessage;
      if (task.charge) task.creditsCharged = this.#settle(account, task.charge.refId, outcome.partial.keepAmount);
    } else {
      task.state = TaskState.succeeded;
      if (task.charge && outcome.charge !== undefined && outcome.charge < task.charge.amount) task.creditsCharged = this.#settle(account, task.charge.refId, outcome.charge);
      else if (task.charge) this.#ctx.ledger.commit(task.charge.refId);
    }
    this.#tasks.set(task.taskId, task);
    this.#terminal(task);
  }

  /** Keep `keep` of the hold (`settle`); the amount charged now. */
  #settle(account: Account, refId: string, keep: number): number {
    const { charged, done } = settle(this.#ctx, account, refId, keep);
    done.catch((err: unknown) => this.#ctx.log(`${this.type}: settling ${refId} at ${keep}`, err));
    return charged;
  }

  #terminal(task: Task<I, R>): void {
    this.#settled.get(task.taskId)?.resolve(task);
    this.#settled.delete(task.taskId);
    for (const hook of [...registryOf(this.#ctx).hooks, ...this.onTerminal]) {
      try {
        void Promise.resolve(hook(task as Task)).catch((e: unknown) => this.#ctx.log('task completion hook failed', e));
      } catch (err) {
        this.#ctx.log('task completion hook failed', err);
      }
    }
  }
}

