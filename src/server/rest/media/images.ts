/**
 * Image generation (spec 2.7, 2.8, 3.3, 4.5) over one task runner, in both
 * route families (a task created in one is readable in the other):
 * - media jobs: `POST {base_url}/media/images/jobs` (required
 *   `Idempotency-Key`), `GET .../jobs/{jobId}`, and a list `GET .../jobs`;
 *   body `prompt`, `model`, `aspect_ratio`, `generation_type` (`edit` needs
 *   `image_url`), `resolution`, `reference_image_urls`;
 * - tasks: `POST|GET {base_url}/images/tasks`, `GET .../tasks/{taskId}`; body
 *   `prompt`, `model`, `size` (`w:h` or `<w>x<h>`), `resolution`,
 *   `referenceImageUrls` (at most 16); result `resultImageUrl`.
 * API quota is pre-deducted at create and refunded if the job fails. The
 * engine is local (image-engine.ts): a PNG derived from the prompt, blended
 * over the edit source or first reference image.
 */
import { z } from 'zod';
import { LIMITS } from '../../../protocol/limits.js';
import type { ServerContext } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import type { RouteContext, RouteDef } from '../../http/router.js';
import { decodePicture, generateImage, parseSize, sizeForAspect } from '../../media-engines/image-engine.js';
import type { RgbImage } from '../../media-engines/png.js';
import { mediaToolsOf } from '../../media-engines/tools.js';
import type { IdempotencyStore } from '../common/idempotency.js';
import { TaskRunner, type Task } from '../common/task-runner.js';
import { checkAspect, IMAGE_MODELS, pickModel, MediaCapability, RESOLUTIONS, type ImageModel } from './catalog.js';
import { CREATE_ERRORS, family, familyRoutes, flatShape, mediaJobShape } from './family.js';
import { checkUrlField, checkUrlList, engineFailure, engineFaults, fetchForTask } from './inputs.js';
import { resultFileUrl, type MediaFiles } from './results.js';
import { flatHead, flatHeadDoc, mediaJobHead, mediaJobHeadDoc, taskMeta, taskMetaDoc } from './views.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const IMAGE_PATHS = {
  jobs: serverPath(REST_ROUTES.imageJobs),
  job: serverPath(`${REST_ROUTES.imageJobs}/{jobId}`),
  tasks: serverPath(REST_ROUTES.imageTasks),
  task: serverPath(`${REST_ROUTES.imageTasks}/{taskId}`),
} as const;

/** Largest edit source or reference image fetched: 20 MiB. */
const IMAGE_INPUT_MAX_BYTES = 20 * 1024 * 1024;
/** Smallest side of an explicit `<w>x<h>` size. */
const MIN_SIDE = 16;

export const GenerationType = { generate: 'generate', edit: 'edit' } as const;
export type GenerationType = (typeof GenerationType)[keyof typeof GenerationType];

export interface ImageInput {
  prompt: string;
  model: string;
  width: number;
  height: number;
  aspectRatio: string | null;
  resolution: string;
  generationType: GenerationType;
  imageUrl: string | null;
  referenceImageUrls: string[];
}

export interface ImageResult {
  fileId: string;
  width: number;
  height: number;
  bytes: number;
}

export type ImageTask = Task<ImageInput, ImageResult>;

const prompt = z.string().trim().min(1).max(4000).meta({ description: 'What to draw, 1 to 4000 characters.' });
const model = z.string().min(1).max(128).optional().meta({ description: `Image model; default ${IMAGE_MODELS[0]!.id}. See GET /media/models?mediaType=image.` });
const url = z.string().min(1).max(4096);
const resolution = z.string().min(1).max(16).optional().meta({ description: `Long side: ${Object.keys(RESOLUTIONS).join(', ')} (per model).` });

/** `POST /media/images/jobs`. */
export const imageJobBody = z.object({
  prompt,
  model,
  aspect_ratio: z.string().min(1).max(16).optional().meta({ description: 'Width:height, e.g. 16:9; default 1:1.' }),
  generation_type: z.enum(Object.values(GenerationType)).optional().meta({ description: 'edit: change image_url after the prompt.' }),
  image_url: url.optional().meta({ description: 'Public URL of the image to edit (required when generation_type is edit).' }),
  resolution,
  reference_image_urls: z.array(url).max(LIMITS.referenceImageUrlsMax).optional().meta({ description: 'Public URLs of reference images (at most the model maxReferenceImages).' }),
});
export type ImageJobBody = z.infer<typeof imageJobBody>;

