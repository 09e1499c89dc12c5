import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../../src/server/store/lock.js';
import { openService } from '../../../src/service.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxpipe-lock-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited (a lock it left is stale). */
function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', '']);
    child.on('exit', () => resolve(child.pid!));
  });
}

describe('one process per data directory (lock)', () => {
  it('a second lock while the first is held fails with data_dir_in_use naming the holder; released, it can be taken again', async () => {
    const dir = await tempDir();
    const release = await lockDataDir(dir);
    const err = await lockDataDir(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect(err).toMatchObject({ code: 'data_dir_in_use', pid: process.pid, kind: 'local' });
    expect((err as Error).message).toContain(`process ${process.pid}`);
    expect((err as Error).message).toContain(join(dir, LOCK_FILE));
    await release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    await (await lockDataDir(dir))();
  });

  it('a lock left by a process that is gone (SIGKILL) is taken over', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, LOCK_FILE), `${await deadPid()} 0123456789abcdef\n`);
    const release = await lockDataDir(dir);
    expect((await readFile(join(dir, LOCK_FILE), 'utf8')).split(' ')[0]).toBe(String(process.pid));
    await release();
  });

  it('release removes only its own lock, never one taken over after it', async () => {
    const dir = await tempDir();
    const release = await lockDataDir(dir);
    const other = `${process.pid} another-owner\n`;
    await writeFile(join(dir, LOCK_FILE), other);
    await release();
    expect(await readFile(join(dir, LOCK_FILE), 'utf8')).toBe(other);
  });

  it('openService on a directory in use waits, then runs in memory and says so', async () => {
    const dir = await tempDir();
    const release = await lockDataDir(dir);
    const notes: string[] = [];
    const service = await openService({ env: {}, engine: 'tone', dataDir: dir, dataDirWaitMs: 300, onNote: (t) => notes.push(t) });
    try {
      expect(notes.some((n) => n.startsWith(`waiting for ${dir}: in use by process ${process.pid}`))).toBe(true);
      expect(notes.some((n) => n.includes('in-memory server') && n.includes('nothing it makes is kept'))).toBe(true);
      expect(service.embedded!.ctx.store.constructor.name).toBe('MemoryStore');
      expect(existsSync(join(dir, 'pg'))).toBe(false);
    } finally {
      await service.close();
      await release();
    }
  });
});
