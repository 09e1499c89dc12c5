/** Standard output carries only data; notes and errors go to standard error. */
import { VoxpipeError, redact } from '../errors.js';
import { watchParent } from './parent-watch.js';

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /**
   * Call `handler` once, on the first way the run is told to stop (Ctrl-C,
   * SIGTERM, SIGHUP, the starting command gone) instead of dying; returns
   * the function that stops listening.
   */
  onInterrupt?(handler: (cause: StopCause) => void): () => void;
}

/** Why a run stopped before its end: what the note says, and the exit code (128 + the signal's number). */
export interface StopCause {
  /** `SIGINT`, `SIGTERM`, `SIGHUP`, `SIGPIPE` (standard output closed), or `parent_gone` (the command that started voxpipe went away). */
  name: 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGPIPE' | 'parent_gone';
  /** For the note: `interrupted`, `terminated (SIGTERM)`, ... */
  text: string;
  exit: number;
}

export const STOP_CAUSES: Readonly<Record<StopCause['name'], StopCause>> = {
  SIGINT: { name: 'SIGINT', text: 'interrupted', exit: 130 },
  SIGTERM: { name: 'SIGTERM', text: 'terminated (SIGTERM)', exit: 143 },
  SIGHUP: { name: 'SIGHUP', text: 'hung up (SIGHUP)', exit: 129 },
  // Its reader went away (`voxpipe say --out - | head -c 1000`): as the shell's own tools do on SIGPIPE.
  SIGPIPE: { name: 'SIGPIPE', text: 'standard output was closed', exit: 141 },
  // Like a hang-up: whoever was waiting for the result is gone.
  parent_gone: { name: 'parent_gone', text: 'the command that started voxpipe went away', exit: 129 },
};

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** A second stop signal within this of the first is the same stop delivered twice; later, a demand to leave at once. */
const REPEAT_GRACE_MS = 1_000;


export const processIo = (): Io => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  onInterrupt(handler) {
    let stoppedAt: number | undefined;
    const fire = (name: StopCause['name']) => {
      if (stoppedAt !== undefined) {
        // One stop often arrives twice: `timeout` signals the process and then its
        // group, a terminal's Ctrl-C reaches every process of the job. The listeners
        // stay while the stop finishes the file (without one, a repeat would kill the
        // process half-way); a repeat after a moment is someone insisting: leave now.
        if (Date.now() - stoppedAt < REPEAT_GRACE_MS) return;
        process.exit(STOP_CAUSES[name].exit);
      }
      stoppedAt = Date.now();
      unwatch();
      handler(STOP_CAUSES[name]);
    };
    const listeners = STOP_SIGNALS.map((signal) => [signal, () => fire(signal)] as const);
    for (const [signal, listener] of listeners) process.on(signal, listener);
    const unwatch = watchParent(process.env, fire);
    return () => {
      unwatch();
      for (const [signal, listener] of listeners) process.off(signal, listener);
    };
  },
});

export function note(io: Io, text: string): void {
  io.stderr.write(`voxpipe: ${redact(text)}\n`);
}

/**
 * Exit codes: 0 ok, 1 service, input or environment error, 2 usage error, 70 internal (a bug),
 * 128 + the signal's number when stopped by one (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP or the
 * starting command gone, 141 standard output closed).
 */
export const ExitCode = { ok: 0, error: 1, usage: 2, internal: 70, interrupted: 130 } as const;

/** Where a bug in voxpipe is reported (printed with `internal_error`). */
export const REPORT_BUGS = 'this is a bug in voxpipe; please report it with the command you ran';

/** What a failure means for the user: the code of its line and the exit code. */
export interface Failure {
  code: string;
  message: string;
  exit: number;
}

const OUTPUT_ERRORS: ReadonlySet<string> = new Set(['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'EROFS', 'ENOSPC']);
const NETWORK_ERRORS: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

/** A Node system error (or the first one in its cause chain). */
function systemErrorOf(err: unknown): (Error & { code: string; path?: string; address?: string; port?: number; hostname?: string; syscall?: string }) | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return e as Error & { code: string };
  }
  return undefined;
}

/**
 * The one place that turns any failure into the CLI's line and exit code.
 * Input and environment problems get their own codes (`output_unwritable`,
 * `address_in_use`, `connection_failed`, `invalid_config`); `internal_error`
 * is left for real bugs.
 */