/** `POST /images/tasks`. */
export const imageTaskBody = z.object({
  prompt,
  model,
  size: z.string().min(1).max(16).optional().meta({ description: 'Aspect ratio (16:9) or pixel size (1024x576); default 1:1.' }),
  resolution,
  referenceImageUrls: z.array(url).max(LIMITS.referenceImageUrlsMax).optional().meta({ description: `Public URLs of reference images, at most ${LIMITS.referenceImageUrlsMax}.` }),
});
export type ImageTaskBody = z.infer<typeof imageTaskBody>;

const nullableString = z.string().nullable();
const resultDoc = z.object({ url: z.string(), width: z.number().int(), height: z.number().int(), contentType: z.string(), bytes: z.number().int() }).nullable();
const jobDoc = z.object({
  ...mediaJobHeadDoc,
  model: z.string(),
  prompt: z.string(),
  aspectRatio: nullableString,
  generationType: z.string(),
  resultUrl: nullableString,
  result: resultDoc,
  ...taskMetaDoc,
});
const taskDoc = z.object({
  ...flatHeadDoc('image'),
  model: z.string(),
  prompt: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  resolution: z.string(),
  referenceImageUrls: z.array(z.string()),
  resultImageUrl: nullableString,
  ...taskMetaDoc,
});

/** A media image job (spec 2.8: task id, status, result URL on success, error code on failure). */
export function imageJobView(ctx: ServerContext, task: ImageTask) {
  const resultUrl = resultFileUrl(ctx, task);
  return {
    ...mediaJobHead(task),
    model: task.input.model,
    prompt: task.input.prompt,
    aspectRatio: task.input.aspectRatio,
    generationType: task.input.generationType,
    resultUrl,
    result: resultUrl && task.result ? { url: resultUrl, width: task.result.width, height: task.result.height, contentType: 'image/png', bytes: task.result.bytes } : null,
    ...taskMeta(task),
  };
}

/** An image task (spec 2.7). */
export function imageTaskView(ctx: ServerContext, task: ImageTask) {
  return {
    ...flatHead(task, 'image'),
    model: task.input.model,
    prompt: task.input.prompt,
    width: task.input.width,
    height: task.input.height,
    resolution: task.input.resolution,
    referenceImageUrls: task.input.referenceImageUrls,
    resultImageUrl: resultFileUrl(ctx, task),
    ...taskMeta(task),
  };
}

function longSideOf(m: ImageModel, res: string | undefined): { resolution: string; longSide: number } {
  const resolution = res ?? m.defaultResolution;
  if (!m.resolutions.includes(resolution)) throw badRequest(`model ${m.id} supports resolution ${m.resolutions.join(', ')}, not ${JSON.stringify(resolution)}`);
  return { resolution, longSide: RESOLUTIONS[resolution]! };
}

function aspectSize(m: ImageModel, aspect: string, longSide: number): { width: number; height: number } {
  checkAspect(m, aspect);
  return sizeForAspect(aspect, longSide);
}

export interface ImageFamily {
  runner: TaskRunner<ImageInput, ImageResult>;
  routes: RouteDef<never, never>[];
}

