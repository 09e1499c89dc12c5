/**
 * Lip-sync (spec 2.7, 2.8, 3.4, 4.7, 9) over one task runner, in three route
 * families (a task created in one is readable in the others):
 * - media jobs, in the `{ success, message, data }` envelope:
 *   `POST {base_url}/media/lip-sync/jobs` (`video_url`, `audio_url`; create
 *   answers `data: { id, status: 'pending' }`), `GET .../jobs?page&limit&status`,
 *   `GET .../jobs/{jobId}`; states pending, processing, completed, failed;
 * - tasks: `POST|GET {base_url}/lip-sync/tasks`, `GET .../tasks/{taskId}`,
 *   `inputMode` `video` (`videoUrl`) or `image` (`imageUrl`, optional
 *   `referenceImageUrl`), `audioUrl`, `durationSeconds`; result `resultVideoUrl`;
 * - legacy (hidden): `POST /api/open/lip-sync/create`, `GET /api/open/lip-sync/list`,
 *   `GET /api/open/lip-sync/query?id=`, in the envelope.
 *
 * The inputs are fetched and probed at create, so a URL that is refused or
 * unreachable answers 400 and media that is reachable but not processable
 * (a non-audio file as audio, an audio file as video) answers 422 before
 * anything is charged. API quota per started second of the result is
 * pre-deducted and refunded if the job fails. Needs ffmpeg and ffprobe
 * (503 `capability_unavailable` without them).
 */
import { z } from 'zod';
import type { ServerContext } from '../../context.js';
import { badRequest, HttpError } from '../../http/errors.js';
import { defineRoute, type RouteContext, type RouteDef } from '../../http/router.js';
import { lipSync } from '../../media-engines/lipsync-engine.js';
import { isStillImage, probeBytes, type MediaProbe } from '../../media-engines/probe.js';
import { hasFfmpeg, mediaToolsOf } from '../../media-engines/tools.js';
import { PublicUrlErrorKind } from '../../net/public-url.js';
import type { Account } from '../../store/types.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { TaskFailure, TaskRunner, type Task } from '../common/task-runner.js';
import { DEFAULT_LIPSYNC_MODEL, LIPSYNC_MODELS, MediaCapability, MediaErrorCode, perSecondQuota, pickModel, type LipSyncModel } from './catalog.js';
import { CREATE_ERRORS_WITH_TOOL, family, familyRoutes, flatShape, listReply, mediaJobShape, READ_ERRORS, readReply, type FamilyShape } from './family.js';
import { checkUrlField, engineFailure, engineFaults, fetchField, fetchForTask, unavailable, unprocessable } from './inputs.js';
import { resultFileUrl, type MediaFiles } from './results.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';
import {
  flatHead,
  flatHeadDoc,
  mediaJobHead,
  mediaJobHeadDoc,
  mediaJobListQuery,
  mediaJobPaginationDoc,
  mediaJobStatus,
  MediaJobStatus,
  taskMeta,
  taskMetaDoc,
  type MediaJobListQuery,
} from './views.js';

export const LIPSYNC_PATHS = {
  jobs: serverPath(REST_ROUTES.lipsyncJobs),
  job: serverPath(`${REST_ROUTES.lipsyncJobs}/{jobId}`),
  tasks: serverPath(REST_ROUTES.lipsyncTasks),
  task: serverPath(`${REST_ROUTES.lipsyncTasks}/{taskId}`),
  legacyCreate: '/api/open/lip-sync/create',
  legacyList: '/api/open/lip-sync/list',
  legacyQuery: '/api/open/lip-sync/query',
} as const;

/** Largest input fetched (video, image or audio): 50 MiB. */
const LIPSYNC_INPUT_MAX_BYTES = 50 * 1024 * 1024;

export const InputMode = { video: 'video', image: 'image' } as const;
export type InputMode = (typeof InputMode)[keyof typeof InputMode];

