/**
 * Video generation (spec 2.7, 2.8, 3.3, 4.6) over one task runner, in both
 * route families (a task created in one is readable in the other):
 * - media jobs: `POST {base_url}/media/videos/jobs` (required
 *   `Idempotency-Key`), `GET .../jobs/{jobId}`, and a list `GET .../jobs`;
 *   body `prompt`, `model`, `seconds`, `size` (`<w>x<h>`), `references`
 *   (`{ role: start_frame | end_frame | reference, url }`); states pending,
 *   processing, completed, failed;
 * - tasks: `POST|GET {base_url}/videos/tasks`, `GET .../tasks/{taskId}`; body
 *   `prompt`, `model`, `aspectRatio`, `size`, `duration`, `firstFrameUrl`,
 *   `lastFrameUrl`, `seed`, `referenceImageUrls`; result `resultVideoUrl`.
 * API quota is pre-deducted per started second and refunded when the job
 * fails. The engine (video-engine.ts) needs ffmpeg; without it, create
 * answers 503 `capability_unavailable`.
 */
import { z } from 'zod';
import { LIMITS } from '../../../protocol/limits.js';
import type { ServerContext } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import type { RouteContext, RouteDef } from '../../http/router.js';
import { decodePicture, parseSize, sizeForAspect } from '../../media-engines/image-engine.js';
import type { RgbImage } from '../../media-engines/png.js';
import { hasFfmpeg, mediaToolsOf } from '../../media-engines/tools.js';
import { generateVideo } from '../../media-engines/video-engine.js';
import type { IdempotencyStore } from '../common/idempotency.js';
import { TaskFailure, TaskRunner, type Task } from '../common/task-runner.js';
import { checkAspect, MediaCapability, MediaErrorCode, perSecondQuota, pickModel, VIDEO_MODELS, type VideoModel } from './catalog.js';
import { CREATE_ERRORS_WITH_TOOL, family, familyRoutes, flatShape, mediaJobShape } from './family.js';
import { checkUrlField, checkUrlList, engineFailure, engineFaults, fetchForTask, unavailable } from './inputs.js';
import { resultFileUrl, type MediaFiles } from './results.js';
import { flatHead, flatHeadDoc, mediaJobHead, mediaJobHeadDoc, taskMeta, taskMetaDoc } from './views.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const VIDEO_PATHS = {
  jobs: serverPath(REST_ROUTES.videoJobs),
  job: serverPath(`${REST_ROUTES.videoJobs}/{jobId}`),
  tasks: serverPath(REST_ROUTES.videoTasks),
  task: serverPath(`${REST_ROUTES.videoTasks}/{taskId}`),
} as const;

/** Largest frame image fetched: 20 MiB. */
const FRAME_MAX_BYTES = 20 * 1024 * 1024;

export const ReferenceRole = { startFrame: 'start_frame', endFrame: 'end_frame', reference: 'reference' } as const;

export interface VideoInput {
  prompt: string;
  model: string;
  width: number;
  height: number;
  seconds: number;
  aspectRatio: string | null;
  seed: number | null;
  startFrameUrl: string | null;
  endFrameUrl: string | null;
  /** Reference images: checked and kept, not used by the local engine. */
  referenceImageUrls: string[];
}

export interface VideoResult {
  fileId: string;
  bytes: number;
}

export type VideoTask = Task<VideoInput, VideoResult>;

const prompt = z.string().trim().min(1).max(4000).meta({ description: 'What to show, 1 to 4000 characters.' });
const model = z.string().min(1).max(128).optional().meta({ description: `Video model; default ${VIDEO_MODELS[0]!.id}. See GET /media/models?mediaType=video.` });
const url = z.string().min(1).max(4096);
const size = z.string().min(1).max(16).optional().meta({ description: 'Pixel size <w>x<h>, e.g. 640x360.' });
const seconds = z.number().positive().max(60).optional();

/** `POST /media/videos/jobs`. */
export const videoJobBody = z.object({
  prompt,
  model,
  seconds: seconds.meta({ description: 'Length in seconds (per model; default 4).' }),
  size,
  aspect_ratio: z.string().min(1).max(16).optional().meta({ description: 'Width:height when size is absent.' }),
  references: z.array(z.object({ role: z.enum(Object.values(ReferenceRole)), url })).max(LIMITS.referenceImageUrlsMax + 2).optional().meta({ description: 'Frames and references by role.' }),
});
export type VideoJobBody = z.infer<typeof videoJobBody>;

/** `POST /videos/tasks`. */
export const videoTaskBody = z.object({
  prompt,
  model,
  aspectRatio: z.string().min(1).max(16).optional().meta({ description: 'Width:height when size is absent, e.g. 16:9.' }),
  size,
  duration: seconds.meta({ description: 'Length in seconds (per model; default 4).' }),
  firstFrameUrl: url.optional(),
  lastFrameUrl: url.optional(),
  seed: z.number().int().min(0).max(2 ** 32 - 1).optional().meta({ description: 'Varies the result for the same prompt.' }),
  referenceImageUrls: z.array(url).max(LIMITS.referenceImageUrlsMax).optional(),
});
export type VideoTaskBody = z.infer<typeof videoTaskBody>;

