/**
 * Asynchronous TTS (spec 4.3) in both shapes over one task runner:
 * - envelope shape (2.4, 3.1): `POST|GET {base_url}/speech/tts/jobs`, `GET .../jobs/{taskId}`;
 * - flat shape (2.5, 3.2): `POST|GET {base_url}/tts/tasks`, `GET .../tasks/{taskId}`.
 * A job created in one shape is readable in the other. Creation pre-deducts
 * the credits (402 when short) and accepts an optional `Idempotency-Key`.
 */
import type { ServerContext } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import { defineRoute, type RouteContext, type RouteDef } from '../../http/router.js';
import { quotaRemaining, ttsCredits } from '../common/billing.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { paginate } from '../common/pagination.js';
import type { TaskRunner } from '../common/task-runner.js';
import { errorResponses } from './docs.js';
import { engineVoiceOf } from './generate.js';
import { jobInput, type TtsJobInput, type TtsJobResult, type TtsTask } from './job-runner.js';
import { resolveTtsParams } from './params.js';
import {
  envelopeResponse,
  flatCreateResponse,
  flatListQuery,
  flatListResponse,
  flatTaskDoc,
  jobBody,
  jobListQuery,
  jobListResponse,
  type FlatListQuery,
  type JobBody,
  type JobListQuery,
} from './schemas.js';
import { envelope, flatStatus, flatTask, jobListItem, minimalTask, statesOfEnvelope, statesOfFlat } from './views.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const JOB_PATHS = {
  jobs: serverPath(REST_ROUTES.ttsJobs),
  job: serverPath(`${REST_ROUTES.ttsJobs}/{taskId}`),
  tasks: serverPath(REST_ROUTES.ttsTasks),
  task: serverPath(`${REST_ROUTES.ttsTasks}/{taskId}`),
} as const;

const IDEMPOTENCY_DOC = { name: 'Idempotency-Key', required: false, description: 'Replays the first result of this key for the same body (no second job or charge); 422 for a different body.' };

