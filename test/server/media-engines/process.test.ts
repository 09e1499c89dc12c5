import { describe, expect, it } from 'vitest';
import { findExecutable, Limiter, ProcessError, runProcess, withTempDir, writeWithBackpressure } from '../../../src/server/media-engines/process.js';
import { existsSync } from 'node:fs';

const SH = findExecutable('sh')!;

describe('findExecutable', () => {
  it('finds a program on PATH and not a missing one', () => {
    expect(SH).toMatch(/\/sh$/);
    expect(findExecutable('voxpipe-no-such-program')).toBeUndefined();
    expect(findExecutable('sh', '')).toBeUndefined();
  });
});

describe('runProcess', () => {
  it('returns standard output and feeds standard input', async () => {
    const { stdout } = await runProcess(SH, ['-c', 'cat; printf done'], { input: Buffer.from('in:') });
    expect(stdout.toString()).toBe('in:done');
  });

  it('streams input through a producer with backpressure', async () => {
    const chunk = new Uint8Array(256 * 1024).fill(97);
    const { stdout } = await runProcess(SH, ['-c', 'wc -c'], {
      input: async (stdin) => {
        for (let i = 0; i < 16; i++) await writeWithBackpressure(stdin, chunk);
      },
    });
    expect(Number(stdout.toString().trim())).toBe(16 * 256 * 1024);
  });

  it('rejects with the exit code and the last stderr line', async () => {
    const err = await runProcess(SH, ['-c', 'echo first >&2; echo "the reason" >&2; exit 3']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessError);
    expect((err as ProcessError).exitCode).toBe(3);
    expect((err as ProcessError).message).toMatch(/exited with code 3: the reason/);
  });

  it('kills on timeout, on abort and on too much output', async () => {
    await expect(runProcess(SH, ['-c', 'sleep 5'], { timeoutMs: 100 })).rejects.toThrow(/timed out after 100 ms/);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(runProcess(SH, ['-c', 'sleep 5'], { signal: controller.signal })).rejects.toThrow(/aborted/);
    await expect(runProcess(SH, ['-c', 'yes'], { maxStdoutBytes: 10_000 })).rejects.toThrow(/printed more than 10000 bytes/);
  });
});

describe('Limiter', () => {
  it('runs at most `limit` at once, the rest in arrival order', async () => {
    const limiter = new Limiter(2);
    let active = 0;
    let most = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const runs = [0, 1, 2, 3, 4].map((i) =>
      limiter.run(async () => {
        started.push(i);
        active++;
        most = Math.max(most, active);
        await new Promise<void>((r) => releases.push(r));
        active--;
        return i;
      }),
    );
    while (releases.length < 2) await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    // A newcomer arriving while a slot is handed over must not jump the queue.
    releases.shift()!();
    const late = limiter.run(async () => {
      started.push(99);
      return 99;
    });
    while (started.length < 3) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 10 && releases.length < 5; i++) {
      releases.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    while (releases.length) releases.shift()!();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(await late).toBe(99);
    expect(started.slice(0, 5)).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });
});

describe('withTempDir', () => {
  it('removes the directory after the work, even when it throws', async () => {
    let seen = '';
    await expect(
      withTempDir(async (dir) => {
        seen = dir;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(seen).not.toBe('');
    expect(existsSync(seen)).toBe(false);
  });
});
