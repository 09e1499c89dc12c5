import { describe, expect, it } from 'vitest';
import { AbortError, InternalServerError, NotFoundError, RateLimitError, TimeoutError, VoxpipeError } from '../../src/errors.js';
import { JobHandle, nextPollDelayMs, type JobEvent, type JobSource } from '../../src/http/job-handle.js';
import { baseTaskFields, JobFailedError, normalizeStatus, TaskStatus, type BaseTask } from '../../src/http/task.js';
import { recordingSleep } from './fake-server.js';

const task = (status: string, extra: Record<string, unknown> = {}): BaseTask => baseTaskFields({ taskId: 't1', status, ...extra }, 'tasks');

/** A source that answers each fetch with the next scripted item (a task or an error to throw). */
function scripted(script: (BaseTask | Error)[], download?: JobSource<BaseTask>['download']): JobSource<BaseTask> & { calls: number } {
  const source = {
    calls: 0,
    async fetch(): Promise<BaseTask> {
      const next = script[Math.min(source.calls++, script.length - 1)]!;
      if (next instanceof Error) throw next;
      return next;
    },
    ...(download ? { download } : {}),
  };
  return source;
}

describe('nextPollDelayMs', () => {
  it('starts at 3 s and grows gradually to 5 s by default', () => {
    const o = { intervalMs: 3_000, maxIntervalMs: 5_000, growth: 1.2 };
    const seq: number[] = [];
    let d: number | undefined;
    for (let i = 0; i < 6; i++) seq.push((d = nextPollDelayMs(d, o)));
    expect(seq).toEqual([3_000, 3_600, 4_320, 5_000, 5_000, 5_000]);
  });
});

describe('normalizeStatus', () => {
  it('maps every family spelling to one vocabulary and keeps unknown states non-terminal', () => {
    expect(normalizeStatus('success')).toBe(TaskStatus.succeeded);
    expect(normalizeStatus('completed')).toBe(TaskStatus.succeeded);
    expect(normalizeStatus('partial_fail')).toBe(TaskStatus.partialFailed);
    expect(normalizeStatus('fail')).toBe(TaskStatus.failed);
    expect(normalizeStatus('queued')).toBe(TaskStatus.queued);
    expect(normalizeStatus('warming_up')).toBe(TaskStatus.processing);
  });
});

describe('JobHandle', () => {
  it('polls with growing delays until terminal and yields only status changes', async () => {
    const source = scripted([task('queued'), task('pending'), task('processing'), task('processing'), task('processing'), task('succeeded', { resultUrl: '/r' })]);
    const { delays, sleep } = recordingSleep();
    const handle = new JobHandle('t1', source, undefined, { sleep });
    const progress: JobEvent<BaseTask>[] = [];
    const seen: string[] = [];
    for await (const e of handle.events({ onProgress: (p) => progress.push(p) })) seen.push(e.status);
    expect(seen).toEqual(['queued', 'pending', 'processing', 'succeeded']);
    expect(progress).toHaveLength(6);
    expect(progress.filter((p) => !p.changed)).toHaveLength(2);
    // First poll at once (no snapshot), then 3 s growing to 5 s.
    expect(delays).toEqual([3_000, 3_600, 4_320, 5_000, 5_000]);
    expect(handle.task?.status).toBe('succeeded');
  });

  it('is async-iterable with for await, using the handle defaults', async () => {
    const { sleep } = recordingSleep();
    const handle = new JobHandle('t1', scripted([task('processing'), task('failed', { errorCode: 'generation_failed' })]), undefined, { sleep, intervalMs: 10 });
    const statuses: string[] = [];
    for await (const e of handle) statuses.push(e.status);
    expect(statuses).toEqual(['processing', 'failed']);
  });

  it('returns at once for a terminal snapshot, without polling', async () => {
    const source = scripted([task('processing')]);
    const handle = new JobHandle('t1', source, task('succeeded'));
    expect((await handle.wait()).status).toBe('succeeded');
    expect(source.calls).toBe(0);
  });

  it('waits one interval before the first poll when the create response was the snapshot', async () => {
    const { delays, sleep } = recordingSleep();
    const handle = new JobHandle('t1', scripted([task('succeeded')]), task('pending'), { sleep, intervalMs: 100, maxIntervalMs: 200 });
    await handle.wait();
    expect(delays).toEqual([100]);
  });

  it('waits out transient errors (honouring Retry-After) and throws the others', async () => {
    const limited = Object.assign(new RateLimitError(429, 'rate_limited', 'slow', { retryable: true }), { retryAfterMs: 7_000 });
    const { delays, sleep } = recordingSleep();
    const source = scripted([limited, new InternalServerError(500, 'internal_error', 'x', { retryable: true }), task('succeeded')]);
    const done = await new JobHandle('t1', source, undefined, { sleep }).wait();
    expect(done.status).toBe('succeeded');
    expect(delays).toEqual([7_000, 3_600]);

    const gone = scripted([task('processing'), new NotFoundError(404, 'not_found', 'gone')]);
    await expect(new JobHandle('t1', gone, undefined, { sleep }).wait()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('gives up after maxConsecutiveErrors transient failures', async () => {
    const { sleep } = recordingSleep();
    const err = new InternalServerError(500, 'internal_error', 'down', { retryable: true });
    const source = scripted([err]);
    await expect(new JobHandle('t1', source, undefined, { sleep, maxConsecutiveErrors: 2 }).wait()).rejects.toBe(err);
    expect(source.calls).toBe(3);
  });

  it('result() throws JobFailedError with the task error code; partial_failed counts as a result', async () => {
    const failed = new JobHandle('t1', scripted([task('fail', { errorCode: 'provider_timeout', errorMessage: 'engine timed out' })]));
    const err = await failed.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err).toMatchObject({ code: 'provider_timeout' });
    expect((err as JobFailedError).task.errorMessage).toBe('engine timed out');
    const partial = new JobHandle('t1', scripted([task('partial_fail')]));
    expect((await partial.result()).status).toBe(TaskStatus.partialFailed);
  });

  it('download() waits for the result, then downloads it; without a download source it says so', async () => {
    const { sleep } = recordingSleep();
    const source = scripted([task('processing'), task('succeeded')], async (t, o) => ({ data: Buffer.from(`file-of-${t.id}-${String(o.download)}`), contentType: 'video/mp4', url: 'u', requestId: undefined }));
    const file = await new JobHandle('t1', source, undefined, { sleep }).download({ download: true });
    expect(file.data.toString()).toBe('file-of-t1-true');
    await expect(new JobHandle('t1', scripted([task('succeeded')])).download()).rejects.toMatchObject({ code: 'unsupported' });
  });

  it('stops with AbortError when the signal aborts during a wait', async () => {
    const ac = new AbortController();
    const handle = new JobHandle('t1', scripted([task('processing')]), undefined, { intervalMs: 60_000 });
    const p = handle.wait({ signal: ac.signal });
    setTimeout(() => ac.abort(), 10);
    await expect(p).rejects.toBeInstanceOf(AbortError);
  });

  it('stops with TimeoutError after timeoutMs', async () => {
    const handle = new JobHandle('t1', scripted([task('processing')]), undefined, { intervalMs: 5, maxIntervalMs: 5 });
    const err = await handle.wait({ timeoutMs: 30 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toBeInstanceOf(VoxpipeError);
  });
});