export function jobRoutes(ctx: ServerContext, runner: TaskRunner<TtsJobInput, TtsJobResult>, idempotency: IdempotencyStore): RouteDef<never, never>[] {
  /** Validate, pre-deduct and schedule. */
  function createTask(c: RouteContext<JobBody, unknown>): Promise<TtsTask> {
    const { account, body } = c;
    if (body.modelId !== undefined && body.engineModelId !== undefined && body.modelId !== body.engineModelId) {
      throw badRequest('modelId and engineModelId disagree; send one of them');
    }
    const params = resolveTtsParams(ctx, account, {
      text: body.text,
      voiceId: body.voiceId ?? body.reference_id,
      modelId: body.modelId ?? body.engineModelId,
      format: body.format,
      speed: body.speed,
      emotion: body.emotion,
    });
    const input = jobInput({
      text: params.text,
      voiceId: params.voice.voiceId,
      engineModelId: params.model.id,
      format: params.format,
      speed: params.speed,
      emotion: params.emotion,
      engineVoice: engineVoiceOf(params),
    });
    return runner.create(account, input, { charge: { currency: 'credits', amount: ttsCredits(params.text), reason: `tts job ${params.model.id}` }, requestId: c.requestId });
  }

  const created = (c: RouteContext<JobBody, unknown>, scope: string, reply: (task: TtsTask) => unknown) =>
    idempotency.run(c.account, scope, idempotencyKeyOf(c.req.headers), c.body, async () => ({ status: 202, json: reply(await createTask(c)) }));

  const createErrors = errorResponses(400, 401, 402, 403, 409, 422);
  const readErrors = errorResponses(400, 401, 403, 404);

  return [
    defineRoute<JobBody, unknown>({
      method: 'POST',
      generation: true,
      path: JOB_PATHS.jobs,
      summary: 'Create an asynchronous TTS job (envelope shape); credits are pre-deducted',
      tags: ['tts-jobs'],
      capability: 'tts',
      body: jobBody,
      headers: [IDEMPOTENCY_DOC],
      responses: { 202: { description: 'Accepted', schema: envelopeResponse }, ...createErrors },
      handler: (c) =>
        created(c, 'speech-tts-jobs', (task) => {
          // Which shape this route answers is a deployment's choice (spec 4.3); the dialect picks it.
          if (ctx.dialect.jobShape === 'flat') return { taskId: task.taskId, status: flatStatus(task), creditsCharged: task.creditsCharged };
          if (ctx.dialect.jobShape === 'minimal') return { id: task.taskId, status: 'queued' };
          return envelope(ctx, task, c.requestId, quotaRemaining(c.account));
        }),
    }),
    defineRoute<unknown, JobListQuery>({
      method: 'GET',
      path: JOB_PATHS.jobs,
      summary: 'List TTS jobs, newest first (never the full text)',
      tags: ['tts-jobs'],
      capability: 'tts',
      query: jobListQuery,
      responses: { 200: { description: 'A page of jobs', schema: jobListResponse }, ...readErrors },
      handler: ({ account, query }) => {
        const all = runner.list(account, { states: query.status ? statesOfEnvelope(query.status) : undefined, createdAfter: query.createdAfter });
        const page = paginate(all, query);
        if (ctx.dialect.jobShape !== 'envelope') {
          const view = ctx.dialect.jobShape === 'flat' ? flatTask : minimalTask;
          return { json: { data: page.items.map((t) => view(ctx, t)), pagination: { limit: page.limit, offset: page.offset, hasMore: page.hasMore } } };
        }
        return { json: { data: page.items.map((t) => jobListItem(ctx, t)), pagination: { page: page.page, limit: page.limit, hasMore: page.hasMore, nextPage: page.nextPage } } };
      },
    }),
    defineRoute<unknown, unknown>({
      method: 'GET',
      path: JOB_PATHS.job,
      summary: 'Read a TTS job (envelope shape)',
      tags: ['tts-jobs'],
      capability: 'tts',
      responses: { 200: { description: 'The job', schema: envelopeResponse }, ...readErrors },
      handler: ({ account, params, requestId }) => {
        const task = runner.get(account, params['taskId']!);
        if (ctx.dialect.jobShape === 'flat') return { json: flatTask(ctx, task) };
        if (ctx.dialect.jobShape === 'minimal') return { json: minimalTask(ctx, task) };
        return { json: envelope(ctx, task, requestId) };
      },
    }),
    defineRoute<JobBody, unknown>({
      method: 'POST',
      generation: true,
      path: JOB_PATHS.tasks,
      summary: 'Create an asynchronous TTS task (flat shape); credits are pre-deducted',
      tags: ['tts-tasks'],
      capability: 'tts',
      body: jobBody,
      headers: [IDEMPOTENCY_DOC],
      responses: { 202: { description: 'Accepted', schema: flatCreateResponse }, ...createErrors },
      handler: (c) => created(c, 'tts-tasks', (task) => ({ taskId: task.taskId, status: flatStatus(task), creditsCharged: task.creditsCharged })),
    }),
    defineRoute<unknown, FlatListQuery>({
      method: 'GET',
      path: JOB_PATHS.tasks,
      summary: 'List TTS tasks (flat shape), newest first',
      tags: ['tts-tasks'],
      capability: 'tts',
      query: flatListQuery,
      responses: { 200: { description: 'A page of tasks', schema: flatListResponse }, ...readErrors },
      handler: ({ account, query }) => {
        const all = runner.list(account, { states: query.status ? statesOfFlat(query.status) : undefined, createdAfter: query.createdAfter });
        const page = paginate(all, query);
        return { json: { data: page.items.map((t) => flatTask(ctx, t)), pagination: { limit: page.limit, offset: page.offset, hasMore: page.hasMore } } };
      },
    }),
    defineRoute<unknown, unknown>({
      method: 'GET',
      path: JOB_PATHS.task,
      summary: 'Read a TTS task (flat shape)',
      tags: ['tts-tasks'],
      capability: 'tts',
      responses: { 200: { description: 'The task', schema: flatTaskDoc }, ...readErrors },
      handler: ({ account, params }) => ({ json: flatTask(ctx, runner.get(account, params['taskId']!)) }),
    }),
  ] as unknown as RouteDef<never, never>[];
}