export function imageFamily(ctx: ServerContext, files: MediaFiles, idempotency: IdempotencyStore): ImageFamily {
  const runner = new TaskRunner<ImageInput, ImageResult>(ctx, {
    type: 'image',
    idPrefix: 'img',
    async worker({ task, signal }) {
      const input = task.input;
      await engineFaults(ctx, input.prompt, signal);
      const source = input.imageUrl ?? input.referenceImageUrls[0];
      const field = input.imageUrl ? 'image_url' : 'referenceImageUrls[0]';
      let base: RgbImage | undefined;
      try {
        if (source) {
          const data = await fetchForTask(ctx, field, source, { maxBytes: IMAGE_INPUT_MAX_BYTES, signal });
          base = await decodePicture(data, input.width, input.height, mediaToolsOf(ctx).ffmpeg, signal);
        }
        const png = await generateImage({ prompt: input.prompt, width: input.width, height: input.height, base });
        const file = files.put(task.userId, 'image/png', `${task.taskId}.png`, png);
        return { result: { fileId: file.id, width: input.width, height: input.height, bytes: png.length } };
      } catch (err) {
        throw engineFailure(err, field);
      }
    },
  });

  function create(c: RouteContext<unknown, unknown>, input: ImageInput, m: ImageModel): Promise<ImageTask> {
    return runner.create(c.account, input, { charge: { currency: 'quota', amount: m.quotaPerImage, reason: `image ${m.id}` }, requestId: c.requestId });
  }

  async function createJob(c: RouteContext<ImageJobBody, unknown>): Promise<ImageTask> {
    const b = c.body;
    const m = pickModel(IMAGE_MODELS, b.model, IMAGE_MODELS[0]!.id);
    const generationType = b.generation_type ?? GenerationType.generate;
    if (!m.generationTypes.includes(generationType)) throw badRequest(`model ${m.id} does not support generation_type ${generationType}`);
    if (generationType === GenerationType.edit && b.image_url === undefined) throw badRequest('image_url is required when generation_type is edit', { field: 'image_url' });
    const references = b.reference_image_urls ?? [];
    if (references.length > m.maxReferenceImages) throw badRequest(`model ${m.id} takes at most ${m.maxReferenceImages} reference images`);
    const { resolution, longSide } = longSideOf(m, b.resolution);
    const aspectRatio = b.aspect_ratio ?? '1:1';
    const { width, height } = aspectSize(m, aspectRatio, longSide);
    const imageUrl = b.image_url === undefined ? null : await checkUrlField(ctx, 'image_url', b.image_url);
    const referenceImageUrls = await checkUrlList(ctx, 'reference_image_urls', references);
    return create(c, { prompt: b.prompt, model: m.id, width, height, aspectRatio, resolution, generationType, imageUrl, referenceImageUrls }, m);
  }

  async function createTask(c: RouteContext<ImageTaskBody, unknown>): Promise<ImageTask> {
    const b = c.body;
    const m = pickModel(IMAGE_MODELS, b.model, IMAGE_MODELS[0]!.id);
    const references = b.referenceImageUrls ?? [];
    if (references.length > m.maxReferenceImages) throw badRequest(`model ${m.id} takes at most ${m.maxReferenceImages} reference images`);
    const { resolution, longSide } = longSideOf(m, b.resolution);
    const size = b.size ?? '1:1';
    const pixels = parseSize(size);
    let dims: { width: number; height: number };
    let aspectRatio: string | null = null;
    if (pixels) {
      if (Math.min(pixels.width, pixels.height) < MIN_SIDE || Math.max(pixels.width, pixels.height) > longSide) {
        throw badRequest(`size ${size} must have sides from ${MIN_SIDE} to ${longSide} pixels at resolution ${resolution}`);
      }
      dims = pixels;
    } else {
      dims = aspectSize(m, size, longSide);
      aspectRatio = size;
    }
    const referenceImageUrls = await checkUrlList(ctx, 'referenceImageUrls', references);
    return create(c, { prompt: b.prompt, model: m.id, ...dims, aspectRatio, resolution, generationType: GenerationType.generate, imageUrl: null, referenceImageUrls }, m);
  }

  const routes = familyRoutes(
    { runner, idempotency, common: { tags: ['images'], capability: MediaCapability.image }, createErrors: CREATE_ERRORS },
    family({
      shape: mediaJobShape((t: ImageTask) => imageJobView(ctx, t), jobDoc),
      paths: { list: IMAGE_PATHS.jobs, one: IMAGE_PATHS.job },
      summaries: { create: 'Create an image job (requires Idempotency-Key); API quota is pre-deducted', list: 'List image jobs, newest first', read: 'Read an image job' },
      create: { body: imageJobBody, scope: 'media-images-jobs', requireKey: true, run: createJob },
    }),
    family({
      shape: flatShape((t: ImageTask) => imageTaskView(ctx, t), taskDoc),
      paths: { list: IMAGE_PATHS.tasks, one: IMAGE_PATHS.task },
      summaries: { create: 'Create an image task; API quota is pre-deducted', list: 'List image tasks, newest first', read: 'Read an image task' },
      create: { body: imageTaskBody, scope: 'images-tasks', requireKey: false, run: createTask },
    }),
  );

  return { runner, routes };
}
