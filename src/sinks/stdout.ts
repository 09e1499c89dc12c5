/**
 * Standard output as a sink: the bytes exactly as written (`--out -`). If the
 * reader goes away (`voxpipe say --out - | head -c 1000`), the EPIPE ends the
 * output quietly: later audio is dropped and the result says `readerClosed`,
 * instead of an uncaught error.
 */
import type { Writable } from 'node:stream';
import { BaseSink, sinkError, type SinkOptions } from './base-sink.js';
import { SinkKind, type SinkResult } from './types.js';

export interface StdoutSinkOptions extends SinkOptions {
  /** Where the bytes go; default `process.stdout`. It is never ended by the sink. */
  output?: Writable;
}

function isBrokenPipe(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/** Copies every byte to standard output (or `options.output`). */
export class StdoutSink extends BaseSink {
  readonly kind = SinkKind.stdout;
  private readonly output: Writable;
  private readerClosed = false;
  private readonly onOutputError = (error: Error): void => {
    if (isBrokenPipe(error)) this.readerClosed = true;
    else if (!this.destroyed) this.destroy(sinkError('cannot write standard output', error));
  };

  constructor(options: StdoutSinkOptions = {}) {
    super(options);
    this.output = options.output ?? process.stdout;
    // Without a listener, EPIPE on stdout is an uncaught exception.
    this.output.on('error', this.onOutputError);
    this.once('close', () => {
      // A failed output emits its 'error' after we close: keep listening to a dead output, detach from a live one.
      if (!this.output.destroyed) this.output.off('error', this.onOutputError);
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    if (this.readerClosed || this.output.destroyed) {
      this.readerClosed = true;
      return callback();
    }
    this.output.write(chunk, (error) => {
      if (!error) return callback();
      if (isBrokenPipe(error)) {
        this.readerClosed = true;
        return callback();
      }
      return callback(sinkError('cannot write standard output', error));
    });
  }

  protected result(): SinkResult {
    return { kind: this.kind, bytesIn: this.bytesIn, readerClosed: this.readerClosed };
  }
}
