/**
 * The service to talk to: the configured one (VOXPIPE_BASE_URL and
 * VOXPIPE_API_KEY), or, with none configured, the reference server started
 * in-process on a free loopback port (the embedded default). The CLI and the
 * examples start this way, so they run with no configuration.
 */
import { configFromEnv, LOCAL_DEV_API_KEY, type ServiceConfig } from './config.js';
import { redact } from './errors.js';
// Types only: `import 'voxpipe'` must not load the reference server (about
// 110 modules); `openService()` imports it on demand when nothing is configured.
import type { ReferenceServer } from './server/index.js';

export interface Service {
  config: ServiceConfig;
  /** The in-process reference server, when none was configured. */
  embedded: ReferenceServer | undefined;
  close(): Promise<void>;
}

export interface OpenServiceOptions {
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Engine of the embedded server; default `auto` (espeak when installed, else tone). */
  engine?: 'espeak' | 'tone' | 'auto';
  /** Told about the embedded server's choices (e.g. falling back to tone); default silent. */
  onNote?: (text: string) => void;
}

/** The `ServiceConfig` that reaches a running reference server with `apiKey` (default the dev key). */
export function serviceConfigOf(server: Pick<ReferenceServer, 'baseUrl' | 'rootUrl' | 'wsUrl' | 'rtHttpUrl'>, apiKey: string = LOCAL_DEV_API_KEY): ServiceConfig {
  return { apiKey, baseUrl: server.baseUrl, rootUrl: server.rootUrl, wsUrl: server.wsUrl, rtHttpUrl: server.rtHttpUrl };
}

export async function openService(options: OpenServiceOptions = {}): Promise<Service> {
  const env = options.env ?? process.env;
  const config = configFromEnv(env);
  if (config) return { config, embedded: undefined, close: async () => undefined };
  const apiKey = env['VOXPIPE_API_KEY'] || LOCAL_DEV_API_KEY;
  const { startServer } = await import('./server/index.js');
  const server = await startServer({
    engine: options.engine ?? 'auto',
    // One process, usually one request: warming the engine up would cost more than it saves.
    engineWarmUpRounds: 0,
    accounts: [{ apiKey, userId: 'local-dev' }],
    // The embedded server serves only this process: local files and loopback URLs are fine as inputs.
    allowPrivateUrls: true,
    // Its internal errors are a one-line note on the user's terminal, the stack only with VOXPIPE_DEBUG.
    log: (where, error) => {
      const detail = env['VOXPIPE_DEBUG'] && error instanceof Error ? (error.stack ?? error.message) : error instanceof Error ? error.message : String(error);
      process.stderr.write(`voxpipe: embedded server: ${where}: ${redact(detail)}\n`);
    },
  });
  if (server.ctx.engine.name === 'tone' && options.engine !== 'tone') {
    options.onNote?.('no service configured and espeak is not installed: the embedded server speaks with the tone engine (npm install @echogarden/espeak-ng-emscripten for real speech)');
  }
  return {
    config: serviceConfigOf(server, apiKey),
    embedded: server,
    close: () => server.close(),
  };
}