export function classifyFailure(err: unknown, usageCode?: number): Failure {
  const sys = systemErrorOf(err);
  if (sys?.code === 'EADDRINUSE') {
    const where = sys.address !== undefined && sys.port !== undefined ? `${sys.address}:${sys.port}` : 'that address';
    return { code: 'address_in_use', message: `${where} is already in use; pick another --port, or --port 0 for a free one`, exit: ExitCode.error };
  }
  if (sys?.code === 'EADDRNOTAVAIL' && sys.syscall === 'listen') {
    return { code: 'invalid_config', message: `${sys.address ?? 'that address'} is not an address of this machine; --host takes one of its own (127.0.0.1 for this machine only, 0.0.0.0 for every interface)`, exit: ExitCode.error };
  }
  if (sys?.code === 'EACCES' && sys.syscall === 'listen') {
    return { code: 'invalid_config', message: `no permission to listen on port ${sys.port ?? '?'} (ports below 1024 need privileges); pick a --port from 1024 up, or 0 for a free one`, exit: ExitCode.error };
  }
  if (err instanceof VoxpipeError) {
    if (err.code === 'connection_failed' && badPort(err)) {
      const port = /:(\d+)/.exec(err.message)?.[1] ?? 'its';
      return { code: err.code, message: `port ${port} is one that fetch refuses to use (9, 25, 6000 and others are blocked, as in browsers); give VOXPIPE_BASE_URL another port`, exit: ExitCode.error };
    }
    const hint = HINTS[err.code];
    if (hint !== undefined && !err.message.includes(hint)) return { code: err.code, message: `${err.message}; ${hint}`, exit: usageCode ?? ExitCode.error };
    if (err.code === 'sink_failed' && sys && OUTPUT_ERRORS.has(sys.code)) {
      return { code: 'output_unwritable', message: `cannot write ${sys.path ?? 'the output'}: ${sys.code}`, exit: ExitCode.error };
    }
    const usage = usageCode ?? (err.code === 'invalid_arguments' ? ExitCode.usage : undefined);
    return { code: err.code, message: err.message, exit: usage ?? ExitCode.error };
  }
  if (sys && OUTPUT_ERRORS.has(sys.code) && sys.path !== undefined) {
    return { code: 'output_unwritable', message: `cannot write ${sys.path}: ${sys.code}`, exit: ExitCode.error };
  }
  if (sys && NETWORK_ERRORS.has(sys.code)) {
    const host = sys.hostname ?? (sys.address !== undefined ? `${sys.address}${sys.port !== undefined ? `:${sys.port}` : ''}` : 'the service');
    return { code: 'connection_failed', message: `cannot reach ${host} (${sys.code}); check VOXPIPE_BASE_URL and the network`, exit: ExitCode.error };
  }
  if (err instanceof TypeError && err.message === 'fetch failed') {
    // undici's network failure without a system error code (e.g. a port fetch refuses).
    const why = err.cause instanceof Error ? err.cause.message : 'network error';
    return { code: 'connection_failed', message: `cannot reach the service (${why}); check VOXPIPE_BASE_URL and the network`, exit: ExitCode.error };
  }
  if (err instanceof TypeError && /Failed to parse URL|Invalid URL/.test(err.message)) {
    return { code: 'invalid_config', message: `a service URL is not usable (${err.message}); check VOXPIPE_BASE_URL and VOXPIPE_ROOT_URL`, exit: ExitCode.error };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'internal_error', message: `${message} (${REPORT_BUGS})`, exit: ExitCode.internal };
}

/** Why a file given as input cannot be read, in words (not an errno code): `talk.wav does not exist (in /home/me)`. */
export function unreadable(path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${path} does not exist (in ${process.cwd()}); check the name, or give an http(s) URL`;
  if (code === 'EACCES' || code === 'EPERM') return `${path} cannot be read: permission denied`;
  if (code === 'EISDIR' || (err as Error).message === 'not a file') return `${path} is a folder, not a file`;
  return `cannot read ${path}: ${code ?? (err as Error).message}`;
}

/** Ports fetch refuses to open (the WHATWG "bad port" list: 9, 25, 6000, ...): said plainly, with the fix. */
function badPort(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (/\bbad port\b/.test(e.message)) return true;
  return false;
}

/** What a failure's code says the user should look at, after its message. */
const HINTS: Readonly<Record<string, string>> = {
  unauthorized: 'check VOXPIPE_API_KEY: the deployment did not accept that key',
  authentication_failed: 'check VOXPIPE_API_KEY: the deployment did not accept that key',
  voice_not_found: 'voxpipe voices lists the voices',
};

/** The one stderr line of a failed command: names the error code first; never the key. */
export function errorLine(err: unknown): string {
  const f = classifyFailure(err);
  return `voxpipe: error ${f.code}: ${redact(f.message)}`;
}
