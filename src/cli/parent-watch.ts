/**
 * How voxpipe learns that the command which started it is gone or was told
 * to stop, when no signal reaches voxpipe itself.
 *
 * `npx voxpipe ...` (and an npm script) runs voxpipe through `npm exec`,
 * which spawns `sh -c 'voxpipe' ...`; npm passes SIGINT and SIGTERM on to
 * that shell only. On SIGTERM the shell dies and voxpipe is left without
 * its parent. On SIGINT the shell (dash, bash) waits for its child to end
 * before it acts, so without help a `kill -INT` to npx is ignored until the
 * whole text is spoken. Two watches, both polled:
 * - the parent pid changes: the parent went away (any platform); under
 *   npm's shell, the shell's parent pid too (npm does not pass SIGHUP on:
 *   it dies and leaves the shell waiting);
 * - under npm's shell on Linux, the shell wakes up while voxpipe, its only
 *   child, is still running: while it waits, that shell catches SIGINT and
 *   SIGCHLD only (SIGCHLD comes when voxpipe stops or continues, which
 *   SIGCONT re-baselines), so a wake-up is the SIGINT npm passed on. The
 *   kernel counts a sleeping process's wake-ups in
 *   `/proc/PID/status` (`voluntary_ctxt_switches`).
 */
import { readFileSync } from 'node:fs';

/** What the watch saw. */
export type ParentEvent = 'parent_gone' | 'SIGINT';

/** How often the parent is looked at: a stop is noticed within this. */
export const PARENT_POLL_MS = 200;

/** Shells npm runs a bin through (`script-shell`, default sh). */
const SHELLS: ReadonlySet<string> = new Set(['sh', 'dash', 'bash', 'ash', 'busybox', 'zsh']);

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The parent pid of `pid`, from /proc (the field after the name, which may hold spaces). */
function parentOf(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields?.[1] === undefined ? undefined : Number(fields[1]);
}

/** The parent's wake-ups, when it is npm's shell and /proc says so; else undefined (no wake watch). */
function shellWakeups(ppid: number): number | undefined {
  const match = /voluntary_ctxt_switches:\s*(\d+)/.exec(read(`/proc/${ppid}/status`) ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The parent when this module loaded (the process's start): a parent gone before a watch begins still counts. */
const FIRST_PPID = process.ppid;

/**
 * Watch the parent of this process; `handler` gets the first event, once.
 * The shell watch runs only when npm started the command (`npm_lifecycle_event`
 * in `env`) and the parent is a shell: an interactive shell wakes for other
 * reasons (a resized terminal).
 *
 * @returns the function that stops watching
 */
export function watchParent(env: NodeJS.ProcessEnv, handler: (event: ParentEvent) => void): () => void {
  const ppid = FIRST_PPID;
  if (process.ppid !== ppid) {
    queueMicrotask(() => handler('parent_gone'));
    return () => undefined;
  }
  const comm = env['npm_lifecycle_event'] !== undefined ? read(`/proc/${ppid}/comm`)?.trim() : undefined;
  let baseline = comm !== undefined && SHELLS.has(comm) ? shellWakeups(ppid) : undefined;
  // npm itself gone (a SIGHUP, which npm does not pass on) leaves its shell waiting for us.
  const npm = baseline !== undefined ? parentOf(ppid) : undefined;
  // Our own stop and continue wake the shell (SIGCHLD): count from after them.
  let skip = 0;
  const onContinue = () => (skip = 2);
  if (baseline !== undefined) process.on('SIGCONT', onContinue);
  const stop = () => {
    clearInterval(timer);
    process.off('SIGCONT', onContinue);
  };
  const timer = setInterval(() => {
    if (process.ppid !== ppid) {
      stop();
      handler('parent_gone');
      return;
    }
    if (baseline === undefined) return;
    if (npm !== undefined && parentOf(ppid) !== npm) {
      stop();
      handler('parent_gone');
      return;
    }
    const now = shellWakeups(ppid);
    if (now === undefined) return;
    if (skip > 0) {
      skip--;
      baseline = now;
      return;
    }
    if (now > baseline) {
      stop();
      handler('SIGINT');
    }
  }, PARENT_POLL_MS);
  timer.unref();
  return stop;
}
