/**
 * The configuration of the client, in one place: where the
 * service is, every URL derived from that, the API key, and the one
 * vocabulary of a bad configuration.
 *
 * From the environment: VOXPIPE_API_KEY, VOXPIPE_BASE_URL and the optional
 * VOXPIPE_ROOT_URL, VOXPIPE_WS_URL, VOXPIPE_RT_HTTP_URL (`configFromEnv`);
 * from options: `serviceUrls` (the REST client, `createSpeechStream`).
 *
 * A deployment is named by its `{base_url}` (`https://host/api/open/v1`) or
 * by its root (`https://host` or, behind a path prefix, `https://host/prefix`):
 * a URL that does not end in `/api/open/v1` is the root, and the suffix is
 * added. The prefix is kept everywhere: `https://host/prefix` gives
 *
 * - `{base_url}`    `https://host/prefix/api/open/v1` (REST)
 * - `{root_url}`    `https://host/prefix` (compatible routes, downloads)
 * - `{rt_http_url}` `https://host/prefix` (status route, capabilities, tickets), unless given
 * - `{ws_url}`      `wss://host/prefix` (`{rt_http_url}` with ws/wss), unless given
 *
 * A bad configuration has two codes whatever the entry point (the REST
 * client, `createSpeechStream`, the CLI's environment): `missing_api_key`
 * when there is no key, `invalid_config` for a URL or option that cannot be
 * used. Neither message carries the key.
 */
import { redact, registerSecret, VoxpipeError } from './errors.js';
import { LocalErrorCode } from './protocol/codes.js';
import { REALTIME_PATHS } from './protocol/constants.js';
import { BASE_PATH } from './protocol/rest.js';

export { BASE_PATH } from './protocol/rest.js';
export { LOCAL_DEV_API_KEY } from './protocol/constants.js';

/** The four roots of a deployment (spec, "Conventions"), without trailing slashes. */
export interface ServiceUrls {
  /** `{base_url}`: the root plus `/api/open/v1`. */
  baseUrl: string;
  /** `{root_url}`: the host root, with its path prefix if any. */
  rootUrl: string;
  /** `{ws_url}`: WebSocket root of realtime TTS. */
  wsUrl: string;
  /** `{rt_http_url}`: HTTP root of the realtime service. */
  rtHttpUrl: string;
}

/** What the configuration gives: the base (or root) URL, and any root given on its own. */
export interface UrlSettings {
  baseUrl: string;
  rootUrl?: string | undefined;
  wsUrl?: string | undefined;
  rtHttpUrl?: string | undefined;
}

/** Names of the settings, for messages (the client's options by default; the CLI names its variables). */
export type SettingNames = Readonly<Record<keyof ServiceUrls, string>>;

export const OPTION_NAMES: SettingNames = { baseUrl: 'baseUrl', rootUrl: 'rootUrl', wsUrl: 'wsUrl', rtHttpUrl: 'rtHttpUrl' };
export const ENV_NAMES: SettingNames = { baseUrl: 'VOXPIPE_BASE_URL', rootUrl: 'VOXPIPE_ROOT_URL', wsUrl: 'VOXPIPE_WS_URL', rtHttpUrl: 'VOXPIPE_RT_HTTP_URL' };

/** A URL or option of the configuration that cannot be used (`invalid_config`). */
export function configError(message: string, cause?: unknown): VoxpipeError {
  return new VoxpipeError(LocalErrorCode.invalidConfig, redact(message), cause === undefined ? {} : { cause });
}

/**
 * The API key, or a `missing_api_key` error naming where it was expected.
 * @param where the setting(s) that give it, e.g. `apiKey or VOXPIPE_API_KEY`
 */
export function requireApiKey(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new VoxpipeError(LocalErrorCode.missingApiKey, `no API key: set ${where}`);
  }
  return value;
}

const HTTP = ['http:', 'https:'] as const;
const WS = ['ws:', 'wss:'] as const;

