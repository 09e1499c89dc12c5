/**
 * A sink opened at its first byte (or at the end, when no byte came): for a
 * destination whose form depends on the audio's own layout (a WAV file's
 * header, a player's rate), which over HTTP is known only once the audio
 * arrived. `open` is called once; everything written goes to the sink it
 * returns, with its backpressure, and `done` is that sink's.
 */
import { Writable } from 'node:stream';
import { DEFAULT_SINK_HIGH_WATER_MARK, SinkKind, type Sink, type SinkResult } from './types.js';

/** Sinks that keep what they were given when a run fails upstream: files. */
const FILE_KINDS: ReadonlySet<SinkKind> = new Set([SinkKind.wavFile, SinkKind.rawFile]);
/** Longest wait for a file to write what it was given before a failure closes it anyway. */
const KEEP_ON_FAILURE_MS = 5_000;

export class DeferredSink extends Writable implements Sink {
  readonly done: Promise<SinkResult>;
  readonly #open: () => Promise<Sink>;
  #opening: Promise<Sink> | undefined;
  #inner: Sink | undefined;
  #settle!: { resolve: (r: SinkResult) => void; reject: (e: Error) => void };

  constructor(open: () => Promise<Sink>, options: { highWaterMark?: number } = {}) {
    super({ highWaterMark: options.highWaterMark ?? DEFAULT_SINK_HIGH_WATER_MARK });
    this.#open = open;
    this.done = new Promise<SinkResult>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    this.done.catch(() => undefined);
  }

  /** The opened sink's kind; before it opened, `raw-file` (nothing was written anywhere yet). */
  get kind(): SinkKind {
    return this.#inner?.kind ?? SinkKind.rawFile;
  }

  /** The sink, once opened. */
  get inner(): Sink | undefined {
    return this.#inner;
  }

  #sink(): Promise<Sink> {
    this.#opening ??= this.#open().then((sink) => {
      this.#inner = sink;
      sink.done.then(this.#settle.resolve, this.#settle.reject);
      sink.on('error', (err: Error) => this.destroy(err));
      return sink;
    });
    return this.#opening;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#sink().then(
      (sink) => {
        if (sink.write(chunk)) callback();
        else sink.once('drain', () => callback());
      },
      (err: Error) => callback(err),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#sink().then(
      (sink) => {
        sink.end();
        sink.done.then(
          () => callback(),
          (err: Error) => callback(err),
        );
      },
      (err: Error) => callback(err),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const inner = this.#inner;
    if (!inner) {
      this.#settle.reject(error ?? new Error('sink destroyed before it opened'));
      callback(error);
      return;
    }
    if (!error) {
      callback(null);
      return;
    }
    // Failed upstream (a run that stops part-way): a file keeps the audio
    // already handed to it. Destroying it would drop the chunks still queued
    // for its writes (a pipeline destroys every stage at once), so it is
    // ended instead, its header patched to what it holds, within a bound.
    if (FILE_KINDS.has(inner.kind) && !inner.destroyed && !inner.writableEnded) {
      const timer = setTimeout(() => inner.destroy(error), KEEP_ON_FAILURE_MS);
      inner.end();
      inner.done.then(
        () => undefined,
        () => undefined,
      ).finally(() => {
        clearTimeout(timer);
        callback(error);
      });
      return;
    }
    inner.destroy(error);
    callback(error);
  }
}
