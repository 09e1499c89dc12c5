/**
 * The CLI's service: the library's `openService` with notes on standard
 * error, and, on the embedded default, a data directory so voices, jobs,
 * designs and usage are still there for the next command.
 */
import { isAbsolute, join } from 'node:path';
import { openService as open, type OpenServiceOptions, type Service } from '../service.js';
import { note, type Io } from './io.js';

export type { Service };

/** Set by `--ephemeral` (any command) or by the user: the embedded server keeps nothing. */
export const EPHEMERAL_ENV = 'VOXPIPE_EPHEMERAL';

/**
 * Where the embedded server keeps its state: `VOXPIPE_DATA_DIR`, else
 * `$XDG_DATA_HOME/voxpipe`, else `~/.local/share/voxpipe`; none (in memory)
 * with `--ephemeral` / `VOXPIPE_EPHEMERAL=1`, or with no home to keep it in.
 */
export function dataDirOf(env: NodeJS.ProcessEnv): string | undefined {
  const ephemeral = env[EPHEMERAL_ENV];
  if (ephemeral !== undefined && ephemeral !== '' && ephemeral !== '0' && ephemeral !== 'false') return undefined;
  if (env['VOXPIPE_DATA_DIR']) return env['VOXPIPE_DATA_DIR'];
  // The XDG base directory spec: a relative XDG_DATA_HOME is invalid and ignored.
  const xdg = env['XDG_DATA_HOME'];
  if (xdg && isAbsolute(xdg)) return join(xdg, 'voxpipe');
  if (env['HOME']) return join(env['HOME'], '.local', 'share', 'voxpipe');
  return undefined;
}

export function openService(io: Io, options: Pick<OpenServiceOptions, 'engine'> = {}): Promise<Service> {
  return open({ ...options, env: io.env, dataDir: dataDirOf(io.env), onNote: (text) => note(io, text) });
}
