import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../src/server/http/errors.js';
import { isTerminal, TaskFailure, TaskRunner, TaskState, taskRunnerOf, taskTerminalHooks, type Task, type TaskWorker } from '../../../../src/server/rest/common/task-runner.js';
import { testContext } from './context.js';

/** A worker the test finishes by hand. */
function controlledWorker() {
  const gates: { resolve: (v: { result: string; partial?: { errorCode: string; errorMessage: string; keepAmount: number } }) => void; reject: (e: unknown) => void }[] = [];
  const started: string[] = [];
  const worker: TaskWorker<string, string> = ({ task, progress }) =>
    new Promise((resolve, reject) => {
      started.push(task.taskId);
      progress(`working on ${task.input}`);
      gates.push({ resolve, reject });
    });
  return { worker, gates, started };
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
}

describe('TaskRunner', () => {
  it('creates pending with a hold, runs the worker (processing, progress), ends succeeded and commits', async () => {
    const t = testContext();
    const { worker, gates, started } = controlledWorker();
    const runner = new TaskRunner(t.ctx, { type: 'unit-ok', worker, startDelayMs: 0 });
    const account = t.account();
    const task = await runner.create(account, 'input-a', { charge: { currency: 'credits', amount: 30 }, requestId: 'req_1' });
    expect(task.state).toBe(TaskState.pending);
    expect(task.charge).toEqual({ currency: 'credits', amount: 30, refId: `job:${task.taskId}` });
    expect(account.credits).toBe(70);
    await waitFor(() => started.length === 1);
    expect(runner.get(account, task.taskId).state).toBe(TaskState.processing);
    expect(runner.get(account, task.taskId).result).toBe('working on input-a');
    expect(runner.get(account, task.taskId).startedAt).not.toBeNull();
    gates[0]!.resolve({ result: 'done' });
    const done = await runner.settled(task.taskId);
    expect(done).toMatchObject({ state: TaskState.succeeded, result: 'done', creditsCharged: 30, refunded: false });
    expect(t.ctx.store.ledger.get(`job:${task.taskId}`)!.state).toBe('committed');
    expect(account.credits).toBe(70);
    expect(taskRunnerOf(t.ctx, 'unit-ok')).toBe(runner);
  });

  it('402 when the balance is short: no task, nothing held', async () => {
    const t = testContext();
    const runner = new TaskRunner(t.ctx, { type: 'unit-402', worker: controlledWorker().worker });
    const account = t.account({ credits: 5 });
    const err = await runner.create(account, 'x', { charge: { currency: 'credits', amount: 6 }, requestId: 'r' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(402);
    expect((err as HttpError).extra).toMatchObject({ needed: 6, available: 5 });
    expect(account.credits).toBe(5);
    expect(runner.list(account)).toHaveLength(0);
    return runner.close();
  });

  it('a TaskFailure fails the task and refunds exactly once however often the failure is reported', async () => {
    const t = testContext();
    const hooked: string[] = [];
    taskTerminalHooks(t.ctx).push((task) => {
      hooked.push(`${task.taskId}:${task.state}`);
    });
    const worker: TaskWorker<string, string> = async () => {
      throw new TaskFailure('generation_failed', 'engine broke');
    };
    const runner = new TaskRunner(t.ctx, { type: 'unit-fail', worker, startDelayMs: 0 });
    const account = t.account();
    const task = await runner.create(account, 'x', { charge: { currency: 'credits', amount: 40 }, requestId: 'r' });
    expect(account.credits).toBe(60);
    const done = await runner.settled(task.taskId);
    expect(done).toMatchObject({ state: TaskState.failed, errorCode: 'generation_failed', errorMessage: 'engine broke', refunded: true, creditsCharged: 0 });
    expect(account.credits).toBe(100);
    expect(runner.fail(task.taskId, 'generation_failed', 'again')).toBe(false);
    expect(runner.refund(task.taskId)).toBe(false);
    expect(runner.refund(task.taskId)).toBe(false);
    expect(account.credits).toBe(100);
    expect(runner.get(account, task.taskId).errorMessage).toBe('engine broke');
    expect(hooked).toEqual([`${task.taskId}:failed`]);
  });

  it('an unexpected worker error fails with internal_error (refunded)', async () => {
    const t = testContext();
    const runner = new TaskRunner<string, string>(t.ctx, {
      type: 'unit-crash',
      startDelayMs: 0,
      worker: async () => {
        throw new Error('boom');
      },
    });
    const account = t.account();
    const task = await runner.create(account, 'x', { charge: { currency: 'credits', amount: 10 }, requestId: 'r' });
    const done = await runner.settled(task.taskId);
    expect(done).toMatchObject({ state: TaskState.failed, errorCode: 'internal_error' });
    expect(account.credits).toBe(100);
    // The crash went to the server's log, not to a client.
    expect(t.logs.map((l) => [l.where, (l.error as Error).message])).toEqual([[`unit-crash task ${task.taskId} crashed`, 'boom']]);
  });

  it('partial keeps only keepAmount of the charge, once', async () => {
    const t = testContext();
    const { worker, gates } = controlledWorker();
    const runner = new TaskRunner(t.ctx, { type: 'unit-partial', worker, startDelayMs: 0 });
    const account = t.account();
    const task = await runner.create(account, 'x', { charge: { currency: 'credits', amount: 50 }, requestId: 'r' });
    await waitFor(() => gates.length === 1);
    gates[0]!.resolve({ result: 'some', partial: { errorCode: 'generation_failed', errorMessage: '1 of 2 failed', keepAmount: 20 } });
    const done = await runner.settled(task.taskId);
    expect(done).toMatchObject({ state: TaskState.partial, errorCode: 'generation_failed', creditsCharged: 20 });
    expect(isTerminal(done.state)).toBe(true);
    expect(account.credits).toBe(80);
    // A late failure report does not rewrite the terminal state nor refund.
    expect(runner.fail(task.taskId, 'x', 'late')).toBe(false);
    expect(runner.get(account, task.taskId).state).toBe(TaskState.partial);
    expect(account.credits).toBe(80);
  });

  it('a succeeded task is never rewritten by a later failure report', async () => {
    const t = testContext();
    const { worker, gates } = controlledWorker();
    const runner = new TaskRunner(t.ctx, { type: 'unit-final', worker, startDelayMs: 0 });
    const account = t.account();
    const task = await runner.create(account, 'x', { charge: { currency: 'credits', amount: 10 }, requestId: 'r' });
    await waitFor(() => gates.length === 1);
    gates[0]!.resolve({ result: 'ok' });
    await runner.settled(task.taskId);
    expect(runner.fail(task.taskId, 'generation_failed', 'late')).toBe(false);
    expect(runner.get(account, task.taskId)).toMatchObject({ state: TaskState.succeeded, errorCode: null });
    expect(account.credits).toBe(90);
  });

  it('404 for another account; lists newest first with state, createdAfter and where filters', async () => {
    const t = testContext();
    const { worker } = controlledWorker();
    const runner = new TaskRunner(t.ctx, { type: 'unit-list', worker, startDelayMs: 60_000 });
    const a = t.account();
    const b = t.account();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await runner.create(a, `a${i}`, { requestId: 'r' })).taskId);
      t.advance(1000);
    }
    const bTask = await runner.create(b, 'b0', { requestId: 'r' });
    expect(() => runner.get(a, bTask.taskId)).toThrow(HttpError);
    expect(runner.list(a).map((x) => x.taskId)).toEqual([ids[2], ids[1], ids[0]]);
    expect(runner.list(a, { createdAfter: runner.get(a, ids[0]!).createdAt }).map((x) => x.taskId)).toEqual([ids[2], ids[1]]);
    expect(runner.list(a, { states: [TaskState.succeeded] })).toHaveLength(0);
    expect(runner.list(a, { where: (x: Task<string, string>) => x.input === 'a1' }).map((x) => x.taskId)).toEqual([ids[1]]);
    expect(runner.list(b).map((x) => x.taskId)).toEqual([bTask.taskId]);
    await runner.close();
  });

  it('close() aborts running workers: a worker that stops on the signal fails and is refunded', async () => {
    const t = testContext();
    const runner = new TaskRunner<string, string>(t.ctx, {
      type: 'unit-close',
      startDelayMs: 0,
      worker: ({ signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new TaskFailure('aborted', 'server closing')));
        }),
    });
    const account = t.account();
    const task = await runner.create(account, 'x', { charge: { currency: 'credits', amount: 25 }, requestId: 'r' });
    await waitFor(() => runner.get(account, task.taskId).state === TaskState.processing);
    await runner.close();
    expect(runner.get(account, task.taskId)).toMatchObject({ state: TaskState.failed, errorCode: 'aborted' });
    expect(account.credits).toBe(100);
  });

  it('tasks a previous process left pending or processing (it exited or was killed) run again at start and end once, with one charge each', async () => {
    const t = testContext();
    const account = t.account();
    // Process 1 accepts a task and exits before it starts: close() leaves it pending.
    const first = new TaskRunner<string, string>(t.ctx, { type: 'unit-recover', startDelayMs: 60_000, worker: controlledWorker().worker });
    const pending = await first.create(account, 'p', { charge: { currency: 'credits', amount: 10 }, requestId: 'r1' });
    await first.close();
    expect(first.peek(pending.taskId)!.state).toBe(TaskState.pending);
    // Process 2 starts it again and accepts another; both are mid-work when it is killed (never closed).
    const hanging = controlledWorker();
    const second = new TaskRunner<string, string>(t.ctx, { type: 'unit-recover', startDelayMs: 0, worker: hanging.worker });
    const processing = await second.create(account, 'x', { charge: { currency: 'credits', amount: 20 }, requestId: 'r2' });
    await waitFor(() => hanging.started.length === 2);
    expect(second.peek(processing.taskId)!.state).toBe(TaskState.processing);
    expect(second.active).toBe(2);
    // Process 3 on the same store: both run again and succeed.
    const ran: string[] = [];
    const ended: string[] = [];
    const third = new TaskRunner<string, string>(t.ctx, {
      type: 'unit-recover',
      startDelayMs: 0,
      worker: async ({ task }) => {
        ran.push(task.input);
        return { result: `done ${task.input}` };
      },
    });
    third.onTerminal.push((task) => {
      ended.push(`${task.taskId}:${task.state}`);
    });
    expect(third.active).toBe(2);
    await third.idle();
    expect(third.active).toBe(0);
    expect(ran.sort()).toEqual(['p', 'x']);
    expect(ended.sort()).toEqual([`${pending.taskId}:succeeded`, `${processing.taskId}:succeeded`].sort());
    for (const [task, amount] of [[pending, 10], [processing, 20]] as const) {
      expect(third.get(account, task.taskId)).toMatchObject({ state: TaskState.succeeded, result: `done ${task.input}`, creditsCharged: amount, refunded: false });
      expect(t.ctx.store.ledger.get(`job:${task.taskId}`)).toMatchObject({ amount, state: 'committed' });
    }
    expect([...t.ctx.store.ledger.values()].filter((e) => e.userId === account.userId)).toHaveLength(2);
    expect(account.credits).toBe(70);
    await third.close();
  });

  it('idle() resolves once every task has ended', async () => {
    const t = testContext();
    const { worker, gates } = controlledWorker();
    const runner = new TaskRunner(t.ctx, { type: 'unit-idle', worker, startDelayMs: 0 });
    await runner.idle();
    const task = await runner.create(t.account(), 'a', { requestId: 'r' });
    let idle = false;
    void runner.idle().then(() => (idle = true));
    await waitFor(() => gates.length === 1);
    expect(idle).toBe(false);
    gates[0]!.resolve({ result: 'done' });
    await runner.settled(task.taskId);
    await waitFor(() => idle);
    await runner.close();
  });

  it('a throwing completion hook does not disturb the task or other hooks', async () => {
    const t = testContext();
    const calls: string[] = [];
    const runner = new TaskRunner<string, string>(t.ctx, { type: 'unit-hooks', startDelayMs: 0, worker: async () => ({ result: 'ok' }) });
    runner.onTerminal.push(() => {
      throw new Error('hook broke');
    });
    runner.onTerminal.push((task) => {
      calls.push(task.state);
    });
    const task = await runner.create(t.account(), 'x', { requestId: 'r' });
    expect((await runner.settled(task.taskId)).state).toBe(TaskState.succeeded);
    expect(calls).toEqual(['succeeded']);
    expect(t.logs.map((l) => l.where)).toEqual(['task completion hook failed']);
  });
});
