/**
 * The REST side of the wire, for both ends: routes (relative to
 * `{base_url}`, `/api/open/v1`, unless said otherwise) and the headers the
 * spec names. The client joins them to the base URL; the reference server
 * prefixes `BASE_PATH` (`serverPath`).
 */

/** `{base_url}` suffix of the spec; `{root_url}` is what precedes it. */
export const BASE_PATH = '/api/open/v1';

/** Routes under `{base_url}`. */
export const REST_ROUTES = {
  tts: '/speech/tts',
  ttsJobs: '/speech/tts/jobs',
  ttsTasks: '/tts/tasks',
  asrTasks: '/asr/tasks',
  imageJobs: '/media/images/jobs',
  imageTasks: '/images/tasks',
  videoJobs: '/media/videos/jobs',
  videoTasks: '/videos/tasks',
  lipsyncJobs: '/media/lip-sync/jobs',
  lipsyncTasks: '/lip-sync/tasks',
  mediaModels: '/media/models',
  voices: '/voices',
  voiceDesigns: '/voice-designs',
  profile: '/profile',
  usage: '/usage',
} as const;

/** Routes of the OpenAI-compatible surface, under `{root_url}`. */
export const COMPAT_ROUTES = { speech: '/v1/audio/speech', voices: '/v1/audio/voices' } as const;

/** The server's path of a `{base_url}` route: `/api/open/v1` + `route`. */
export function serverPath(route: string): string {
  return `${BASE_PATH}${route}`;
}

/** Header names the spec uses (lower case, as Node and fetch give them). */
export const HEADERS = {
  /** Stable id of one logical generation (sync TTS, 3.6). */
  requestId: 'x-request-id',
  /** The service's own id of the HTTP request, kept for support. */
  svcRequestId: 'x-svc-request-id',
  /** Replays the first result of a create for the same body. */
  idempotencyKey: 'idempotency-key',
  /** Credits a sync generation charged. */
  creditsCharged: 'x-svc-credits-charged',
  /** PCM layout of raw audio bodies. */
  sampleRate: 'x-svc-sample-rate',
  channels: 'x-svc-channels',
  bitDepth: 'x-svc-bit-depth',
} as const;
