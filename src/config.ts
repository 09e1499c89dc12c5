/**
 * Where the service is and how to authenticate, from the environment
 * (the contract the README's first screen names): VOXPIPE_API_KEY, VOXPIPE_BASE_URL (`{base_url}`,
 * ending in /api/open/v1) and the optional VOXPIPE_ROOT_URL, VOXPIPE_WS_URL,
 * VOXPIPE_RT_HTTP_URL, each derived from the base URL's host when absent.
 */
import { registerSecret, VoxpipeError } from './errors.js';

export interface ServiceConfig {
  apiKey: string;
  /** `{base_url}`, e.g. https://host/api/open/v1 */
  baseUrl: string;
  /** `{root_url}`, the host root. */
  rootUrl: string;
  /** `{ws_url}`, WebSocket root of realtime TTS. */
  wsUrl: string;
  /** `{rt_http_url}`, HTTP root of the realtime service. */
  rtHttpUrl: string;
}

export { BASE_PATH } from './protocol/rest.js';

/** Derive every URL from the base URL's host, unless given. */
export function deriveUrls(baseUrl: string, given: Partial<Omit<ServiceConfig, 'apiKey' | 'baseUrl'>> = {}): Omit<ServiceConfig, 'apiKey'> {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new VoxpipeError('invalid_config', `VOXPIPE_BASE_URL is not a URL: ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new VoxpipeError('invalid_config', `VOXPIPE_BASE_URL must be an http or https URL (got ${url.protocol}); e.g. https://host/api/open/v1`);
  }
  const base = baseUrl.replace(/\/+$/, '');
  const rootUrl = given.rootUrl ?? url.origin;
  const wsOrigin = url.origin.replace(/^http/, 'ws');
  return {
    baseUrl: base,
    rootUrl: rootUrl.replace(/\/+$/, ''),
    wsUrl: (given.wsUrl ?? wsOrigin).replace(/\/+$/, ''),
    rtHttpUrl: (given.rtHttpUrl ?? rootUrl).replace(/\/+$/, ''),
  };
}

/**
 * The configured service, or undefined when VOXPIPE_BASE_URL is not set
 * (the CLI then starts the embedded reference server).
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig | undefined {
  const baseUrl = env['VOXPIPE_BASE_URL'];
  if (!baseUrl) return undefined;
  const apiKey = env['VOXPIPE_API_KEY'];
  if (!apiKey) throw new VoxpipeError('unauthorized', 'VOXPIPE_BASE_URL is set but VOXPIPE_API_KEY is not');
  registerSecret(apiKey);
  const given: Partial<ServiceConfig> = {};
  if (env['VOXPIPE_ROOT_URL']) given.rootUrl = env['VOXPIPE_ROOT_URL'];
  if (env['VOXPIPE_WS_URL']) given.wsUrl = env['VOXPIPE_WS_URL'];
  if (env['VOXPIPE_RT_HTTP_URL']) given.rtHttpUrl = env['VOXPIPE_RT_HTTP_URL'];
  return { apiKey, ...deriveUrls(baseUrl, given) };
}

export { LOCAL_DEV_API_KEY } from './protocol/constants.js';
