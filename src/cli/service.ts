/**
 * The service a CLI command talks to: the configured one (VOXPIPE_BASE_URL),
 * or, with none configured, the reference server started in-process on a
 * free loopback port (the embedded default).
 */
import { configFromEnv, type ServiceConfig } from '../config.js';
import { DEV_API_KEY, startServer, type ReferenceServer } from '../server/index.js';
import { note, type Io } from './io.js';

export interface Service {
  config: ServiceConfig;
  /** The in-process reference server, when none was configured. */
  embedded: ReferenceServer | undefined;
  close(): Promise<void>;
}

export interface OpenServiceOptions {
  /** Engine of the embedded server; default `auto` (espeak when installed, else tone). */
  engine?: 'espeak' | 'tone' | 'auto';
}

export async function openService(io: Io, options: OpenServiceOptions = {}): Promise<Service> {
  const config = configFromEnv(io.env);
  if (config) return { config, embedded: undefined, close: async () => undefined };
  const apiKey = io.env['VOXPIPE_API_KEY'] || DEV_API_KEY;
  const server = await startServer({
    engine: options.engine ?? 'auto',
    accounts: [{ apiKey, userId: 'local-dev' }],
    // The embedded server serves only this process: local files and loopback URLs are fine as inputs.
    allowPrivateUrls: true,
  });
  if (server.ctx.engine.name === 'tone') {
    note(io, 'no service configured and espeak is not installed: the embedded server speaks with the tone engine (npm install @echogarden/espeak-ng-emscripten for real speech)');
  }
  return {
    config: { apiKey, baseUrl: server.baseUrl, rootUrl: server.rootUrl, wsUrl: server.wsUrl, rtHttpUrl: server.rtHttpUrl },
    embedded: server,
    close: () => server.close(),
  };
}
