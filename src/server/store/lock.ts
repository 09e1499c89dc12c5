/**
 * One process per data directory: PGlite is single-user, and two processes
 * writing one directory would corrupt it. `lockDataDir` takes
 * `DIR/voxpipe.lock` (created exclusively, holding the owner's pid and a
 * nonce) or throws `DataDirInUseError` naming the process that holds it.
 *
 * A lock whose process is gone (killed with SIGKILL, a crash) is stale and is
 * taken over. We use the pid rather than a heartbeat (proper-lockfile's mtime
 * refresh) because a heartbeat makes the next command wait out the staleness
 * window after every crash, and it keeps a timer in every CLI process; the
 * price is that a recycled pid (a container restarted) can make a stale lock
 * look held, which the error message tells the user how to clear.
 */
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { VoxpipeError } from '../../errors.js';
import { LocalErrorCode } from '../../protocol/codes.js';

export const LOCK_FILE = 'voxpipe.lock';

export class DataDirInUseError extends VoxpipeError {
  override name = 'DataDirInUseError';
  constructor(readonly dir: string, readonly pid: number | undefined) {
    super(LocalErrorCode.dataDirInUse, `the data directory ${dir} is in use by ${pid === undefined ? 'another process' : `process ${pid}`} (one process per data directory; if no voxpipe is running, delete ${join(dir, LOCK_FILE)})`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ownerOf(content: string): number {
  const pid = Number.parseInt(content.split(' ')[0] ?? '', 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
}

/** A lock file taken (the function that releases it), or held: what it holds ('' while being written; undefined when it went meanwhile). */
export type LockAttempt = { release: () => Promise<void> } | { held: string | undefined };

/**
 * Create `path` exclusively, holding this process's pid and a nonce. Its
 * release removes only this content, never a lock a later owner took over.
 */
export async function tryLockFile(path: string, mode = 0o666): Promise<LockAttempt> {
  const content = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
  try {
    const handle = await open(path, 'wx', mode);
    await handle.writeFile(content);
    await handle.close();
    return {
      release: async () => {
        if ((await readFile(path, 'utf8').catch(() => '')) === content) await unlink(path).catch(() => undefined);
      },
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return { held: await readFile(path, 'utf8').catch(() => undefined) };
}

/** The process named by a lock's content is running. */
export function lockHolderAlive(content: string): boolean {
  const pid = ownerOf(content);
  return pid !== 0 && alive(pid);
}

/** Take the directory's lock; resolves to the function that releases it. */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    const got = await tryLockFile(path);
    if ('release' in got) return got.release;
    const held = got.held;
    if (held === undefined) continue; // released meanwhile
    const pid = ownerOf(held);
    // A lock still being written (empty) counts as held: its writer is alive.
    if (held === '' || (pid !== 0 && alive(pid))) throw new DataDirInUseError(dir, pid || undefined);
    // Stale: move it aside atomically, and check that what moved is the stale
    // lock we read, not one another process took over in between.
    const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      await rename(path, aside);
    } catch {
      continue;
    }
    const moved = await readFile(aside, 'utf8').catch(() => '');
    if (moved !== held) await link(aside, path).catch(() => undefined); // a live lock: put it back
    await unlink(aside).catch(() => undefined);
  }
  throw new DataDirInUseError(dir, undefined);
}
