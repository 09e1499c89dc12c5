/**
 * States and list shapes shared by the media route families:
 * - task family (`/asr/tasks`, `/images/tasks`, `/videos/tasks`,
 *   `/lip-sync/tasks`; spec 2.6, 2.7, 3.2): pending, processing, succeeded,
 *   failed; lists `{ data, pagination: { limit, offset, hasMore } }`;
 * - media jobs (`/media/images|videos|lip-sync/jobs`; spec 2.8, 3.3, 3.4):
 *   pending, processing, completed, failed (the video words, used for image
 *   and lip-sync jobs too); lists `{ data, pagination: { page, limit, hasMore, nextPage } }`.
 * Media engines never end `partial`; it would read as succeeded / completed.
 */
import { z } from 'zod';
import { listQueryShape, type Page } from '../common/pagination.js';
import type { Task, TaskState } from '../common/task-runner.js';

import { FlatStatus, MediaJobStatus } from '../../../protocol/task-states.js';

export { FlatStatus, MediaJobStatus };

const FLAT: Record<TaskState, FlatStatus> = { pending: 'pending', processing: 'processing', succeeded: 'succeeded', partial: 'succeeded', failed: 'failed' };
const MEDIA: Record<TaskState, MediaJobStatus> = { pending: 'pending', processing: 'processing', succeeded: 'completed', partial: 'completed', failed: 'failed' };

export function flatStatus(task: Pick<Task, 'state'>): FlatStatus {
  return FLAT[task.state];
}

export function mediaJobStatus(task: Pick<Task, 'state'>): MediaJobStatus {
  return MEDIA[task.state];
}

/** Internal states behind a task-family status filter. */
export function statesOfFlat(status: FlatStatus): TaskState[] {
  return (Object.keys(FLAT) as TaskState[]).filter((s) => FLAT[s] === status);
}

/** Internal states behind a media-job status filter (`succeeded` is accepted for `completed`). */
export function statesOfMediaJob(status: MediaJobStatus | 'succeeded'): TaskState[] {
  const wanted = status === 'succeeded' ? MediaJobStatus.completed : status;
  return (Object.keys(MEDIA) as TaskState[]).filter((s) => MEDIA[s] === wanted);
}

/** Query of the task-family lists (spec 4.4: `limit`, `offset`, `status`). */
export const flatListQuery = z.object({ ...listQueryShape, status: z.enum(Object.values(FlatStatus)).optional().meta({ description: 'Only tasks in this state.' }) });
export type FlatListQuery = z.infer<typeof flatListQuery>;

/** Query of the media-job lists (spec 4.7: `page`, `limit`, `status`). */
export const mediaJobListQuery = z.object({
  ...listQueryShape,
  status: z.enum([...Object.values(MediaJobStatus), 'succeeded']).optional().meta({ description: 'Only jobs in this state (succeeded is read as completed).' }),
});
export type MediaJobListQuery = z.infer<typeof mediaJobListQuery>;

/** Pagination object of the task-family lists. */
export function flatPagination(page: Page<unknown>) {
  return { limit: page.limit, offset: page.offset, hasMore: page.hasMore };
}

/** Pagination object of the media-job lists. */
export function mediaJobPagination(page: Page<unknown>) {
  return { page: page.page, limit: page.limit, hasMore: page.hasMore, nextPage: page.nextPage };
}

/** The leading fields of a task-family object (spec 2.7): `{ id, taskId, type, status }`. */
export function flatHead<T extends string>(task: Task, type: T) {
  return { id: task.id, taskId: task.taskId, type, status: flatStatus(task) };
}

/** The leading fields of a media job (spec 2.8): `{ id, jobId, status }`, both ids the task id. */
export function mediaJobHead(task: Task) {
  return { id: task.taskId, jobId: task.taskId, status: mediaJobStatus(task) };
}

export { taskMeta, taskMetaDoc } from '../common/task-view.js';

/** Doc schema of `flatHead`. */
export function flatHeadDoc<T extends string>(type: T) {
  return { id: z.string(), taskId: z.string(), type: z.literal(type), status: z.enum(Object.values(FlatStatus)) };
}

/** Doc schema of `mediaJobHead`. */
export const mediaJobHeadDoc = { id: z.string(), jobId: z.string(), status: z.enum(Object.values(MediaJobStatus)) };

export const flatPaginationDoc = z.object({ limit: z.number().int(), offset: z.number().int(), hasMore: z.boolean() });
export const mediaJobPaginationDoc = z.object({ page: z.number().int(), limit: z.number().int(), hasMore: z.boolean(), nextPage: z.number().int().nullable() });

/** `{ taskId, status, creditsCharged }` of a task-family create (spec 2.7). */
export const flatCreateDoc = z.object({ taskId: z.string(), status: z.enum(Object.values(FlatStatus)), creditsCharged: z.number().int() });
