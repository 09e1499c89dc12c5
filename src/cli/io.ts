/** Standard output carries only data; notes and errors go to standard error. */
import { VoxpipeError, redact } from '../errors.js';

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Call `handler` on Ctrl-C (SIGINT) instead of dying; returns the function that stops listening. */
  onInterrupt?(handler: () => void): () => void;
}

export const processIo = (): Io => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  onInterrupt(handler) {
    process.once('SIGINT', handler);
    return () => process.off('SIGINT', handler);
  },
});

export function note(io: Io, text: string): void {
  io.stderr.write(`voxpipe: ${redact(text)}\n`);
}

/** The one stderr line of a failed command: names the error code first. */
export function errorLine(err: unknown): string {
  if (err instanceof VoxpipeError) return `voxpipe: error ${err.code}: ${err.message}`;
  return `voxpipe: error internal_error: ${redact(err instanceof Error ? err.message : String(err))}`;
}

/** Exit codes: 0 ok, 1 service or runtime error, 2 usage error, 70 internal, 130 interrupted (Ctrl-C, 128 + SIGINT). */
export const ExitCode = { ok: 0, error: 1, usage: 2, internal: 70, interrupted: 130 } as const;
