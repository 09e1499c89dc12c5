/**
 * The embedded default as a small local service: the first
 * command with no VOXPIPE_BASE_URL starts `daemon-entry.js` detached; it owns
 * the data directory (the PGlite store and its lock) and stays warm until it
 * has been idle for VOXPIPE_DAEMON_IDLE (default 10 min). Later commands find
 * it through `DIR/daemon.json` and talk to it over loopback, so they neither
 * load the server nor wait on the directory's lock, and six commands at once
 * share one store.
 *
 * - `daemon.json` (mode 0600): pid, identity (package version, build, engine,
 *   dialect), the server's URLs, a control port and a random key made by this
 *   daemon. The key is its account's API key and the control channel's
 *   password; it is never logged or printed.
 * - The control channel (127.0.0.1, one JSON line each way): `hold` keeps the
 *   daemon alive while the command's socket stays open (so an idle shutdown
 *   never cuts a command short: the daemon decides to stop only with no hold
 *   open, and refuses holds from then on); `status`, `prune`, `stop`.
 * - Starting: one command takes `DIR/daemon.start` (created exclusively,
 *   holding its pid) and spawns the daemon; the others wait for `daemon.json`.
 *   A dead pid's start lock or state file is stale and removed.
 * - A daemon of another identity (a new version of voxpipe) is told to
 *   retire: it removes its state file, refuses new holds and exits once its
 *   commands are done; the new one takes the store's lock when it is free.
 *
 * This module loads no server code: the daemon's side is `daemon-entry.ts`.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VoxpipeError } from '../errors.js';
import { lockHolderAlive, tryLockFile } from '../server/store/lock.js';

export const STATE_FILE = 'daemon.json';
export const START_LOCK = 'daemon.start';
export const LOG_FILE = 'daemon.log';

/** Environment variables of the daemon. */
export const DAEMON_ENV = {
  /** `0`: no daemon; each command runs the embedded server in-process on the data directory (one at a time). */
  enabled: 'VOXPIPE_DAEMON',
  /** How long the daemon stays up with no command (a duration: 600, 90s, 10m, 1h); default 10 min. */
  idle: 'VOXPIPE_DAEMON_IDLE',
  /** How long job results, stored audio files and finished tasks are kept; default 24 h. */
  retention: 'VOXPIPE_DATA_RETENTION',
  /** How long a finished realtime request, and the audio kept to resume it, is kept; default 10 min. */
  resumeWindow: 'VOXPIPE_RESUME_WINDOW',
} as const;

export const DEFAULT_IDLE_MS = 10 * 60_000; // 10 min
export const DEFAULT_RETENTION_MS = 24 * 3_600_000; // 24 h
export const DEFAULT_RESUME_WINDOW_MS = 10 * 60_000; // 10 min
/**
 * The audio kept to resume finished requests, all together; past it the
 * oldest are dropped first. With the write-ahead log's bound it bounds the
 * data directory (`data` prints both).
 */
export const RESUME_AUDIO_MAX_BYTES = 64 * 1_048_576; // 64 MiB
/** The write-ahead log is checkpointed and trimmed when it passes this. */
export const WAL_MAX_BYTES = 32 * 1_048_576; // 32 MiB

export interface DaemonState {
  pid: number;
  identity: string;
  controlPort: number;
  baseUrl: string;
  rootUrl: string;
  wsUrl: string;
  rtHttpUrl: string;
  key: string;
  startedAt: string;
  idleMs: number;
  retentionMs: number;
  resumeWindowMs: number;
}

/** A failure of the local service: its start, or its control channel. */
export class DaemonError extends VoxpipeError {
  override name = 'DaemonError';
  constructor(message: string) {
    super('daemon_failed', message);
  }
}

/** A setting in the environment that cannot be used. */
export class DaemonConfigError extends VoxpipeError {
  override name = 'DaemonConfigError';
  constructor(message: string) {
    super('invalid_config', message);
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration: a number of seconds, or a number with ms, s, m, h or d (`90s`, `10m`, `24h`, `0`). */
export function parseDuration(text: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) throw new DaemonConfigError(`${name} must be a duration such as 90s, 10m, 24h or 0, got ${JSON.stringify(text)}`);
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 's']!);
}

function durationFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  return value === undefined || value === '' ? fallback : parseDuration(value, name);
}

export const idleMsOf = (env: NodeJS.ProcessEnv): number => durationFromEnv(env, DAEMON_ENV.idle, DEFAULT_IDLE_MS);
export const retentionMsOf = (env: NodeJS.ProcessEnv): number => durationFromEnv(env, DAEMON_ENV.retention, DEFAULT_RETENTION_MS);
export const resumeWindowMsOf = (env: NodeJS.ProcessEnv): number => durationFromEnv(env, DAEMON_ENV.resumeWindow, DEFAULT_RESUME_WINDOW_MS);