const nullableString = z.string().nullable();
const jobDoc = z.object({
  ...mediaJobHeadDoc,
  model: z.string(),
  prompt: z.string(),
  seconds: z.number(),
  size: z.string(),
  resultUrl: nullableString,
  result: z.object({ url: z.string(), width: z.number().int(), height: z.number().int(), durationSeconds: z.number(), contentType: z.string(), bytes: z.number().int() }).nullable(),
  ...taskMetaDoc,
});
const taskDoc = z.object({
  ...flatHeadDoc('video'),
  model: z.string(),
  prompt: z.string(),
  aspectRatio: nullableString,
  size: z.string(),
  duration: z.number(),
  seed: z.number().int().nullable(),
  firstFrameUrl: nullableString,
  lastFrameUrl: nullableString,
  referenceImageUrls: z.array(z.string()),
  resultVideoUrl: nullableString,
  ...taskMetaDoc,
});

/** A media video job (spec 2.8, 3.3). */
export function videoJobView(ctx: ServerContext, task: VideoTask) {
  const resultUrl = resultFileUrl(ctx, task);
  const i = task.input;
  return {
    ...mediaJobHead(task),
    model: i.model,
    prompt: i.prompt,
    seconds: i.seconds,
    size: `${i.width}x${i.height}`,
    resultUrl,
    result: resultUrl && task.result ? { url: resultUrl, width: i.width, height: i.height, durationSeconds: i.seconds, contentType: 'video/mp4', bytes: task.result.bytes } : null,
    ...taskMeta(task),
  };
}

/** A video task (spec 2.7). */
export function videoTaskView(ctx: ServerContext, task: VideoTask) {
  const i = task.input;
  return {
    ...flatHead(task, 'video'),
    model: i.model,
    prompt: i.prompt,
    aspectRatio: i.aspectRatio,
    size: `${i.width}x${i.height}`,
    duration: i.seconds,
    seed: i.seed,
    firstFrameUrl: i.startFrameUrl,
    lastFrameUrl: i.endFrameUrl,
    referenceImageUrls: i.referenceImageUrls,
    resultVideoUrl: resultFileUrl(ctx, task),
    ...taskMeta(task),
  };
}

/** Output size from `size` (`<w>x<h>`), else `aspectRatio`, else the model's default; even sides. */
function dimensions(m: VideoModel, sizeText: string | undefined, aspect: string | undefined): { width: number; height: number; aspectRatio: string | null } {
  const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));
  if (sizeText !== undefined) {
    const px = parseSize(sizeText);
    if (!px) throw badRequest(`size must be <width>x<height>, e.g. ${m.defaultSize}`, { field: 'size' });
    if (Math.min(px.width, px.height) < m.minSide || Math.max(px.width, px.height) > m.maxSide) throw badRequest(`size sides must be from ${m.minSide} to ${m.maxSide} pixels`, { field: 'size' });
    return { width: even(px.width), height: even(px.height), aspectRatio: aspect ?? null };
  }
  const longSide = Math.max(...Object.values(parseSize(m.defaultSize)!));
  if (aspect !== undefined) {
    checkAspect(m, aspect);
    return { ...sizeForAspect(aspect, longSide), aspectRatio: aspect };
  }
  return { ...parseSize(m.defaultSize)!, aspectRatio: null };
}

function secondsOf(m: VideoModel, value: number | undefined): number {
  const s = value ?? m.defaultSeconds;
  if (s < m.minSeconds || s > m.maxSeconds) throw badRequest(`model ${m.id} makes videos of ${m.minSeconds} to ${m.maxSeconds} seconds, not ${s}`);
  return s;
}

export interface VideoFamily {
  runner: TaskRunner<VideoInput, VideoResult>;
  routes: RouteDef<never, never>[];
}

