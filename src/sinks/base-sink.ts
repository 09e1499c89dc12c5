/**
 * The common part of every sink: a `Writable` with a `done` promise that
 * settles on `'close'`, i.e. after `_final` and `_destroy` have run, so a file
 * is closed and a child process has exited by the time it resolves.
 */
import { Writable } from 'node:stream';
import { AbortError, VoxpipeError } from '../errors.js';
import { DEFAULT_SINK_HIGH_WATER_MARK, SinkErrorCode, type Sink, type SinkKind, type SinkResult } from './types.js';

/** Options every sink accepts. */
export interface SinkOptions {
  /** Bytes buffered before `write()` returns false; default 16 KiB. */
  highWaterMark?: number;
}

export abstract class BaseSink extends Writable implements Sink {
  abstract readonly kind: SinkKind;
  readonly done: Promise<SinkResult>;
  /** Bytes accepted through `write()`. */
  protected bytesIn = 0;

  constructor(options: SinkOptions = {}) {
    super({ highWaterMark: options.highWaterMark ?? DEFAULT_SINK_HIGH_WATER_MARK });
    this.done = new Promise<SinkResult>((resolve, reject) => {
      this.once('close', () => {
        if (this.errored) reject(this.errored);
        else if (!this.writableFinished) reject(new AbortError(`${this.kind} sink destroyed before end()`));
        else resolve(this.result());
      });
    });
    // `done` is the error channel: `speech.pipe(sink); await sink.done` must reject, not crash the
    // process with an unhandled 'error' event (pipe() adds no error listener to its destination).
    this.on('error', () => undefined);
    // A caller who never awaits `done` (e.g. uses pipeline) must not get an unhandled rejection.
    this.done.catch(() => undefined);
  }

  /** The result `done` resolves with; called once, after close. */
  protected abstract result(): SinkResult;
}

/** Wrap an I/O failure in a typed error that keeps the original as `cause`. */
export function sinkError(message: string, cause?: unknown): VoxpipeError {
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return new VoxpipeError(SinkErrorCode.sinkFailed, `${message}${detail}`, cause === undefined ? {} : { cause });
}
