/**
 * Names and numbers of the realtime v2 protocol (spec 4.10, 5, 6, 7.6).
 */

/** WebSocket subprotocol both sides must declare. */
export const SUBPROTOCOL = 'realtime.tts.msgpack.v2';
/** Protocol version announced in `authenticated`. */
export const PROTOCOL_VERSION = 2;

/** Routes of the realtime service, relative to `{ws_url}` / `{rt_http_url}`. */
export const REALTIME_PATHS = {
  live: '/v2/tts/live',
  capabilities: '/v2/tts/capabilities',
  requests: '/v2/tts/requests',
  browserTickets: '/v2/tts/browser-tickets',
} as const;

/** Default model of the service. */
export const DEFAULT_MODEL = 'svc-s21pro-flash';

export const Mode = { simple: 'simple', reliable: 'reliable' } as const;
export type Mode = (typeof Mode)[keyof typeof Mode];

/** `finish.reason` values (spec 6, rule 1). */
export const FinishReason = {
  completed: 'completed',
  error: 'error',
  timeout: 'timeout',
  serverDraining: 'server_draining',
} as const;
export type FinishReason = (typeof FinishReason)[keyof typeof FinishReason];

/** Reliable request states read through the request-status route (spec 3.5). */
export const RequestState = {
  running: 'running',
  completed: 'completed',
  failedRetryable: 'failed_retryable',
  failedTerminal: 'failed_terminal',
} as const;
export type RequestState = (typeof RequestState)[keyof typeof RequestState];

export { ErrorCode } from './codes.js';

/** WebSocket close codes and the one policy for them (close-codes.ts). */
export { CloseAction, CloseCode, CLOSE_ACTIONS, CLOSE_REASONS, closeCodeTable, closePolicy, isRetryableClose, type ClosePolicy, type CloseCodeRow } from './close-codes.js';

/** Optional `start.request` fields that exist only where a provider's capabilities list them. */
export const PROVIDER_PARAMETERS = ['latency', 'emotion', 'instructions', 'optimize_instructions'] as const;
export type ProviderParameter = (typeof PROVIDER_PARAMETERS)[number];

/** The API key of the reference server's development account: what it accepts, and what the client's embedded default sends, when VOXPIPE_API_KEY is not set. */
export const LOCAL_DEV_API_KEY = 'sk-local-dev';