export interface LipSyncInput {
  model: string;
  inputMode: InputMode;
  videoUrl: string | null;
  imageUrl: string | null;
  /** Checked and kept; the local engine does not use it. */
  referenceImageUrl: string | null;
  audioUrl: string;
  /** Length of the result (the audio's, or the shorter `durationSeconds` asked for). */
  durationSeconds: number;
  /**
   * Set when an input host did not resolve at create: the inputs are fetched
   * by the worker, `durationSeconds` is then the most the task may last (what
   * was asked, or the model's limit, and what was held), and the worker
   * charges the length it makes (the rest is given back).
   */
  deferred?: { maxSeconds: number; askedSeconds: number | null; quotaPerSecond: number };
}

export interface LipSyncResult {
  fileId: string;
  bytes: number;
  width: number;
  height: number;
  /** Length made, when the inputs were fetched by the worker (`LipSyncInput.deferred`). */
  durationSeconds?: number;
}

export type LipSyncTask = Task<LipSyncInput, LipSyncResult>;

/** Inputs fetched and probed at create, handed to the worker so they are not fetched twice. */
interface Fetched {
  visual: Buffer;
  visualProbe: MediaProbe;
  audio: Buffer;
}

const url = z.string().min(1).max(4096);

/** `POST /media/lip-sync/jobs` (spec 4.7). */
export const lipSyncJobBody = z.object({
  video_url: url.meta({ description: 'Public URL of the source video (signed short-lived URLs allowed).' }),
  audio_url: url.meta({ description: 'Public URL of the audio to sync.' }),
  model: z.string().min(1).max(128).optional(),
});
export type LipSyncJobBody = z.infer<typeof lipSyncJobBody>;

/** `POST /lip-sync/tasks` (spec 4.7). */
export const lipSyncTaskBody = z.object({
  model: z.string().min(1).max(128).optional().meta({ description: `Default ${DEFAULT_LIPSYNC_MODEL}.` }),
  inputMode: z.enum(Object.values(InputMode)).optional().meta({ description: 'video (videoUrl) or image (imageUrl); default video.' }),
  videoUrl: url.optional(),
  imageUrl: url.optional(),
  referenceImageUrl: url.optional(),
  audioUrl: url,
  durationSeconds: z.number().positive().max(3600).optional().meta({ description: 'Length of the result in seconds; default (and at most) the audio length.' }),
});
export type LipSyncTaskBody = z.infer<typeof lipSyncTaskBody>;

/** Legacy create: the media-job fields, camelCase spellings accepted, image mode by `image_url`. */
export const legacyLipSyncBody = z.object({
  video_url: url.optional(),
  videoUrl: url.optional(),
  image_url: url.optional(),
  imageUrl: url.optional(),
  audio_url: url.optional(),
  audioUrl: url.optional(),
  model: z.string().min(1).max(128).optional(),
});
export type LegacyLipSyncBody = z.infer<typeof legacyLipSyncBody>;

export const legacyQuery = z.object({ id: z.string().min(1).max(128) });
export type LegacyQuery = z.infer<typeof legacyQuery>;

const nullableString = z.string().nullable();
const jobDataDoc = z.object({
  ...mediaJobHeadDoc,
  model: z.string(),
  inputMode: z.enum(Object.values(InputMode)),
  videoUrl: nullableString,
  imageUrl: nullableString,
  audioUrl: z.string(),
  durationSeconds: z.number(),
  resultUrl: nullableString,
  result: z.object({ url: z.string(), videoUrl: z.string(), contentType: z.string(), durationSeconds: z.number(), width: z.number().int(), height: z.number().int(), bytes: z.number().int(), hasAudio: z.boolean() }).nullable(),
  ...taskMetaDoc,
});
const envelopeDoc = (data: z.ZodType) => z.object({ success: z.boolean(), message: z.string(), data });
const taskDoc = z.object({
  ...flatHeadDoc('lipsync'),
  model: z.string(),
  inputMode: z.enum(Object.values(InputMode)),
  videoUrl: nullableString,
  imageUrl: nullableString,
  referenceImageUrl: nullableString,
  audioUrl: z.string(),
  durationSeconds: z.number(),
  resultVideoUrl: nullableString,
  ...taskMetaDoc,
});

