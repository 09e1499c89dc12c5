/**
 * Image generation (spec 4.5) in both route families, normalised to `MediaTask`:
 * - `client.images.jobs`: `/media/images/jobs` (required `Idempotency-Key`, default a new UUID),
 * - `client.images.tasks`: `/images/tasks` (at most 16 `referenceImageUrls`),
 * - `client.images.models()`: `GET /media/models?mediaType=image`.
 */
import type { HttpClient } from '../client.js';
import type { PollOptions } from '../job-handle.js';
import { TaskCollection } from '../task-collection.js';
import { listMediaModels, MediaType, normalizeMediaTask, type MediaModel, type MediaTask } from './media.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const IMAGE_JOBS_PATH = REST_ROUTES.imageJobs;
export const IMAGE_TASKS_PATH = REST_ROUTES.imageTasks;

export interface ImageJobParams {
  prompt: string;
  model: string;
  /** Width:height, e.g. `16:9`. */
  aspectRatio?: string;
  /** `edit` to edit `imageUrl`. */
  generationType?: string;
  /** Required when `generationType` is `edit`. */
  imageUrl?: string;
}

export interface ImageTaskParams {
  prompt: string;
  model: string;
  /** Aspect-like size. */
  size?: string;
  resolution?: string;
  /** At most 16. */
  referenceImageUrls?: string[];
}

export class Images {
  readonly jobs: TaskCollection<MediaTask, ImageJobParams>;
  readonly tasks: TaskCollection<MediaTask, ImageTaskParams>;

  constructor(private readonly client: HttpClient, poll: PollOptions<MediaTask> = {}) {
    this.jobs = new TaskCollection(client, {
      family: 'media',
      path: IMAGE_JOBS_PATH,
      idempotencyKey: true,
      body: (p) => ({ prompt: p.prompt, model: p.model, aspect_ratio: p.aspectRatio, generation_type: p.generationType, image_url: p.imageUrl }),
      normalize: normalizeMediaTask,
      resultUrl: (t) => t.resultUrl,
    }, poll);
    this.tasks = new TaskCollection(client, {
      family: 'tasks',
      path: IMAGE_TASKS_PATH,
      body: (p) => ({ prompt: p.prompt, model: p.model, size: p.size, resolution: p.resolution, referenceImageUrls: p.referenceImageUrls }),
      normalize: normalizeMediaTask,
      resultUrl: (t) => t.resultUrl,
    }, poll);
  }

  /** Verified image models. */
  models(options: { signal?: AbortSignal } = {}): Promise<MediaModel[]> {
    return listMediaModels(this.client, MediaType.image, options.signal);
  }
}