/** Whether commands use the daemon (unless VOXPIPE_DAEMON=0). */
export function daemonEnabled(env: NodeJS.ProcessEnv): boolean {
  const v = env[DAEMON_ENV.enabled];
  return !(v === '0' || v === 'false' || v === 'off');
}

/** The daemon's program (dist/cli/daemon-entry.js beside this module). */
const ENTRY = fileURLToPath(new URL('./daemon-entry.js', import.meta.url));

let versionCache: string | undefined;
/** The package's version and this build (the entry's mtime): a rebuilt or upgraded voxpipe restarts the daemon. */
function buildVersion(): string {
  if (versionCache === undefined) {
    let version = 'unknown';
    try {
      version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? version;
    } catch {
      // keep unknown
    }
    let build = 0;
    try {
      build = Math.round(statSync(ENTRY).mtimeMs);
    } catch {
      // not built
    }
    versionCache = `${version}+${build}`;
  }
  return versionCache;
}

/** What a daemon must match to serve a command: the build, and the server settings it took from the environment. */
export function identityOf(env: NodeJS.ProcessEnv, engine: string | undefined): string {
  return JSON.stringify({ version: buildVersion(), engine: engine ?? 'auto', dialect: env['VOXPIPE_DIALECT'] || 'reference', retention: retentionMsOf(env), resume: resumeWindowMsOf(env), idle: idleMsOf(env) });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function readState(dir: string): Promise<DaemonState | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, STATE_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const state = JSON.parse(text) as DaemonState;
    return typeof state.pid === 'number' && typeof state.controlPort === 'number' && typeof state.key === 'string' ? state : undefined;
  } catch {
    return undefined; // being written: the writer renames a whole file into place, so this is a broken one
  }
}

/** Write the state file whole (a temporary file renamed into place), readable by its owner only. */
export async function writeState(dir: string, state: DaemonState): Promise<void> {
  const tmp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  await rename(tmp, join(dir, STATE_FILE));
}

/** Remove the state file if it still names `pid` (never a newer daemon's). */
export async function removeState(dir: string, pid: number): Promise<void> {
  const state = await readState(dir);
  if (state?.pid === pid) await unlink(join(dir, STATE_FILE)).catch(() => undefined);
}

/** What the control channel answers. */
export interface ControlReply {
  ok: boolean;
  /** Why not (`retiring`: the daemon is stopping; `key`: wrong key). */
  reason?: string;
  [field: string]: unknown;
}

/**
 * One control request: connect, send `{ key, op, ...args }`, read one JSON
 * line. `keep`: the socket stays open after the reply (a hold), unref'd so it
 * keeps no process alive.
 */
export function control(state: DaemonState, op: string, args: Record<string, unknown> = {}, keep = false, timeoutMs = 120_000): Promise<{ reply: ControlReply; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: state.controlPort });
    let buffer = '';
    const timer = setTimeout(() => fail(new DaemonError(`the local service (process ${state.pid}) did not answer ${op} in ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.setEncoding('utf8');
    socket.on('error', fail);
    socket.on('connect', () => socket.write(`${JSON.stringify({ ...args, key: state.key, op })}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.removeAllListeners('data');
      socket.removeListener('error', fail);
      // A daemon that dies while a command holds it: the command's own requests say so.
      socket.on('error', () => undefined);
      let reply: ControlReply;
      try {
        reply = JSON.parse(buffer.slice(0, end)) as ControlReply;
      } catch {
        socket.destroy();
        reject(new DaemonError(`the local service (process ${state.pid}) answered ${op} with something that is not JSON`));
        return;
      }
      if (keep) socket.unref();
      else socket.end();
      resolve({ reply, socket });
    });
    socket.on('end', () => fail(new DaemonError(`the local service (process ${state.pid}) closed the control channel`)));
  });
}

/** A command's use of the daemon: its service config, and the hold that keeps it up until `release`. */
export interface DaemonLease {
  state: DaemonState;
  /** This command started it (the first after it was down). */
  started: boolean;
  release(): void;
}

export interface ConnectOptions {
  env: NodeJS.ProcessEnv;
  /** The embedded server's engine, when a command names one (`--engine`). */
  engine?: string | undefined;
  /** How long to wait for the daemon to start (creating the store takes a few seconds the first time, tens on a loaded machine); default 120 s. */
  startTimeoutMs?: number;
}

/**
 * Find the daemon of `dir` (starting it if none runs, replacing one of
 * another identity) and hold it for this command.
 */