/** `data` of a media lip-sync job (spec 2.8: result metadata when completed, error code or message when failed). */
export function lipSyncJobData(ctx: ServerContext, task: LipSyncTask) {
  const i = task.input;
  const resultUrl = resultFileUrl(ctx, task);
  const r = task.result;
  return {
    ...mediaJobHead(task),
    model: i.model,
    inputMode: i.inputMode,
    videoUrl: i.videoUrl,
    imageUrl: i.imageUrl,
    audioUrl: i.audioUrl,
    durationSeconds: r?.durationSeconds ?? i.durationSeconds,
    resultUrl,
    result: resultUrl && r ? { url: resultUrl, videoUrl: resultUrl, contentType: 'video/mp4', durationSeconds: r.durationSeconds ?? i.durationSeconds, width: r.width, height: r.height, bytes: r.bytes, hasAudio: true } : null,
    ...taskMeta(task),
  };
}

/** A lip-sync task (spec 2.7). */
export function lipSyncTaskView(ctx: ServerContext, task: LipSyncTask) {
  const i = task.input;
  return {
    ...flatHead(task, 'lipsync'),
    model: i.model,
    inputMode: i.inputMode,
    videoUrl: i.videoUrl,
    imageUrl: i.imageUrl,
    referenceImageUrl: i.referenceImageUrl,
    audioUrl: i.audioUrl,
    durationSeconds: task.result?.durationSeconds ?? i.durationSeconds,
    resultVideoUrl: resultFileUrl(ctx, task),
    ...taskMeta(task),
  };
}

const envelope = (message: string, data: unknown) => ({ success: true, message, data });

/**
 * The media-jobs family of lip-sync, in the `{ success, message, data }`
 * envelope: create answers `data: { id, status }`, a page keeps
 * `pagination` beside the envelope.
 */
function envelopeJobShape(ctx: ServerContext): FamilyShape<LipSyncTask, MediaJobListQuery> {
  const plain = mediaJobShape((t: LipSyncTask) => lipSyncJobData(ctx, t), jobDataDoc);
  return {
    ...plain,
    created: (task) => ({ status: 202, json: envelope('lip-sync job accepted', { id: task.taskId, status: mediaJobStatus(task) }) }),
    page: (page) => ({ success: true, message: 'ok', ...plain.page(page) }),
    one: (task) => envelope('ok', plain.one(task)),
    docs: {
      created: { description: 'Accepted', schema: envelopeDoc(z.object({ id: z.string(), status: z.enum(Object.values(MediaJobStatus)) })) },
      page: { description: 'A page of jobs', schema: z.object({ success: z.boolean(), message: z.string(), data: z.array(jobDataDoc), pagination: mediaJobPaginationDoc }) },
      one: { description: 'The job', schema: envelopeDoc(jobDataDoc) },
    },
  };
}

/** What a create asks for, whichever family it came through. */
interface LipSyncRequest {
  model: string | undefined;
  inputMode: InputMode;
  videoUrl: string | undefined;
  imageUrl: string | undefined;
  referenceImageUrl: string | undefined;
  audioUrl: string | undefined;
  durationSeconds: number | undefined;
  /** Field names as the family spells them, for messages. */
  fields: { video: string; image: string; audio: string };
}

export interface LipSyncFamily {
  runner: TaskRunner<LipSyncInput, LipSyncResult>;
  routes: RouteDef<never, never>[];
  close(): void;
}