/** A configured URL, parsed; `invalid_config` naming the setting when it is not a URL of one of `protocols`. */
export function parseSetting(setting: string, value: unknown, protocols: readonly string[] = HTTP, example = 'https://host/api/open/v1'): URL {
  if (typeof value !== 'string' || value.trim() === '') throw configError(`${setting} is empty; give a URL such as ${example}`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch (err) {
    throw configError(`${setting} is not a URL: ${value}; give one such as ${example}`, err);
  }
  if (!protocols.includes(url.protocol)) {
    const kinds = protocols.map((p) => p.slice(0, -1)).join(', ').replace(/, ([^,]*)$/, ' or $1');
    throw configError(`${setting} must be ${kinds.startsWith('http') ? 'an' : 'a'} ${kinds} URL (got ${url.protocol}); e.g. ${example}`);
  }
  return url;
}

/** `url` without credentials, query, fragment or trailing slashes: origin plus path. */
function rootOf(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** `{root_url}` of a base or root URL: without the `/api/open/v1` suffix, the path prefix kept. */
export function deriveRootUrl(baseUrl: string, setting: string = OPTION_NAMES.baseUrl): string {
  const root = rootOf(parseSetting(setting, baseUrl));
  return root.endsWith(BASE_PATH) ? root.slice(0, -BASE_PATH.length) : root;
}

/** The same root with `ws:` for `http:` and `wss:` for `https:`. */
function toWs(httpUrl: string): string {
  return httpUrl.replace(/^http/i, 'ws');
}

/**
 * Every root of the deployment from the configuration (see the module's
 * comment). Throws `invalid_config` naming the setting that is not usable.
 */
export function serviceUrls(given: UrlSettings, names: SettingNames = OPTION_NAMES): ServiceUrls {
  const rootFromBase = deriveRootUrl(given.baseUrl, names.baseUrl);
  const rootUrl = given.rootUrl ? rootOf(parseSetting(names.rootUrl, given.rootUrl, HTTP, 'https://host')) : rootFromBase;
  const rtHttpUrl = given.rtHttpUrl ? rootOf(parseSetting(names.rtHttpUrl, given.rtHttpUrl, HTTP, 'https://host')) : rootUrl;
  const wsUrl = given.wsUrl ? toWs(rootOf(parseSetting(names.wsUrl, given.wsUrl, [...WS, ...HTTP], 'wss://host'))) : toWs(rtHttpUrl);
  return { baseUrl: `${rootFromBase}${BASE_PATH}`, rootUrl, wsUrl, rtHttpUrl };
}

/** `path` under `root`, however either is slashed. */
export function joinUrl(root: string, path: string): string {
  return root.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** `{ws_url}/v2/tts/live`: the realtime route (a path prefix of the root is kept). */
export function liveUrl(wsUrl: string): string {
  return joinUrl(wsUrl, REALTIME_PATHS.live);
}

/** `{rt_http_url}/v2/tts/requests/{request_id}`: the request-status route. */
export function requestStatusUrl(rtHttpUrl: string, requestId: string): string {
  return joinUrl(rtHttpUrl, `${REALTIME_PATHS.requests}/${encodeURIComponent(requestId)}`);
}

/** `{rt_http_url}/v2/tts/capabilities`. */
export function capabilitiesUrl(rtHttpUrl: string): string {
  return joinUrl(rtHttpUrl, REALTIME_PATHS.capabilities);
}

/** `{rt_http_url}/v2/tts/browser-tickets`. */
export function browserTicketsUrl(rtHttpUrl: string): string {
  return joinUrl(rtHttpUrl, REALTIME_PATHS.browserTickets);
}

/**
 * A manifest's `audio_url`: absolute as given; a path is under
 * `{rt_http_url}` with its prefix (a server behind a prefix proxy does not
 * know the prefix), unless it already starts with it.
 */
export function segmentAudioUrl(rtHttpUrl: string, audioUrl: string): string {
  const root = new URL(`${rtHttpUrl.replace(/\/+$/, '')}/`);
  const prefix = root.pathname.replace(/\/+$/, '');
  if (audioUrl.startsWith('/') && !audioUrl.startsWith('//') && prefix !== '' && !audioUrl.startsWith(`${prefix}/`)) return new URL(`${prefix}${audioUrl}`, root).href;
  return new URL(audioUrl, root).href;
}

/** The service to talk to: every root of the deployment and the key. */
export interface ServiceConfig extends ServiceUrls {
  apiKey: string;
}

/**
 * Derive every URL from the base URL (its path prefix kept), unless given.
 * @throws VoxpipeError `invalid_config` naming the variable that is not a usable URL
 */
export function deriveUrls(baseUrl: string, given: Partial<Omit<ServiceConfig, 'apiKey' | 'baseUrl'>> = {}): ServiceUrls {
  return serviceUrls({ baseUrl, ...given }, ENV_NAMES);
}

/**
 * The configured service, or undefined when VOXPIPE_BASE_URL is not set
 * (the CLI then starts the embedded reference server).
 * @throws VoxpipeError `missing_api_key` (VOXPIPE_BASE_URL without VOXPIPE_API_KEY), `invalid_config` (a URL that is not usable)
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig | undefined {
  const baseUrl = env['VOXPIPE_BASE_URL'];
  if (!baseUrl) return undefined;
  const apiKey = requireApiKey(env['VOXPIPE_API_KEY'], 'VOXPIPE_API_KEY (VOXPIPE_BASE_URL is set)');
  registerSecret(apiKey);
  const urls = deriveUrls(baseUrl, {
    ...(env['VOXPIPE_ROOT_URL'] && { rootUrl: env['VOXPIPE_ROOT_URL'] }),
    ...(env['VOXPIPE_WS_URL'] && { wsUrl: env['VOXPIPE_WS_URL'] }),
    ...(env['VOXPIPE_RT_HTTP_URL'] && { rtHttpUrl: env['VOXPIPE_RT_HTTP_URL'] }),
  });
  return { apiKey, ...urls };
}

/**
 * Check a `ServiceConfig` built by hand (not by `configFromEnv`): the same
 * errors as every other entry point, before any request is made.
 * @throws VoxpipeError `missing_api_key`, `invalid_config`
 */
export function checkServiceConfig(config: ServiceConfig): void {
  if (config === null || typeof config !== 'object') throw configError('no service configuration: pass { apiKey, baseUrl, rootUrl, wsUrl, rtHttpUrl } (configFromEnv() or openService() build one)');
  requireApiKey(config.apiKey, 'apiKey (or VOXPIPE_API_KEY)');
  serviceUrls(config);
}
