/**
 * The CLI's service: the library's `openService` with notes on standard
 * error, and, on the embedded default, a data directory so voices, jobs,
 * designs and usage are still there for the next command. The data
 * directory is served by a local service that stays warm between commands
 * (`daemon.ts`); `--ephemeral` and VOXPIPE_DAEMON=0 run the server in this
 * process instead.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { configFromEnv } from '../config.js';
import { registerSecret } from '../errors.js';
import { openService as open, serviceConfigOf, type OpenServiceOptions, type Service } from '../service.js';
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

const TONE_NOTE = 'no service configured and espeak is not installed: the embedded server speaks with the tone engine (npm install @echogarden/espeak-ng-emscripten for real speech)';

/** The service a CLI command talks to: the configured deployment, else the embedded default, with notes on `io`. */
export async function openServiceFor(io: Io, options: Pick<OpenServiceOptions, 'engine'> = {}): Promise<Service> {
  const dataDir = dataDirOf(io.env);
  if (dataDir !== undefined && configFromEnv(io.env) === undefined) {
    const { connectDaemon, daemonEnabled, identityOf } = await import('./daemon.js');
    if (daemonEnabled(io.env)) {
      identityOf(io.env, options.engine); // a setting that cannot be used fails here, before any note
      if (!existsSync(join(dataDir, 'pg', 'PG_VERSION'))) {
        note(io, `the embedded server keeps voices, jobs and usage in ${dataDir} (--ephemeral for none); creating it takes a few seconds, once`);
      }
      const lease = await connectDaemon(dataDir, { env: io.env, engine: options.engine });
      registerSecret(lease.state.key);
      const engine = (lease.state as { engine?: string }).engine;
      if (engine === 'tone' && options.engine !== 'tone') note(io, TONE_NOTE);
      return { config: serviceConfigOf(lease.state, lease.state.key), embedded: undefined, dataDir, close: async () => lease.release() };
    }
  }
  return open({ ...options, env: io.env, dataDir, onNote: (text) => note(io, text) });
}
