/**
 * The create / list / read routes each media kind (ASR, image, video,
 * lip-sync) offers in each of its route families (spec 2.6-2.8, 3.2-3.4):
 * `POST` and `GET` on a collection path and `GET` on an item path, over the
 * kind's one task runner. What differs is data: per kind the `FamilyBase`
 * (runner, tags, capability, create errors); per family the paths, the body
 * and how a create turns it into a task (`create.run`), and the shape the
 * family writes (`FamilyShape`: its list query and status words, the create
 * reply, a page, one task, and their docs). `flatShape` is the task family
 * (`/<kind>/tasks`), `mediaJobShape` the media-jobs family
 * (`/media/<kind>/jobs`); lip-sync wraps the latter in its
 * `{ success, message, data }` envelope.
 *
 * Use: `familyRoutes(base, family({ shape, paths, summaries, create }), ...)`.
 */
import { z } from 'zod';
import { defineRoute, type Reply, type ResponseDoc, type RouteContext, type RouteDef } from '../../http/router.js';
import type { Account } from '../../store/types.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { paginate, type ListQuery, type Page } from '../common/pagination.js';
import type { Task, TaskRunner, TaskState } from '../common/task-runner.js';
import { errorResponses, idempotencyHeader } from './docs.js';
import {
  flatCreateDoc,
  flatListQuery,
  flatPagination,
  flatPaginationDoc,
  flatStatus,
  mediaJobListQuery,
  mediaJobPagination,
  mediaJobPaginationDoc,
  statesOfFlat,
  statesOfMediaJob,
  type FlatListQuery,
  type MediaJobListQuery,
} from './views.js';

/** Error responses of every media read (list or one task). */
export const READ_ERRORS = errorResponses(400, 401, 403, 404);
/** Error responses of a media create. */
export const CREATE_ERRORS = errorResponses(400, 401, 402, 403, 409, 422);
/** Error responses of a media create that needs a tool of the machine (ffmpeg, the recognizer): 503 without it. */
export const CREATE_ERRORS_WITH_TOOL = errorResponses(400, 401, 402, 403, 409, 422, 503);

/** How one route family writes its tasks. `Q` is its list query. */
export interface FamilyShape<T extends Task, Q extends ListQuery> {
  listQuery: z.ZodType<Q>;
  /** Internal states behind the query's status filter; undefined for all. */
  states(query: Q): TaskState[] | undefined;
  /** The answer to a create (202). */
  created(task: T): Reply;
  /** JSON of a page of the list. */
  page(page: Page<T>): Record<string, unknown>;
  /** JSON of one task. */
  one(task: T): unknown;
  /** Docs of the create (202), list (200) and read (200) answers. */
  docs: { created: ResponseDoc; page: ResponseDoc; one: ResponseDoc };
}

/**
 * The task family (spec 2.7): create answers `{ taskId, status,
 * creditsCharged }`; lists `{ data, pagination: { limit, offset, hasMore } }`;
 * status words pending, processing, succeeded, failed.
 */
export function flatShape<T extends Task>(view: (task: T) => unknown, doc: z.ZodType): FamilyShape<T, FlatListQuery> {
  return {
    listQuery: flatListQuery,
    states: (query) => (query.status ? statesOfFlat(query.status) : undefined),
    created: (task) => ({ status: 202, json: { taskId: task.taskId, status: flatStatus(task), creditsCharged: task.creditsCharged } }),
    page: (page) => ({ data: page.items.map(view), pagination: flatPagination(page) }),
    one: view,
    docs: {
      created: { description: 'Accepted', schema: flatCreateDoc },
      page: { description: 'A page of tasks', schema: z.object({ data: z.array(doc), pagination: flatPaginationDoc }) },
      one: { description: 'The task', schema: doc },
    },
  };
}

/**
 * The media-jobs family (spec 2.8): create answers the job itself; lists
 * `{ data, pagination: { page, limit, hasMore, nextPage } }`; status words
 * pending, processing, completed, failed.
 */
export function mediaJobShape<T extends Task>(view: (task: T) => unknown, doc: z.ZodType): FamilyShape<T, MediaJobListQuery> {
  return {
    listQuery: mediaJobListQuery,
    states: (query) => (query.status ? statesOfMediaJob(query.status) : undefined),
    created: (task) => ({ status: 202, json: view(task) }),
    page: (page) => ({ data: page.items.map(view), pagination: mediaJobPagination(page) }),
    one: view,
    docs: {
      created: { description: 'Accepted', schema: doc },
      page: { description: 'A page of jobs', schema: z.object({ data: z.array(doc), pagination: mediaJobPaginationDoc }) },
      one: { description: 'The job', schema: doc },
    },
  };
}

