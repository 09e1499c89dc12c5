/**
 * The REST client of the service: `createClient()` gives one object with a
 * resource per capability, all over one `HttpClient` (auth, timeouts, typed
 * errors, safe retries).
 *
 * ```ts
 * const client = createClient({ apiKey, baseUrl });
 * const { audio } = await client.tts.synthesize({ text: 'Hello', voiceId });
 * const job = await client.jobs.create({ text, voiceId });
 * const done = await client.jobs.wait(job.id);
 * const file = await client.jobs.download(done);
 * ```
 */
import { configError, requireApiKey } from '../config.js';
import { HttpClient, type HttpClientOptions } from './client.js';
import type { PollOptions } from './job-handle.js';
import { Asr } from './resources/asr.js';
import { Compat } from './resources/compat.js';
import { Images } from './resources/images.js';
import { TtsJobs, type TtsJobFamily } from './resources/jobs.js';
import { LipSync } from './resources/lipsync.js';
import { Profiles } from './resources/profile.js';
import { Tts } from './resources/tts.js';
import { Usage } from './resources/usage.js';
import { VoiceDesigns } from './resources/voice-design.js';
import { Videos } from './resources/videos.js';
import { Voices } from './resources/voices.js';
import type { BaseTask } from './task.js';

export interface ClientOptions extends Omit<HttpClientOptions, 'apiKey' | 'baseUrl'> {
  /** Default `VOXPIPE_API_KEY`. */
  apiKey?: string;
  /** `{base_url}`; default `VOXPIPE_BASE_URL`. */
  baseUrl?: string;
  /** Default `VOXPIPE_ROOT_URL`, else derived from `baseUrl`. */
  rootUrl?: string;
  /** Route family of `client.jobs`; default `jobs` (`/speech/tts/jobs`). */
  ttsJobFamily?: TtsJobFamily;
  /** Default poll options of every `wait()` and job handle (3 s growing to 5 s unless set). */
  poll?: PollOptions<BaseTask>;
}

export interface VoxpipeClient {
  /** The core, for routes without a resource. */
  http: HttpClient;
  /** Sync TTS `POST /speech/tts`. */
  tts: Tts;
  /** `{root_url}/v1/audio/speech` and `/v1/audio/voices`. */
  compat: Compat;
  /** Async TTS jobs (`/speech/tts/jobs` or `/tts/tasks`; `client.jobs.using('tasks')` for the other). */
  jobs: TtsJobs;
  asr: Asr;
  images: Images;
  videos: Videos;
  lipsync: LipSync;
  voices: Voices;
  voiceDesigns: VoiceDesigns;
  profile: Profiles;
  usage: Usage;
}

/** Build a client; throws `VoxpipeError` `missing_api_key` without a key, `invalid_config` without a usable base URL. */
export function createClient(options: ClientOptions = {}): VoxpipeClient {
  const { ttsJobFamily, poll, ...rest } = options;
  const apiKey = rest.apiKey ?? process.env['VOXPIPE_API_KEY'];
  const baseUrl = rest.baseUrl ?? process.env['VOXPIPE_BASE_URL'];
  const rootUrl = rest.rootUrl ?? process.env['VOXPIPE_ROOT_URL'];
  // The same two errors as every entry point (`config.ts`).
  const key = requireApiKey(apiKey, 'apiKey or VOXPIPE_API_KEY');
  if (!baseUrl) throw configError('no base URL: set baseUrl or VOXPIPE_BASE_URL (e.g. https://host/api/open/v1)');
  const http = new HttpClient({ ...rest, apiKey: key, baseUrl, ...(rootUrl ? { rootUrl } : {}) });
  const p: PollOptions<BaseTask> = poll ?? {};
  return {
    http,
    tts: new Tts(http),
    compat: new Compat(http),
    jobs: new TtsJobs(http, { ...(ttsJobFamily ? { family: ttsJobFamily } : {}), poll: p }),
    asr: new Asr(http, p),
    images: new Images(http, p),
    videos: new Videos(http, p),
    lipsync: new LipSync(http, p),
    voices: new Voices(http),
    voiceDesigns: new VoiceDesigns(http),
    profile: new Profiles(http),
    usage: new Usage(http),
  };
}

export { HttpClient, ClientErrorCode, BASE_PATH, deriveRootUrl } from './client.js';
export type { HttpClientOptions, RequestOptions, ApiResponse, JsonResponse, BinaryResponse, RetryInfo, QueryValue } from './client.js';
export { apiErrorFromResponse, requestIdFromHeaders } from './api-error.js';
export { decideRetry, backoffDelayMs, parseRetryAfterMs, isResendSafe, HttpMethod, DEFAULT_BACKOFF, REQUEST_IN_PROGRESS } from './retry.js';
export type { RetryPolicy, RetryDecision, FailureInfo, BackoffOptions } from './retry.js';
export { JobHandle, nextPollDelayMs, DEFAULT_POLL } from './job-handle.js';
export type { JobEvent, JobSource, PollOptions, DownloadOptions, DownloadedFile } from './job-handle.js';
export { TaskStatus, TERMINAL_STATUSES, isTerminal, normalizeStatus, JobFailedError } from './task.js';
export type { BaseTask, TaskPage, ListParams } from './task.js';
export { TaskCollection, unwrapTask, unwrapList, toTaskPage } from './task-collection.js';
export type { TaskFamilyConfig, CreateOptions } from './task-collection.js';
export { textFingerprint } from './fingerprint.js';
export { Tts, TTS_PATH } from './resources/tts.js';
export type { SynthesizeParams, SynthesizeResult, CachedSynthesisResult } from './resources/tts.js';
export { Compat, CompatFormat } from './resources/compat.js';
export type { SpeechParams, SpeechResult, CompatVoice } from './resources/compat.js';
export { TtsJobs, TtsJobFamily, normalizeTtsJob, ttsAudioPath, isAmbiguousFailure } from './resources/jobs.js';
export type { TtsJob, TtsJobParams, TtsJobSegment, RecoverOptions, RecoverResult } from './resources/jobs.js';
export { Asr } from './resources/asr.js';
export type { AsrParams, AsrTask } from './resources/asr.js';
export { MediaType } from './resources/media.js';
export type { MediaTask, MediaModel } from './resources/media.js';
export { Images } from './resources/images.js';
export type { ImageJobParams, ImageTaskParams } from './resources/images.js';
export { Videos } from './resources/videos.js';
export type { VideoJobParams, VideoTaskParams, VideoReference } from './resources/videos.js';
export { LipSync } from './resources/lipsync.js';
export type { LipSyncJobParams, LipSyncTaskParams } from './resources/lipsync.js';
export { Voices } from './resources/voices.js';
export type { Voice, CloneVoiceParams, ClonedVoice } from './resources/voices.js';
export { VoiceDesigns } from './resources/voice-design.js';
export type { DesignParams, VoiceDesign, DesignCandidate, SaveDesignParams, SavedVoice } from './resources/voice-design.js';
export { Profiles } from './resources/profile.js';
export type { Profile, ProfileUpdate } from './resources/profile.js';
export { Usage } from './resources/usage.js';
export type { UsageSummary } from './resources/usage.js';
