/**
 * What the media routes offer: ASR, image, video and lip-sync models with
 * their limits and prices, the capability names checked against an
 * account's `capabilities` (403), and the task-family error codes.
 *
 * Prices (decided here; spec 8 only says image and video pre-deduct API
 * quota, ASR is a credits capability like HTTP TTS):
 * - ASR: 1 credit per started second of audio (at least 1);
 * - images: the model's `quotaPerImage`;
 * - videos: the model's `quotaPerSecond` per started second;
 * - lip-sync: the model's `quotaPerSecond` per started second of the result.
 *
 * `pickModel` and `checkAspect` answer 400 for what a model does not offer.
 */
import { LIMITS } from '../../../protocol/limits.js';
import { badRequest } from '../../http/errors.js';

/** Capability names of the media routes (`Account.capabilities`). */
export const MediaCapability = { asr: 'asr', image: 'image', video: 'video', lipsync: 'lipsync' } as const;
export type MediaCapability = (typeof MediaCapability)[keyof typeof MediaCapability];

/** Error codes media tasks end with (besides the spec's `generation_failed`). */
export const MediaErrorCode = {
  /** The input URL could not be fetched when the task ran. */
  fetchFailed: 'media_fetch_failed',
  /** Reachable, but not media this server can process (422 at create on lip-sync). */
  unprocessable: 'unprocessable_media',
  generationFailed: 'generation_failed',
  /** The audio is longer than the `durationSeconds` estimate charged at create. */
  durationExceedsEstimate: 'duration_exceeds_estimate',
  internal: 'internal_error',
} as const;

/** Longest audio a transcription accepts: 600 s (10 min). */
export const ASR_MAX_SECONDS = 600;
/** Credits per started second of transcribed audio. */
export const ASR_CREDITS_PER_SECOND = 1;
/** How far the measured audio may exceed a `durationSeconds` estimate: max(2 s, 10 %). */
export function asrEstimateTolerance(estimateSeconds: number): number {
  return Math.max(2, estimateSeconds * 0.1);
}

export interface AsrModel {
  id: string;
  default: boolean;
  /** Language codes recognized (primary subtags). */
  languages: string[];
  engine: string;
  maxSeconds: number;
  creditsPerSecond: number;
}

export const ASR_MODELS: readonly AsrModel[] = [
  { id: 'svc-asr-v1', default: true, languages: ['en'], engine: 'pocketsphinx en-us', maxSeconds: ASR_MAX_SECONDS, creditsPerSecond: ASR_CREDITS_PER_SECOND },
];
export const DEFAULT_ASR_MODEL = 'svc-asr-v1';

/** Credits of transcribing `seconds` of audio. */
export function asrCredits(seconds: number): number {
  return Math.max(1, Math.ceil(seconds - 1e-9)) * ASR_CREDITS_PER_SECOND;
}

/** Aspect ratios every image model accepts (`w:h`). */
export const ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '21:9'] as const;

/** Resolutions by long side in pixels. */
export const RESOLUTIONS: Readonly<Record<string, number>> = { '512': 512, '1k': 1024, '2k': 2048 };

export interface ImageModel {
  id: string;
  mediaType: 'image';
  name: string;
  default: boolean;
  aspectRatios: readonly string[];
  resolutions: string[];
  defaultResolution: string;
  generationTypes: string[];
  maxReferenceImages: number;
  quotaPerImage: number;
  outputFormat: 'png';
}

export const IMAGE_MODELS: readonly ImageModel[] = [
  { id: 'svc-image-v1', mediaType: 'image', name: 'Pattern image (local stand-in)', default: true, aspectRatios: ASPECT_RATIOS, resolutions: ['512', '1k', '2k'], defaultResolution: '1k', generationTypes: ['generate', 'edit'], maxReferenceImages: LIMITS.referenceImageUrlsMax, quotaPerImage: 10, outputFormat: 'png' },
  { id: 'svc-image-lite', mediaType: 'image', name: 'Pattern image, small (local stand-in)', default: false, aspectRatios: ASPECT_RATIOS, resolutions: ['512'], defaultResolution: '512', generationTypes: ['generate'], maxReferenceImages: 4, quotaPerImage: 4, outputFormat: 'png' },
];

export interface VideoModel {
  id: string;
  mediaType: 'video';
  name: string;
  default: boolean;
  aspectRatios: readonly string[];
  /** Example sizes; any `<w>x<h>` within `maxSide` and `minSide` works (rounded to even). */
  sizes: string[];
  minSide: number;
  maxSide: number;
  defaultSize: string;
  minSeconds: number;
  maxSeconds: number;
  defaultSeconds: number;
  referenceRoles: string[];
  quotaPerSecond: number;
  outputFormat: 'mp4';
  fps: number;
}

export const VIDEO_MODELS: readonly VideoModel[] = [
  {
    id: 'svc-video-v1',
    mediaType: 'video',
    name: 'Animated pattern video (local stand-in)',
    default: true,
    aspectRatios: ASPECT_RATIOS,
    sizes: ['320x180', '640x360', '1280x720', '360x640', '720x1280', '480x480'],
    minSide: 16,
    maxSide: 1920,
    defaultSize: '640x360',
    minSeconds: 1,
    maxSeconds: 10,
    defaultSeconds: 4,
    referenceRoles: ['start_frame', 'end_frame', 'reference'],
    quotaPerSecond: 10,
    outputFormat: 'mp4',
    fps: 24,
  },
];

export interface LipSyncModel {
  id: string;
  default: boolean;
  inputModes: string[];
  maxSeconds: number;
  quotaPerSecond: number;
}

export const LIPSYNC_MODELS: readonly LipSyncModel[] = [{ id: 'svc-lipsync-v1', default: true, inputModes: ['video', 'image'], maxSeconds: 300, quotaPerSecond: 5 }];
export const DEFAULT_LIPSYNC_MODEL = 'svc-lipsync-v1';

/** Quota of `seconds` at `perSecond`, per started second (at least one second). */
export function perSecondQuota(seconds: number, perSecond: number): number {
  return Math.max(1, Math.ceil(seconds - 1e-9)) * perSecond;
}

/** The model `id` of `models` (`defaultId` when absent); 400 naming the supported models otherwise. */
export function pickModel<M extends { id: string }>(models: readonly M[], id: string | undefined, defaultId: string): M {
  const found = models.find((m) => m.id === (id ?? defaultId));
  if (!found) throw badRequest(`unsupported model ${JSON.stringify(id)}`, { supportedModels: models.map((m) => m.id) });
  return found;
}

/** Throw 400 (listing the supported ones) unless model `m` takes the aspect ratio `aspect` (`w:h`). */
export function checkAspect(m: { id: string; aspectRatios: readonly string[] }, aspect: string): void {
  if (!m.aspectRatios.includes(aspect)) throw badRequest(`model ${m.id} supports aspect ratios ${m.aspectRatios.join(', ')}, not ${JSON.stringify(aspect)}`, { supportedAspectRatios: m.aspectRatios });
}
