/**
 * The embedded default is a local service per data
 * directory that commands share (src/cli/daemon.ts). Each CLI process here
 * gets its own temporary home and data directory and nothing else from the
 * test run's environment (so no VOXPIPE_EPHEMERAL); every daemon a test
 * starts is killed after it (and stops by itself after a short idle time).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));
let root: string;
const daemons = new Set<number>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'voxpipe-daemon-'));
});

afterAll(async () => {
  for (const pid of daemons) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await rm(root, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Home {
  dir: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The user of these tests: a home, a data directory, a short idle time.
 * One for the whole file: creating a store takes seconds (tens on a loaded
 * machine), so the tests after the first share its directory.
 */
let user: Home | undefined;
function home(extra: NodeJS.ProcessEnv = {}): Home {
  if (!user) {
    const dir = join(root, 'home');
    const dataDir = join(dir, 'data');
    user = { dir, dataDir, env: { PATH: process.env['PATH'] ?? '', HOME: dir, VOXPIPE_DATA_DIR: dataDir, VOXPIPE_DAEMON_IDLE: '20s' } };
  }
  return { ...user, env: { ...user.env, ...extra } };
}

function voxpipe(h: Home, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: h.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => {
      remember(h);
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(h: Home, ...args: string[]): Promise<Run> {
  const run = await voxpipe(h, ...args);
  expect(run.stderr).not.toMatch(/error/);
  expect(run.code).toBe(0);
  return run;
}

interface State {
  pid: number;
  identity: string;
}

function state(h: Home): State | undefined {
  try {
    return JSON.parse(readFileSync(join(h.dataDir, 'daemon.json'), 'utf8')) as State;
  } catch {
    return undefined;
  }
}

/** Every daemon seen is killed after the tests. */
function remember(h: Home): void {
  const s = state(h);
  if (s) daemons.add(s.pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

/** Processes running the daemon's program for this data directory (Linux /proc). */
function daemonProcesses(h: Home): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const args = cmdline.split('\0');
    if (args.some((a) => a.endsWith('daemon-entry.js')) && args.includes(h.dataDir)) pids.push(Number(entry));
  }
  return pids;
}

const json = <T>(run: Run): T => JSON.parse(run.stdout) as T;

async function ledgerRefs(h: Home): Promise<string[]> {
  const usage = json<{ ledger: { refId: string }[] }>(await ok(h, 'usage', '--limit', '100', '--json'));
  return usage.ledger.map((e) => e.refId);
}

describe('the embedded default is one local service per data directory', () => {
  it('six parallel say on a new data directory: no lock wait, one service, all six in usage', async () => {
    const h = home();
    expect(existsSync(h.dataDir)).toBe(false);
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => voxpipe(h, 'say', `Parallel command number ${i + 1}.`, '--out', join(root, `parallel-${i}.wav`), '--json')));
    for (const run of runs) {
      expect(run.stderr).not.toMatch(/error|waiting for|in use|in-memory/);
      expect(run.code).toBe(0);
    }
    const requestIds = runs.map((r) => json<{ requestId: string }>(r).requestId);
    expect(new Set(requestIds).size).toBe(6);
    // One service serves the directory, and it kept what each of the six did.
    const s = state(h)!;
    expect(alive(s.pid)).toBe(true);
    expect(daemonProcesses(h)).toEqual([s.pid]);
    const refs = await ledgerRefs(h);
    for (const id of requestIds) expect(refs.some((ref) => ref.includes(id))).toBe(true);
    // The key is the service's own and goes into no output.
    const key = (JSON.parse(await readFile(join(h.dataDir, 'daemon.json'), 'utf8')) as { key: string }).key;
    for (const run of runs) expect(run.stdout + run.stderr).not.toContain(key);
    expect(await readFile(join(h.dataDir, 'daemon.log'), 'utf8')).not.toContain(key);
  }, 120_000);

  it('a service of another version is replaced, and the new one has the same store', async () => {
    const h = home();
    const first = json<{ requestId: string }>(await ok(h, 'say', 'Before the upgrade.', '--out', join(root, 'before.wav'), '--json'));
    const old = state(h)!;
    // What an older voxpipe's service looks like to this one.
    await writeFile(join(h.dataDir, 'daemon.json'), JSON.stringify({ ...old, identity: JSON.stringify({ version: '0.0.1+1' }) }));
    const second = json<{ requestId: string }>(await ok(h, 'say', 'After the upgrade.', '--out', join(root, 'after.wav'), '--json'));
    const now = state(h)!;
    expect(now.pid).not.toBe(old.pid);
    expect(now.identity).not.toContain('0.0.1+1');
    expect(await gone(old.pid)).toBe(true);
    const refs = await ledgerRefs(h);
    expect(refs.some((ref) => ref.includes(first.requestId))).toBe(true);
    expect(refs.some((ref) => ref.includes(second.requestId))).toBe(true);
  }, 120_000);

  it('a dead service is replaced: its state file is stale', async () => {
    const h = home();
    await ok(h, 'say', 'One.', '--out', join(root, 'one.wav'));
    const old = state(h)!;
    process.kill(old.pid, 'SIGKILL');
    expect(await gone(old.pid)).toBe(true);
    await ok(h, 'say', 'Two.', '--out', join(root, 'two.wav'));
    expect(state(h)!.pid).not.toBe(old.pid);
  }, 120_000);
});