export async function connectDaemon(directory: string, options: ConnectOptions): Promise<DaemonLease> {
  // The service runs in the directory it serves (it keeps no other folder busy): a relative path is made absolute first.
  const dir = resolve(directory);
  const identity = identityOf(options.env, options.engine);
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  await mkdir(dir, { recursive: true });
  let started = false;
  let lastProblem = 'no local service';
  while (Date.now() < deadline) {
    const state = await readState(dir);
    if (state) {
      if (state.identity !== identity) {
        // Another version (or engine, dialect): it retires; the new one starts when the store is free.
        await control(state, 'retire', {}, false, 5_000).catch(() => undefined);
        await removeState(dir, state.pid);
        lastProblem = `the local service of another version (process ${state.pid}) is stopping`;
        continue;
      }
      const held = await control(state, 'hold', {}, true, 10_000).catch((err: Error) => err);
      if (!(held instanceof Error) && held.reply.ok) {
        const socket = held.socket;
        return { state, started, release: () => socket.destroy() };
      }
      if (!(held instanceof Error)) held.socket.destroy();
      lastProblem = held instanceof Error ? held.message : `the local service (process ${state.pid}) answered ${held.reply.reason ?? 'no'}`;
      // Stopping (it removes its state file first), or gone: a dead one's state is stale.
      if (!alive(state.pid)) await removeState(dir, state.pid);
      await sleep(25);
      continue;
    }
    const lock = await takeStartLock(dir);
    if (lock === 'busy') {
      await sleep(25); // another command is starting it
      continue;
    }
    try {
      // It may have started between the read above and the lock.
      if (!(await readState(dir))) {
        await startDaemon(dir, options.env, options.engine, identity, deadline);
        started = true;
      }
    } finally {
      await lock();
    }
  }
  throw new DaemonError(`the local voxpipe service for ${dir} did not start in time (${lastProblem}); see ${join(dir, LOG_FILE)}, or run with VOXPIPE_DAEMON=0 or --ephemeral`);
}

/** Take `DIR/daemon.start` (created exclusively); 'busy' while a live process holds it. */
async function takeStartLock(dir: string): Promise<(() => Promise<void>) | 'busy'> {
  const path = join(dir, START_LOCK);
  const got = await tryLockFile(path, 0o600);
  if ('release' in got) return got.release;
  const held = got.held;
  if (held === undefined || held === '') return 'busy'; // released meanwhile, or being written
  if (lockHolderAlive(held)) return 'busy';
  // Stale (its process died while starting the daemon): only that content is removed.
  if ((await readFile(path, 'utf8').catch(() => '')) === held) await unlink(path).catch(() => undefined);
  return 'busy';
}

/** Spawn the daemon detached and wait for its state file; its standard error goes to `DIR/daemon.log`. */
async function startDaemon(dir: string, env: NodeJS.ProcessEnv, engine: string | undefined, identity: string, deadline: number): Promise<void> {
  if (!existsSync(ENTRY)) throw new DaemonError(`the local service's program ${ENTRY} is missing (run npm run build), or run with VOXPIPE_DAEMON=0`);
  const log = openSync(join(dir, LOG_FILE), 'w', 0o600);
  let exited: { code: number | null; signal: string | null } | undefined;
  let child;
  try {
    child = spawn(process.execPath, [ENTRY, dir], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'ignore', log],
      env: { ...env, VOXPIPE_DAEMON_IDENTITY: identity, ...(engine !== undefined && { VOXPIPE_DAEMON_ENGINE: engine }) },
    });
  } finally {
    closeSync(log);
  }
  child.on('exit', (code, signal) => (exited = { code, signal }));
  child.on('error', () => (exited = { code: null, signal: null }));
  child.unref();
  const pid = child.pid;
  try {
    while (Date.now() < deadline) {
      const state = await readState(dir);
      if (state && state.pid === pid) return;
      if (exited) {
        const tail = (await readFile(join(dir, LOG_FILE), 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' / ');
        throw new DaemonError(`the local voxpipe service for ${dir} exited while starting${tail ? `: ${tail}` : ''} (see ${join(dir, LOG_FILE)}; VOXPIPE_DAEMON=0 runs without it)`);
      }
      await sleep(20);
    }
  } finally {
    child.removeAllListeners('exit');
    child.removeAllListeners('error');
  }
  throw new DaemonError(`the local voxpipe service for ${dir} did not start in time; see ${join(dir, LOG_FILE)}`);
}

/** Ask the daemon of `dir` to stop now (after the commands it serves); resolves once its process is gone. Returns its pid, or undefined when none ran. */
export async function stopDaemon(dir: string, timeoutMs = 30_000): Promise<number | undefined> {
  const state = await readState(dir);
  if (!state) return undefined;
  await control(state, 'retire', {}, false, 5_000).catch(() => undefined);
  const deadline = Date.now() + timeoutMs;
  while (alive(state.pid) && Date.now() < deadline) await sleep(25);
  if (alive(state.pid)) throw new DaemonError(`the local service (process ${state.pid}) did not stop in ${Math.round(timeoutMs / 1000)} s`);
  await removeState(dir, state.pid);
  return state.pid;
}