export function videoFamily(ctx: ServerContext, files: MediaFiles, idempotency: IdempotencyStore): VideoFamily {
  const runner = new TaskRunner<VideoInput, VideoResult>(ctx, {
    type: 'video',
    idPrefix: 'vid',
    async worker({ task, signal }) {
      const i = task.input;
      await engineFaults(ctx, i.prompt, signal);
      const tools = mediaToolsOf(ctx);
      if (!hasFfmpeg(tools)) throw new TaskFailure(MediaErrorCode.generationFailed, 'video generation is no longer available on this server (ffmpeg missing)');
      const frame = async (field: string, source: string | null): Promise<RgbImage | undefined> => {
        if (source === null) return undefined;
        const data = await fetchForTask(ctx, field, source, { maxBytes: FRAME_MAX_BYTES, signal });
        try {
          return await decodePicture(data, i.width, i.height, tools.ffmpeg, signal);
        } catch (err) {
          throw engineFailure(err, field);
        }
      };
      const startFrame = await frame('start frame', i.startFrameUrl);
      const endFrame = await frame('end frame', i.endFrameUrl);
      let mp4: Buffer;
      try {
        const patternPrompt = i.seed === null ? i.prompt : `${i.prompt}\u0000seed:${i.seed}`;
        mp4 = await generateVideo({ ffmpeg: tools.ffmpeg, prompt: patternPrompt, width: i.width, height: i.height, seconds: i.seconds, startFrame, endFrame, signal });
      } catch (err) {
        throw engineFailure(err, 'video generation');
      }
      const file = files.put(task.userId, 'video/mp4', `${task.taskId}.mp4`, mp4);
      return { result: { fileId: file.id, bytes: mp4.length } };
    },
  });

  function requireFfmpeg(): void {
    if (!hasFfmpeg(mediaToolsOf(ctx))) throw unavailable('video generation', 'ffmpeg is not installed (on Debian: apt-get install ffmpeg)');
  }

  function create(c: RouteContext<unknown, unknown>, input: VideoInput, m: VideoModel): Promise<VideoTask> {
    return runner.create(c.account, input, { charge: { currency: 'quota', amount: perSecondQuota(input.seconds, m.quotaPerSecond), reason: `video ${m.id}` }, requestId: c.requestId });
  }

  /** What both creates check first: ffmpeg, the model, the length and the size. */
  function basics(b: { prompt: string; model?: string | undefined; size?: string | undefined }, secondsAsked: number | undefined, aspect: string | undefined) {
    requireFfmpeg();
    const m = pickModel(VIDEO_MODELS, b.model, VIDEO_MODELS[0]!.id);
    const seconds = secondsOf(m, secondsAsked);
    return { m, input: { prompt: b.prompt, model: m.id, ...dimensions(m, b.size, aspect), seconds } };
  }

  async function createJob(c: RouteContext<VideoJobBody, unknown>): Promise<VideoTask> {
    const b = c.body;
    const { m, input } = basics(b, b.seconds, b.aspect_ratio);
    const refs = b.references ?? [];
    const one = (role: string) => {
      const found = refs.filter((r) => r.role === role);
      if (found.length > 1) throw badRequest(`references may hold one ${role}`);
      return found[0]?.url;
    };
    const start = one(ReferenceRole.startFrame);
    const end = one(ReferenceRole.endFrame);
    const others = refs.filter((r) => r.role === ReferenceRole.reference).map((r) => r.url);
    if (others.length > LIMITS.referenceImageUrlsMax) throw badRequest(`references may hold at most ${LIMITS.referenceImageUrlsMax} of role reference`);
    const full: VideoInput = {
      ...input,
      seed: null,
      startFrameUrl: start === undefined ? null : await checkUrlField(ctx, 'references(start_frame)', start),
      endFrameUrl: end === undefined ? null : await checkUrlField(ctx, 'references(end_frame)', end),
      referenceImageUrls: await checkUrlList(ctx, 'references(reference)', others),
    };
    return create(c, full, m);
  }

  async function createTask(c: RouteContext<VideoTaskBody, unknown>): Promise<VideoTask> {
    const b = c.body;
    const { m, input } = basics(b, b.duration, b.aspectRatio);
    const full: VideoInput = {
      ...input,
      seed: b.seed ?? null,
      startFrameUrl: b.firstFrameUrl === undefined ? null : await checkUrlField(ctx, 'firstFrameUrl', b.firstFrameUrl),
      endFrameUrl: b.lastFrameUrl === undefined ? null : await checkUrlField(ctx, 'lastFrameUrl', b.lastFrameUrl),
      referenceImageUrls: await checkUrlList(ctx, 'referenceImageUrls', b.referenceImageUrls ?? []),
    };
    return create(c, full, m);
  }

  const routes = familyRoutes(
    { runner, idempotency, common: { tags: ['videos'], capability: MediaCapability.video }, createErrors: CREATE_ERRORS_WITH_TOOL },
    family({
      shape: mediaJobShape((t: VideoTask) => videoJobView(ctx, t), jobDoc),
      paths: { list: VIDEO_PATHS.jobs, one: VIDEO_PATHS.job },
      summaries: { create: 'Create a video job (requires Idempotency-Key); API quota is pre-deducted', list: 'List video jobs, newest first', read: 'Read a video job' },
      create: { body: videoJobBody, scope: 'media-videos-jobs', requireKey: true, run: createJob },
    }),
    family({
      shape: flatShape((t: VideoTask) => videoTaskView(ctx, t), taskDoc),
      paths: { list: VIDEO_PATHS.tasks, one: VIDEO_PATHS.task },
      summaries: { create: 'Create a video task; API quota is pre-deducted', list: 'List video tasks, newest first', read: 'Read a video task' },
      create: { body: videoTaskBody, scope: 'videos-tasks', requireKey: false, run: createTask },
    }),
  );

  return { runner, routes };
}