describe('the data directory does not grow without bound', () => {
  // About 40 s of speech: megabytes of audio per command.
  const LONG = 'This sentence is here to make a long recording, so that the audio kept for it is large enough to see on disk. '.repeat(6);

  it('data prune deletes the audio past the retention and gives the space back; the same work again leaves it the same size', async () => {
    const h = home();
    const round = async () => {
      for (let i = 0; i < 3; i++) await ok(h, 'say', LONG, '--out', join(root, `long-${i}.wav`));
      return json<{ total: number; deleted: Record<string, number>; bytesBefore: number; bytesAfter: number }>(await ok(h, 'data', 'prune', '--older-than', '0', '--json'));
    };
    const first = await round();
    expect(first.deleted['realtime-audio']).toBeGreaterThanOrEqual(3);
    expect(first.bytesAfter).toBeLessThan(first.bytesBefore);
    const second = await round();
    expect(second.deleted['realtime-audio']).toBeGreaterThanOrEqual(3);
    // Bounded: after the second round's prune, no bigger than after the first (give or take a WAL segment).
    expect(second.bytesAfter).toBeLessThanOrEqual(first.bytesAfter + 16 * 1_048_576);
    const show = json<{ bytes: number; service: { pid: number } | null }>(await ok(h, 'data', 'show', '--json'));
    expect(show.bytes).toBe(second.bytesAfter);
    expect(show.service?.pid).toBe(state(h)!.pid);
  }, 240_000);

  it('the audio kept to resume a request goes once its resume window has passed, while the service runs, write-ahead log included', async () => {
    const h = home({ VOXPIPE_RESUME_WINDOW: '2s' });
    type Shown = { bytes: number; walBytes: number; kept: { resumeWindowMs: number }; service: { lastPrune: string | null } | null };
    await ok(h, 'say', 'Start.', '--out', join(root, 'start.wav'));
    const start = json<Shown>(await ok(h, 'data', '--json'));
    expect(start.kept.resumeWindowMs).toBe(2_000);
    const said = Date.now();
    for (let i = 0; i < 3; i++) await ok(h, 'say', LONG, '--out', join(root, `window-${i}.wav`));
    const grown = json<Shown>(await ok(h, 'data', '--json'));
    expect(grown.bytes).toBeGreaterThan(start.bytes + 4 * 1_048_576);
    let now = grown;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      now = json<Shown>(await ok(h, 'data', '--json'));
      if (now.service?.lastPrune && Date.parse(now.service.lastPrune) > said && now.bytes <= start.bytes + 1_048_576) break;
    }
    // Back where it started, give or take a write-ahead log segment (1 MiB), with no prune asked and no stop.
    expect(now.bytes).toBeLessThanOrEqual(start.bytes + 1_048_576);
    expect(now.walBytes).toBeLessThanOrEqual(start.walBytes + 1_048_576);
    expect((await ok(h, 'data')).stderr).toMatch(/kept: audio to resume a request 2 s after it ends/);
  }, 180_000);

  it('the service applies the retention itself when it stops idle', async () => {
    // Other settings: the service running now is replaced by one with these.
    const h = home({ VOXPIPE_DAEMON_IDLE: '1s', VOXPIPE_DATA_RETENTION: '0' });
    await ok(h, 'say', 'Kept only until the service stops.', '--out', join(root, 'kept.wav'));
    const s = state(h)!;
    expect(await gone(s.pid)).toBe(true);
    expect(existsSync(join(h.dataDir, 'daemon.json'))).toBe(false);
    // Nothing left to prune: the service did it.
    const pruned = json<{ total: number }>(await ok(h, 'data', 'prune', '--older-than', '0', '--json'));
    expect(pruned.total).toBe(0);
    // And it let go of the directory's lock.
    await ok(h, 'data', 'stop');
    expect(existsSync(join(h.dataDir, 'voxpipe.lock'))).toBe(false);
  }, 120_000);
});

describe('settings of the local service', () => {
  it('a setting that is not a duration is one typed line naming it, before anything starts', async () => {
    const h = home({ VOXPIPE_DAEMON_IDLE: 'ten minutes', VOXPIPE_DATA_DIR: join(root, 'never') });
    const run = await voxpipe(h, 'say', 'Hi.', '--out', join(root, 'never.wav'));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error invalid_config: VOXPIPE_DAEMON_IDLE must be a duration such as 90s, 10m, 24h or 0, got "ten minutes"/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(root, 'never', 'daemon.json'))).toBe(false);
  });

  it('data with an unknown action, or --older-than that is not a duration, is a usage error', async () => {
    const h = home({ VOXPIPE_DATA_DIR: join(root, 'never') });
    const unknown = await voxpipe(h, 'data', 'shrink');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/error invalid_arguments: data takes show, prune, stop, got "shrink"/);
    const bad = await voxpipe(h, 'data', 'prune', '--older-than', 'yesterday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--older-than must be a duration/);
    const ephemeral = await voxpipe(h, 'data', '--ephemeral');
    expect(ephemeral.code).toBe(2);
    expect(ephemeral.stderr).toMatch(/no data directory/);
  });
});