/** The list answer of a family: `account`'s tasks matching `query`, one page, newest first. */
export function listReply<I, R, Q extends ListQuery>(runner: TaskRunner<I, R>, shape: FamilyShape<Task<I, R>, Q>, account: Account, query: Q): Reply {
  return { json: shape.page(paginate(runner.list(account, { states: shape.states(query), createdAfter: query.createdAfter }), query)) };
}

/** The read answer of a family: one task of `account` (404 otherwise). */
export function readReply<I, R, Q extends ListQuery>(runner: TaskRunner<I, R>, shape: FamilyShape<Task<I, R>, Q>, account: Account, taskId: string): Reply {
  return { json: shape.one(runner.get(account, taskId)) };
}

/** What the route families of one media kind share: the runner, the idempotency store, tags and capability, create errors. */
export interface FamilyBase<I, R> {
  runner: TaskRunner<I, R>;
  idempotency: IdempotencyStore;
  /** OpenAPI tags and the capability checked (403). */
  common: { tags: string[]; capability: string };
  /** Error responses documented on the creates. */
  createErrors: Record<number, ResponseDoc>;
}

/** One route family of a media kind. */
export interface FamilySpec<I, R, B, Q extends ListQuery> {
  shape: FamilyShape<Task<I, R>, Q>;
  /** Collection path (`POST`, `GET`) and item path, whose last segment is the id parameter (`{jobId}`, `{taskId}`). */
  paths: { list: string; one: string };
  summaries: { create: string; list: string; read: string };
  create: {
    body: z.ZodType<B>;
    /** Idempotency scope of the create (per account and route). */
    scope: string;
    /** Whether the create requires an `Idempotency-Key` (400 without). */
    requireKey: boolean;
    /** Validate the body and create the task (throws HttpError). */
    run(c: RouteContext<B, unknown>): Promise<Task<I, R>>;
  };
}

/** A route family ready to be built over a kind's `FamilyBase`. */
export type Family<I, R> = (base: FamilyBase<I, R>) => RouteDef<never, never>[];

/** The id parameter of an item path (`.../{taskId}` -> `taskId`). */
function idParam(path: string): string {
  const name = /\{(\w+)\}$/.exec(path)?.[1];
  if (name === undefined) throw new Error(`item path ${path} does not end with an {id} parameter`);
  return name;
}

/** A family's routes: `POST` and `GET` on `paths.list`, `GET` on `paths.one`, in that order. */
export function family<I, R, B, Q extends ListQuery>(spec: FamilySpec<I, R, B, Q>): Family<I, R> {
  const { shape, paths, summaries, create } = spec;
  const param = idParam(paths.one);
  return ({ runner, idempotency, common, createErrors }) =>
    [
      defineRoute<B, unknown>({
        ...common,
        method: 'POST',
        generation: true,
        path: paths.list,
        summary: summaries.create,
        body: create.body,
        headers: [idempotencyHeader(create.requireKey)],
        responses: { 202: shape.docs.created, ...createErrors },
        handler: (c) => idempotency.run(c.account, create.scope, idempotencyKeyOf(c.req.headers), c.body, async () => shape.created(await create.run(c)), create.requireKey),
      }),
      defineRoute<unknown, Q>({
        ...common,
        method: 'GET',
        path: paths.list,
        summary: summaries.list,
        query: shape.listQuery,
        responses: { 200: shape.docs.page, ...READ_ERRORS },
        handler: ({ account, query }) => listReply(runner, shape, account, query),
      }),
      defineRoute<unknown, unknown>({
        ...common,
        method: 'GET',
        path: paths.one,
        summary: summaries.read,
        responses: { 200: shape.docs.one, ...READ_ERRORS },
        handler: ({ account, params }) => readReply(runner, shape, account, params[param]!),
      }),
    ] as unknown as RouteDef<never, never>[];
}

/** The routes of every family of one media kind over `base`, in the order given. */
export function familyRoutes<I, R>(base: FamilyBase<I, R>, ...families: Family<I, R>[]): RouteDef<never, never>[] {
  return families.flatMap((f) => f(base));
}
