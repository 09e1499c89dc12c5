/**
 * A sink that writes to one file through a `FileHandle`: opened in
 * `_construct` (so no write happens before the file exists), closed in
 * `_destroy` (so `done` resolves only after the file is closed). Subclasses
 * may write a prologue after opening and patch the file before closing.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { BaseSink, sinkError, type SinkOptions } from './base-sink.js';

export abstract class FileSink extends BaseSink {
  private handle: FileHandle | undefined;
  /** Bytes written to the file after the prologue. */
  protected bodyBytes = 0;

  constructor(
    readonly path: string,
    options: SinkOptions = {},
  ) {
    super(options);
  }

  /** Bytes to write first (e.g. a placeholder header); none by default. */
  protected prologue(): Buffer | undefined {
    return undefined;
  }

  /** Last changes before the file is closed (e.g. patching sizes). */
  protected async epilogue(_file: FileHandle): Promise<void> {}

  override _construct(callback: (error?: Error | null) => void): void {
    this.openFile().then(() => callback(), callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    this.writeAll(chunk).then(
      () => {
        this.bodyBytes += chunk.length;
        callback();
      },
      (error: unknown) => callback(sinkError(`cannot write ${this.path}`, error)),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    const file = this.handle;
    if (!file) return callback();
    this.epilogue(file).then(
      () => callback(),
      (error: unknown) => callback(sinkError(`cannot finish ${this.path}`, error)),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const file = this.handle;
    this.handle = undefined;
    if (!file) return callback(error);
    // Destroyed before end() (an abort, a failed pipeline): still leave a file
    // that says what it holds (a WAV's sizes patched to the data written).
    const finish = this.writableFinished ? Promise.resolve() : this.epilogue(file).catch(() => undefined);
    finish.then(() => file.close()).then(
      () => callback(error),
      (closeError: unknown) => callback(error ?? sinkError(`cannot close ${this.path}`, closeError)),
    );
  }

  private async openFile(): Promise<void> {
    try {
      this.handle = await open(this.path, 'w');
      const head = this.prologue();
      if (head) await this.writeAll(head);
    } catch (error) {
      throw sinkError(`cannot open ${this.path}`, error);
    }
  }

  /** Write at the current position; `FileHandle.write` may write less than asked. */
  private async writeAll(bytes: Buffer): Promise<void> {
    const file = this.handle;
    if (!file) throw new Error('file is not open');
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  }
}
