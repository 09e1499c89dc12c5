/**
 * Running the external media tools (ffmpeg, ffprobe, pocketsphinx): find an
 * executable on PATH, run it with a time limit, an abort signal and a cap on
 * what it may print, and bound how many run at once (the machine may have
 * two cores; the event loop must stay free).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The full path of `name` on PATH, or undefined when it is not installed. */
export function findExecutable(name: string, path: string = process.env['PATH'] ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export class ProcessError extends Error {
  override name = 'ProcessError';
  constructor(message: string, readonly exitCode: number | null, readonly stderr: string) {
    super(message);
  }
}

export interface RunOptions {
  /** Bytes written to standard input, or a producer that writes them (honouring backpressure). */
  input?: Buffer | ((stdin: NodeJS.WritableStream) => Promise<void>);
  /** Kill the process after this long; default 120_000 ms (2 min). */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
  /** Largest standard output kept; more kills the process; default 256 MiB. */
  maxStdoutBytes?: number;
}

export interface RunResult {
  stdout: Buffer;
  stderr: string;
}

/** Most stderr kept for error messages: 8 KiB (ffmpeg can be chatty). */
const STDERR_KEEP_BYTES = 8 * 1024;

/**
 * Run `file` with `args` and resolve with its output when it exits 0;
 * reject with ProcessError otherwise (non-zero exit, timeout, abort, too much output).
 */
export function runProcess(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? 120_000; // 2 min
  const maxStdout = options.maxStdoutBytes ?? 256 * 1024 * 1024; // 256 MiB
  return new Promise<RunResult>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new ProcessError('aborted', null, ''));
      return;
    }
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: string | undefined;
    const kill = (why: string) => {
      failure ??= why;
      child.kill('SIGKILL');
      // A grandchild holding the pipes open must not keep us waiting for 'close'.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => kill(`timed out after ${timeoutMs} ms`), timeoutMs);
    const onAbort = () => kill('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxStdout) kill(`printed more than ${maxStdout} bytes`);
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < STDERR_KEEP_BYTES) err += chunk.toString('utf8');
    });
    // A tool that exits early (bad input) closes its stdin: that is not our error.
    child.stdin.on('error', () => undefined);
    child.on('error', (e) => {
      failure ??= e.message;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const stderr = err.slice(0, STDERR_KEEP_BYTES).trim();
      if (failure !== undefined || code !== 0) {
        reject(new ProcessError(`${file.split('/').pop()} ${failure ?? `exited with code ${code}`}${stderr ? `: ${lastLine(stderr)}` : ''}`, code, stderr));
        return;
      }
      resolve({ stdout: Buffer.concat(out), stderr });
    });
    const input = options.input;
    if (input === undefined) child.stdin.end();
    else if (Buffer.isBuffer(input)) child.stdin.end(input);
    else {
      input(child.stdin).then(
        () => child.stdin.end(),
        (e: unknown) => kill(`input failed: ${(e as Error)?.message ?? String(e)}`),
      );
    }
  });
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.at(-1) ?? '';
}

/** Write `chunk` to a stream, waiting for `drain` when its buffer is full. */
export async function writeWithBackpressure(stream: NodeJS.WritableStream, chunk: Uint8Array): Promise<void> {
  if (stream.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('error', fail);
      stream.off('close', done);
      resolve();
    };
    const fail = (e: Error) => {
      stream.off('drain', done);
      stream.off('close', done);
      reject(e);
    };
    stream.once('drain', done);
    stream.once('close', done);
    stream.once('error', fail);
  });
}

/** Run `work` with a fresh temporary directory, removed afterwards whatever happens. */
export async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'voxpipe-media-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A counting semaphore: at most `limit` holders at once, the rest wait in order. */
export class Limiter {
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  /** @param limit default: the machine's parallelism minus one, at least 1 */
  constructor(readonly limit: number = Math.max(1, availableParallelism() - 1)) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    // A finishing holder hands its slot straight to the next waiter, so a newcomer cannot slip in between.
    if (this.#active >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }
}

/** One limiter for every heavy media process of this Node process (they compete for the same cores). */
export const MEDIA_PROCESS_LIMITER = new Limiter();