export function lipSyncFamily(ctx: ServerContext, files: MediaFiles, idempotency: IdempotencyStore): LipSyncFamily {
  const fetched = new Map<string, Fetched>();

  /** Fetch and probe both inputs; 400 when a fetch fails, 422 when reachable media is unprocessable. */
  async function fetchInputs(r: LipSyncRequest, visualUrl: string, audioUrl: string, ffprobe: string): Promise<Fetched & { audioSeconds: number }> {
    const visualField = r.inputMode === InputMode.video ? r.fields.video : r.fields.image;
    const [visual, audio] = await Promise.all([
      fetchField(ctx, visualField, visualUrl, { maxBytes: LIPSYNC_INPUT_MAX_BYTES }),
      fetchField(ctx, r.fields.audio, audioUrl, { maxBytes: LIPSYNC_INPUT_MAX_BYTES }),
    ]);
    const probe = async (field: string, data: Buffer): Promise<MediaProbe> => {
      try {
        return await probeBytes(ffprobe, data);
      } catch {
        throw unprocessable(field, 'is not a media file this service can read');
      }
    };
    const [visualProbe, audioProbe] = await Promise.all([probe(visualField, visual), probe(r.fields.audio, audio)]);
    if (!audioProbe.audio || !audioProbe.durationSeconds) throw unprocessable(r.fields.audio, 'holds no audio track');
    if (!visualProbe.video) throw unprocessable(visualField, r.inputMode === InputMode.video ? 'holds no video track' : 'is not an image');
    if (r.inputMode === InputMode.image && !isStillImage(visualProbe)) throw unprocessable(visualField, 'is not a still image (use inputMode video for videos)');
    return { visual, visualProbe, audio, audioSeconds: audioProbe.durationSeconds };
  }

  async function create(c: RouteContext<unknown, unknown>, account: Account, r: LipSyncRequest): Promise<LipSyncTask> {
    const tools = mediaToolsOf(ctx);
    if (!hasFfmpeg(tools)) throw unavailable('lip-sync', 'ffmpeg is not installed (on Debian: apt-get install ffmpeg)');
    const m: LipSyncModel = pickModel(LIPSYNC_MODELS, r.model, DEFAULT_LIPSYNC_MODEL);
    if (r.audioUrl === undefined) throw badRequest(`${r.fields.audio} is required`, { field: r.fields.audio });
    if (r.inputMode === InputMode.video) {
      if (r.videoUrl === undefined) throw badRequest(`${r.fields.video} is required in video mode`, { field: r.fields.video });
      if (r.imageUrl !== undefined) throw badRequest(`${r.fields.image} belongs to image mode`, { field: r.fields.image });
    } else {
      if (r.imageUrl === undefined) throw badRequest(`${r.fields.image} is required in image mode`, { field: r.fields.image });
      if (r.videoUrl !== undefined) throw badRequest(`${r.fields.video} belongs to video mode`, { field: r.fields.video });
    }
    const visualField = r.inputMode === InputMode.video ? r.fields.video : r.fields.image;
    const visualUrl = await checkUrlField(ctx, visualField, (r.videoUrl ?? r.imageUrl)!);
    const audioUrl = await checkUrlField(ctx, r.fields.audio, r.audioUrl);
    const referenceImageUrl = r.referenceImageUrl === undefined ? null : await checkUrlField(ctx, 'referenceImageUrl', r.referenceImageUrl);
    let inputs: (Fetched & { audioSeconds: number }) | undefined;
    try {
      inputs = await fetchInputs(r, visualUrl, audioUrl, tools.ffprobe);
    } catch (err) {
      // A public host that does not resolve right now is accepted, as on the other
      // media routes: the worker fetches, and the task fails (refunded) if it still does not.
      if (!(err instanceof HttpError && err.extra['reason'] === PublicUrlErrorKind.unresolvable)) throw err;
    }
    if (!inputs) {
      const most = Math.min(r.durationSeconds ?? m.maxSeconds, m.maxSeconds);
      const input: LipSyncInput = {
        model: m.id,
        inputMode: r.inputMode,
        videoUrl: r.inputMode === InputMode.video ? visualUrl : null,
        imageUrl: r.inputMode === InputMode.image ? visualUrl : null,
        referenceImageUrl,
        audioUrl,
        durationSeconds: most,
        deferred: { maxSeconds: m.maxSeconds, askedSeconds: r.durationSeconds ?? null, quotaPerSecond: m.quotaPerSecond },
      };
      return runner.create(account, input, { charge: { currency: 'quota', amount: perSecondQuota(most, m.quotaPerSecond), reason: `lip-sync ${m.id}` }, requestId: c.requestId });
    }
    if (inputs.audioSeconds > m.maxSeconds && (r.durationSeconds === undefined || r.durationSeconds > m.maxSeconds)) {
      throw unprocessable(r.fields.audio, `lasts ${inputs.audioSeconds.toFixed(1)} s; model ${m.id} makes at most ${m.maxSeconds} s (set durationSeconds to cut it)`);
    }
    const durationSeconds = Math.round(Math.min(inputs.audioSeconds, r.durationSeconds ?? Infinity, m.maxSeconds) * 1000) / 1000;
    const input: LipSyncInput = {
      model: m.id,
      inputMode: r.inputMode,
      videoUrl: r.inputMode === InputMode.video ? visualUrl : null,
      imageUrl: r.inputMode === InputMode.image ? visualUrl : null,
      referenceImageUrl,
      audioUrl,
      durationSeconds,
    };
    const task = await runner.create(account, input, { charge: { currency: 'quota', amount: perSecondQuota(durationSeconds, m.quotaPerSecond), reason: `lip-sync ${m.id}` }, requestId: c.requestId });
    fetched.set(task.taskId, { visual: inputs.visual, visualProbe: inputs.visualProbe, audio: inputs.audio });
    return task;
  }

  const runner = new TaskRunner<LipSyncInput, LipSyncResult>(ctx, {
    type: 'lipsync',
    idPrefix: 'lip',
    async worker({ task, signal }) {
      const i = task.input;
      let inputs = fetched.get(task.taskId);
      fetched.delete(task.taskId);
      await engineFaults(ctx, `${i.audioUrl} ${i.videoUrl ?? i.imageUrl}`, signal);
      const tools = mediaToolsOf(ctx);
      if (!hasFfmpeg(tools)) throw new TaskFailure(MediaErrorCode.generationFailed, 'lip-sync is no longer available on this server (ffmpeg missing)');
      if (!inputs) {
        // Created by another process sharing the store, or with a host that did not resolve then: fetch now.
        const visualUrl = (i.videoUrl ?? i.imageUrl)!;
        const [visual, audio] = await Promise.all([fetchForTask(ctx, 'visual input', visualUrl, { maxBytes: LIPSYNC_INPUT_MAX_BYTES, signal }), fetchForTask(ctx, 'audioUrl', i.audioUrl, { maxBytes: LIPSYNC_INPUT_MAX_BYTES, signal })]);
        try {
          inputs = { visual, audio, visualProbe: await probeBytes(tools.ffprobe, visual, signal) };
        } catch (err) {
          throw new TaskFailure(MediaErrorCode.unprocessable, `the visual input is not readable media (${(err as Error).message})`);
        }
      }
      let durationSeconds = i.durationSeconds;
      let charge: number | undefined;
      if (i.deferred) {
        // What create would have checked, now that the inputs are here.
        const audioSeconds = await probeBytes(tools.ffprobe, inputs.audio, signal).then(
          (p) => (p.audio ? p.durationSeconds : undefined),
          () => undefined,
        );
        if (!audioSeconds) throw new TaskFailure(MediaErrorCode.unprocessable, 'audioUrl holds no audio track');
        if (audioSeconds > i.deferred.maxSeconds && (i.deferred.askedSeconds === null || i.deferred.askedSeconds > i.deferred.maxSeconds)) {
          throw new TaskFailure(MediaErrorCode.unprocessable, `audioUrl lasts ${audioSeconds.toFixed(1)} s; model ${i.model} makes at most ${i.deferred.maxSeconds} s (set durationSeconds to cut it)`);
        }
        durationSeconds = Math.round(Math.min(audioSeconds, i.deferred.askedSeconds ?? Infinity, i.deferred.maxSeconds) * 1000) / 1000;
        charge = perSecondQuota(durationSeconds, i.deferred.quotaPerSecond);
      }
      try {
        const out = await lipSync({ ffmpeg: tools.ffmpeg, visual: inputs.visual, visualProbe: inputs.visualProbe, still: i.inputMode === InputMode.image || isStillImage(inputs.visualProbe), audio: inputs.audio, durationSeconds, signal });
        const file = files.put(task.userId, 'video/mp4', `${task.taskId}.mp4`, out.mp4);
        const result: LipSyncResult = { fileId: file.id, bytes: out.mp4.length, width: out.width, height: out.height };
        if (i.deferred) result.durationSeconds = durationSeconds;
        return charge === undefined ? { result } : { result, charge };
      } catch (err) {
        throw engineFailure(err, 'lip-sync');
      }
    },
  });

  const fromJobBody = (b: LipSyncJobBody): LipSyncRequest => ({
    model: b.model,
    inputMode: InputMode.video,
    videoUrl: b.video_url,
    imageUrl: undefined,
    referenceImageUrl: undefined,
    audioUrl: b.audio_url,
    durationSeconds: undefined,
    fields: { video: 'video_url', image: 'image_url', audio: 'audio_url' },
  });
  const fromTaskBody = (b: LipSyncTaskBody): LipSyncRequest => ({
    model: b.model,
    inputMode: b.inputMode ?? InputMode.video,
    videoUrl: b.videoUrl,
    imageUrl: b.imageUrl,
    referenceImageUrl: b.referenceImageUrl,
    audioUrl: b.audioUrl,
    durationSeconds: b.durationSeconds,
    fields: { video: 'videoUrl', image: 'imageUrl', audio: 'audioUrl' },
  });
  const fromLegacyBody = (b: LegacyLipSyncBody): LipSyncRequest => {
    const imageUrl = b.image_url ?? b.imageUrl;
    return {
      model: b.model,
      inputMode: imageUrl !== undefined && (b.video_url ?? b.videoUrl) === undefined ? InputMode.image : InputMode.video,
      videoUrl: b.video_url ?? b.videoUrl,
      imageUrl,
      referenceImageUrl: undefined,
      audioUrl: b.audio_url ?? b.audioUrl,
      durationSeconds: undefined,
      fields: { video: 'video_url', image: 'image_url', audio: 'audio_url' },
    };
  };

  const jobs = envelopeJobShape(ctx);
  const common = { tags: ['lip-sync'], capability: MediaCapability.lipsync };

  const routes = [
    ...familyRoutes(
      { runner, idempotency, common, createErrors: CREATE_ERRORS_WITH_TOOL },
      family({
        shape: jobs,
        paths: { list: LIPSYNC_PATHS.jobs, one: LIPSYNC_PATHS.job },
        summaries: { create: 'Create a lip-sync job from a video and an audio URL; API quota is pre-deducted', list: 'List lip-sync jobs, newest first', read: 'Read a lip-sync job (terminal states never change)' },
        create: { body: lipSyncJobBody, scope: 'media-lip-sync-jobs', requireKey: false, run: (c) => create(c, c.account, fromJobBody(c.body)) },
      }),
      family({
        shape: flatShape((t: LipSyncTask) => lipSyncTaskView(ctx, t), taskDoc),
        paths: { list: LIPSYNC_PATHS.tasks, one: LIPSYNC_PATHS.task },
        summaries: { create: 'Create a lip-sync task (video or image input mode); API quota is pre-deducted', list: 'List lip-sync tasks, newest first', read: 'Read a lip-sync task' },
        create: { body: lipSyncTaskBody, scope: 'lip-sync-tasks', requireKey: false, run: (c) => create(c, c.account, fromTaskBody(c.body)) },
      }),
    ),
    defineRoute<LegacyLipSyncBody, unknown>({
      ...common,
      method: 'POST',
      path: LIPSYNC_PATHS.legacyCreate,
      summary: 'Legacy lip-sync create (now POST /media/lip-sync/jobs)',
      hidden: true,
      body: legacyLipSyncBody,
      responses: { 202: jobs.docs.created, ...CREATE_ERRORS_WITH_TOOL },
      handler: (c) => idempotency.run(c.account, 'legacy-lip-sync-create', idempotencyKeyOf(c.req.headers), c.body, async () => jobs.created(await create(c, c.account, fromLegacyBody(c.body)))),
    }),
    defineRoute<unknown, MediaJobListQuery>({
      ...common,
      method: 'GET',
      path: LIPSYNC_PATHS.legacyList,
      summary: 'Legacy lip-sync list (now GET /media/lip-sync/jobs)',
      hidden: true,
      query: mediaJobListQuery,
      responses: { 200: jobs.docs.page, ...READ_ERRORS },
      handler: ({ account, query }) => listReply(runner, jobs, account, query),
    }),
    defineRoute<unknown, LegacyQuery>({
      ...common,
      method: 'GET',
      path: LIPSYNC_PATHS.legacyQuery,
      summary: 'Legacy lip-sync detail (now GET /media/lip-sync/jobs/{jobId})',
      hidden: true,
      query: legacyQuery,
      responses: { 200: jobs.docs.one, ...READ_ERRORS },
      handler: ({ account, query }) => readReply(runner, jobs, account, query.id),
    }),
  ] as unknown as RouteDef<never, never>[];

  return { runner, routes, close: () => fetched.clear() };
}
