/**
 * Video generation (spec 4.6) in both route families, normalised to `MediaTask`:
 * - `client.videos.jobs`: `/media/videos/jobs` (required `Idempotency-Key`, default a new UUID; states pending, processing, completed, failed),
 * - `client.videos.tasks`: `/videos/tasks`,
 * - `client.videos.models()`: `GET /media/models?mediaType=video`.
 */
import type { HttpClient } from '../client.js';
import type { PollOptions } from '../job-handle.js';
import { TaskCollection } from '../task-collection.js';
import { listMediaModels, MediaType, normalizeMediaTask, type MediaModel, type MediaTask } from './media.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const VIDEO_JOBS_PATH = REST_ROUTES.videoJobs;
export const VIDEO_TASKS_PATH = REST_ROUTES.videoTasks;

export interface VideoReference {
  role: 'start_frame' | 'end_frame' | 'reference';
  url: string;
}

export interface VideoJobParams {
  prompt: string;
  model: string;
  seconds?: number;
  /** `<w>x<h>`. */
  size?: string;
  references?: VideoReference[];
}

export interface VideoTaskParams {
  prompt: string;
  model: string;
  aspectRatio?: string;
  size?: string;
  duration?: number;
  firstFrameUrl?: string;
  lastFrameUrl?: string;
  seed?: number;
  referenceImageUrls?: string[];
}

export class Videos {
  readonly jobs: TaskCollection<MediaTask, VideoJobParams>;
  readonly tasks: TaskCollection<MediaTask, VideoTaskParams>;

  constructor(private readonly client: HttpClient, poll: PollOptions<MediaTask> = {}) {
    this.jobs = new TaskCollection(client, {
      family: 'media',
      path: VIDEO_JOBS_PATH,
      idempotencyKey: true,
      body: (p) => ({ prompt: p.prompt, model: p.model, seconds: p.seconds, size: p.size, references: p.references }),
      normalize: normalizeMediaTask,
      statusSpelling: { succeeded: 'completed' },
      resultUrl: (t) => t.resultUrl,
    }, poll);
    this.tasks = new TaskCollection(client, {
      family: 'tasks',
      path: VIDEO_TASKS_PATH,
      body: (p) => ({ prompt: p.prompt, model: p.model, aspectRatio: p.aspectRatio, size: p.size, duration: p.duration, firstFrameUrl: p.firstFrameUrl, lastFrameUrl: p.lastFrameUrl, seed: p.seed, referenceImageUrls: p.referenceImageUrls }),
      normalize: normalizeMediaTask,
      resultUrl: (t) => t.resultUrl,
    }, poll);
  }

  /** Verified video models. */
  models(options: { signal?: AbortSignal } = {}): Promise<MediaModel[]> {
    return listMediaModels(this.client, MediaType.video, options.signal);
  }
}
