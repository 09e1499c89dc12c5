/**
 * A sink that feeds a child process's standard input (an external player,
 * ffmpeg). Each write's callback waits for the pipe to take the bytes, so the
 * child's own pace is the backpressure. `end()` closes stdin and waits for
 * the exit; a non-zero exit, a failure printed on stderr, or an exit before
 * the end of the audio fails the sink with the tail of stderr.
 */
import type { ChildProcess } from 'node:child_process';
import type { VoxpipeError } from '../errors.js';
import { BaseSink, sinkError, type SinkOptions } from './base-sink.js';

/** Bytes of stderr kept for error messages. */
const STDERR_TAIL_BYTES = 2048;

export interface ProcessSinkOptions extends SinkOptions {
  /** Program name for messages, e.g. `ffplay`. */
  label: string;
  /** Stderr text that means failure even when the exit code is 0 (ffplay does that). */
  failurePattern?: RegExp;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export abstract class ProcessSink extends BaseSink {
  private stderrTail = '';
  private exit: Exit | undefined;
  private readonly exited: Promise<Exit>;
  private spawnError: Error | undefined;
  private readonly label: string;
  private readonly failurePattern: RegExp | undefined;

  constructor(
    protected readonly child: ChildProcess,
    options: ProcessSinkOptions,
  ) {
    super(options);
    this.label = options.label;
    this.failurePattern = options.failurePattern;
    if (!child.stdin) throw new Error('child process needs a stdin pipe');
    // EPIPE when the child exits early: reported through the write callback and the exit.
    child.stdin.on('error', () => undefined);
    child.stdout?.resume();
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_BYTES);
    });
    this.exited = new Promise((resolve) => {
      child.once('error', (error) => {
        this.spawnError = error;
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    this.exited.then(() => {
      // An exit before end() is always a failure: the rest of the audio has nowhere to go.
      if (!this.writableEnded && !this.destroyed) this.destroy(this.failure('exited before the end of the audio'));
    }, () => undefined);
  }

  /** Tail of the child's stderr, for messages. */
  get stderr(): string {
    return this.stderrTail;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    const stdin = this.child.stdin;
    if (this.exit || !stdin || stdin.destroyed) return callback(this.failure('is not running'));
    stdin.write(chunk, (error) => {
      if (!error) return callback();
      // The pipe broke because the child died: wait for its exit to say why.
      this.exited.then(() => callback(this.failure('stopped reading its input', error)), () => undefined);
    });
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.child.stdin?.end();
    this.exited.then((exit) => {
      const failed = this.spawnError !== undefined || exit.code !== 0 || this.failedOnStderr();
      callback(failed ? this.failure('failed') : undefined);
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.exit) this.child.kill('SIGTERM');
    callback(error);
  }

  /** The error for a failure; a `sink_failed` VoxpipeError unless a subclass knows better. */
  protected makeError(message: string, cause?: unknown): VoxpipeError {
    return sinkError(message, cause);
  }

  private failedOnStderr(): boolean {
    return this.failurePattern?.test(this.stderrTail) ?? false;
  }

  private failure(what: string, cause?: unknown): VoxpipeError {
    const exit = this.exit;
    const status = this.spawnError
      ? ` (${this.spawnError.message})`
      : exit?.signal
        ? ` (signal ${exit.signal})`
        : exit && exit.code !== null
          ? ` (exit code ${exit.code})`
          : '';
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return this.makeError(`${this.label} ${what}${status}${tail ? `: ${tail}` : ''}`, this.spawnError ?? cause);
  }
}
