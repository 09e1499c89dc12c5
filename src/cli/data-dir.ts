/**
 * A data directory checked before the store opens it, so a wrong one is one
 * line naming the setting and the fix (exit 1), not an internal error or a
 * hang: `--data DIR` of serve, `VOXPIPE_DATA_DIR` of the embedded default.
 * It is created level by level (Node's recursive mkdir loops forever under
 * /proc), then a file is written and removed in it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { VoxpipeError } from '../errors.js';

/**
 * @param setting how the user named it (`--data`, `VOXPIPE_DATA_DIR`), for the message
 * @throws VoxpipeError `invalid_config` naming the setting, the path, the problem and the fix
 */
export async function checkDataDir(path: string, setting: string): Promise<void> {
  const full = resolve(path);
  const fail = (why: string): never => {
    throw new VoxpipeError('invalid_config', `${setting} ${path}: ${why}; give a folder voxpipe may write to (it is created if missing)${setting.startsWith('VOXPIPE') ? ', or --ephemeral to keep nothing' : ''}`);
  };
  const missing: string[] = [];
  let at = full;
  for (;;) {
    const st = await stat(at).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : fail(`cannot read ${at} (${err.code ?? err.message})`)));
    if (st) {
      if (!st.isDirectory()) fail(at === full ? 'is a file, not a folder' : `${at} is a file, not a folder`);
      break;
    }
    missing.unshift(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const dir of missing) {
    await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') fail(`cannot create ${dir} (${err.code ?? err.message})`);
    });
  }
  const probe = join(full, `.voxpipe-probe-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(probe, '');
  } catch (err) {
    fail(`cannot write in it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  await rm(probe, { force: true });
}

/** `VOXPIPE_DATA_DIR`, checked when the embedded default will use it (no deployment configured, not ephemeral). */
export async function checkDataDirEnv(env: NodeJS.ProcessEnv, ephemeralEnv: string): Promise<void> {
  const dir = env['VOXPIPE_DATA_DIR'];
  if (!dir || env['VOXPIPE_BASE_URL']) return;
  const ephemeral = env[ephemeralEnv];
  if (ephemeral !== undefined && ephemeral !== '' && ephemeral !== '0' && ephemeral !== 'false') return;
  await checkDataDir(dir, 'VOXPIPE_DATA_DIR');
}
