/**
 * The service to talk to: the configured one (VOXPIPE_BASE_URL and
 * VOXPIPE_API_KEY), or, with none configured, the reference server started
 * in-process on a free loopback port (the embedded default). The CLI and the
 * examples start this way, so they run with no configuration.
 */
import { configFromEnv, type ServiceConfig } from './config.js';
import { LOCAL_DEV_API_KEY } from './protocol/constants.js';
import { redact } from './errors.js';
// Types only: `import 'voxpipe'` must not load the reference server (about
// 110 modules); `openService()` imports it on demand when nothing is configured.
import type { ReferenceServer, Store } from './server/index.js';
import type { EngineChoice } from './server/engines/choices.js';

export interface Service {
  config: ServiceConfig;
  /** The in-process reference server, when none was configured. */
  embedded: ReferenceServer | undefined;
  /** Where the embedded server keeps its state for the next run; undefined when it keeps nothing (in memory). */
  dataDir: string | undefined;
  close(): Promise<void>;
}

export interface OpenServiceOptions {
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Engine of the embedded server; default `auto` (espeak when installed, else tone). */
  engine?: EngineChoice;
  /** Told about the embedded server's choices (e.g. falling back to tone); default silent. */
  onNote?: (text: string) => void;
  /**
   * Where the embedded server keeps its accounts, voices, jobs, designs and
   * usage between runs (a PGlite data directory, `PgliteStore`); default
   * none: in memory, gone when the process ends. One process at a time per
   * directory: while another holds it, this waits up to `dataDirWaitMs`
   * (default 10 s), then runs in memory and says so through `onNote`.
   */
  dataDir?: string | undefined;
  dataDirWaitMs?: number;
}

/** The `ServiceConfig` that reaches a running reference server with `apiKey` (default the dev key). */
export function serviceConfigOf(server: Pick<ReferenceServer, 'baseUrl' | 'rootUrl' | 'wsUrl' | 'rtHttpUrl'>, apiKey: string = LOCAL_DEV_API_KEY): ServiceConfig {
  return { apiKey, baseUrl: server.baseUrl, rootUrl: server.rootUrl, wsUrl: server.wsUrl, rtHttpUrl: server.rtHttpUrl };
}

export async function openService(options: OpenServiceOptions = {}): Promise<Service> {
  const env = options.env ?? process.env;
  const config = configFromEnv(env);
  if (config) return { config, embedded: undefined, dataDir: undefined, close: async () => undefined };
  const apiKey = env['VOXPIPE_API_KEY'] || LOCAL_DEV_API_KEY;
  // The speech engine starts in its worker thread (loading eSpeak, ~0.3 s)
  // while this thread loads the server's modules, and the store opens
  // meanwhile too (startServer awaits both).
  const { createEngine } = await import('./server/engines/index.js');
  // One process, usually one request: warming the engine up would cost more than it saves.
  const engine = createEngine(options.engine ?? 'auto', { warmUpRounds: 0 });
  const store = options.dataDir === undefined ? undefined : openDataDir(options.dataDir, options);
  let server: ReferenceServer;
  try {
    const { startServer } = await import('./server/index.js');
    server = await startServer({
      ...(store && { store }),
      engine,
      accounts: [{ apiKey, userId: 'local-dev' }],
      // The embedded server serves only this process: local files and loopback URLs are fine as inputs.
      allowPrivateUrls: true,
      // Its internal errors are a one-line note on the user's terminal, the stack only with VOXPIPE_DEBUG.
      log: (where, error) => {
        const detail = env['VOXPIPE_DEBUG'] && error instanceof Error ? (error.stack ?? error.message) : error instanceof Error ? error.message : String(error);
        process.stderr.write(`voxpipe: embedded server: ${where}: ${redact(detail)}\n`);
      },
    });
  } catch (err) {
    // The engine failed after the store opened: let go of the data directory.
    await (await store?.catch(() => undefined))?.close?.();
    // startServer closes an engine it got, unless it failed before taking it.
    await (await engine.catch(() => undefined))?.close();
    throw err;
  }
  if (server.ctx.engine.name === 'tone' && options.engine !== 'tone') {
    options.onNote?.('no service configured and espeak is not installed: the embedded server speaks with the tone engine (npm install @echogarden/espeak-ng-emscripten for real speech)');
  }
  const { PgliteStore, tasksIdle } = await import('./server/index.js');
  return {
    config: serviceConfigOf(server, apiKey),
    embedded: server,
    dataDir: server.ctx.store instanceof PgliteStore ? options.dataDir : undefined,
    close: async () => {
      if (store) {
        // State is kept for the next command: let the jobs this one started finish first
        // (`jobs create` then `jobs download`); a job cut short runs again at the next start.
        const tasks = tasksIdle(server.ctx);
        if (tasks.active > 0) {
          options.onNote?.(`finishing ${tasks.active === 1 ? 'a job' : `${tasks.active} jobs`} before exit (Ctrl-C leaves ${tasks.active === 1 ? 'it' : 'them'} for the next command)`);
          await tasks.idle;
        }
      }
      await server.close();
      await (await store)?.close?.();
    },
  };
}

/** The persistent store in `dir`, waiting for another process to let go of it, else an in-memory one. */
async function openDataDir(dir: string, options: OpenServiceOptions): Promise<Store & { close?(): Promise<void> }> {
  const [{ PgliteStore, MemoryStore }, { hasStore }, { DataDirInUseError }] = await Promise.all([
    import('./server/index.js'),
    import('./server/store/pglite.js'),
    import('./server/store/lock.js'),
  ]);
  if (!hasStore(dir)) {
    options.onNote?.(`the embedded server keeps voices, jobs and usage in ${dir} (--ephemeral for none); creating it takes a few seconds, once`);
  }
  const deadline = Date.now() + (options.dataDirWaitMs ?? 10_000); // 10 s
  for (let waited = false; ; waited = true) {
    try {
      return await PgliteStore.open(dir);
    } catch (err) {
      if (!(err instanceof DataDirInUseError)) throw err;
      if (Date.now() >= deadline) {
        options.onNote?.(`${err.message}; this run uses an in-memory server instead: nothing it makes is kept`);
        return new MemoryStore();
      }
      if (!waited) options.onNote?.(`waiting for ${dir}: in use by ${err.pid === undefined ? 'another process' : `process ${err.pid}`}`);
      await new Promise((resolve) => setTimeout(resolve, 200)); // 200 ms
    }
  }
}
