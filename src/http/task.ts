/**
 * What every asynchronous task of the service has in common (TTS jobs, ASR,
 * image, video, lip-sync), whatever route family produced it: one status
 * vocabulary, the error fields, timestamps and the raw object.
 */
import { VoxpipeError } from '../errors.js';
import { EnvelopeStatus, FlatStatus, MediaJobStatus, MinimalStatus } from '../protocol/task-states.js';
import { asObject, str, num, type JsonObject } from '../protocol/fields.js';

/**
 * Normalised task states. The route families spell them differently:
 * `success`/`fail`/`partial_fail` (TTS envelope, 3.1), `succeeded`/`failed`
 * (flat tasks, 3.2), `completed` (media video jobs, 3.3), `queued` (minimal
 * shape). `rawStatus` keeps the original.
 */
export const TaskStatus = {
  queued: 'queued',
  pending: 'pending',
  processing: 'processing',
  succeeded: 'succeeded',
  /** Some segments failed, some final audio exists (TTS envelope `partial_fail`). */
  partialFailed: 'partial_failed',
  failed: 'failed',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

/** States polling stops at. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = [TaskStatus.succeeded, TaskStatus.partialFailed, TaskStatus.failed];

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** The spec's words for every family (protocol/task-states.ts), then the spellings other deployments use. */
const STATUS_ALIASES: Readonly<Record<string, TaskStatus>> = {
  [MinimalStatus.queued]: TaskStatus.queued,
  [EnvelopeStatus.pending]: TaskStatus.pending,
  [EnvelopeStatus.processing]: TaskStatus.processing,
  [EnvelopeStatus.success]: TaskStatus.succeeded,
  [EnvelopeStatus.partialFail]: TaskStatus.partialFailed,
  [EnvelopeStatus.fail]: TaskStatus.failed,
  [FlatStatus.succeeded]: TaskStatus.succeeded,
  [FlatStatus.failed]: TaskStatus.failed,
  [MediaJobStatus.completed]: TaskStatus.succeeded,
  created: TaskStatus.queued,
  submitted: TaskStatus.queued,
  waiting: TaskStatus.pending,
  running: TaskStatus.processing,
  in_progress: TaskStatus.processing,
  started: TaskStatus.processing,
  generating: TaskStatus.processing,
  complete: TaskStatus.succeeded,
  done: TaskStatus.succeeded,
  partial_failed: TaskStatus.partialFailed,
  partially_failed: TaskStatus.partialFailed,
  failure: TaskStatus.failed,
  error: TaskStatus.failed,
  errored: TaskStatus.failed,
  cancelled: TaskStatus.failed,
  canceled: TaskStatus.failed,
  expired: TaskStatus.failed,
  timeout: TaskStatus.failed,
  timed_out: TaskStatus.failed,
};

/**
 * Map a status as the server spells it to `TaskStatus`. An unknown status is
 * read as `processing` (not terminal): a new state must never stop a poller
 * with a wrong answer; `rawStatus` tells the caller what it was.
 */
export function normalizeStatus(raw: string | undefined): TaskStatus {
  if (raw === undefined) return TaskStatus.pending;
  return STATUS_ALIASES[raw.toLowerCase()] ?? TaskStatus.processing;
}

/** Fields every normalised task has. */
export interface BaseTask {
  /** Task id used in the task's routes (`taskId`, `jobId` or `id`, whichever the shape has). */
  id: string;
  status: TaskStatus;
  /** The status exactly as the server spelled it. */
  rawStatus: string;
  /** Route family the task came from, e.g. `jobs` or `tasks`. */
  family: string;
  errorCode: string | undefined;
  errorMessage: string | undefined;
  /** Credits or quota charged (`creditsCharged`, `creditsUsed`). */
  creditsCharged: number | undefined;
  createdAt: string | undefined;
  startedAt: string | undefined;
  completedAt: string | undefined;
  /** The object as received (after unwrapping its envelope). */
  raw: JsonObject;
}

/** Read the common fields from a task object. */
export function baseTaskFields(obj: JsonObject, family: string): BaseTask {
  const rawStatus = str(obj, 'status', 'state') ?? 'pending';
  const error = asObject(obj['error'] ?? obj['failure'] ?? obj['failure_reason'] ?? obj['failureReason']);
  return {
    id: str(obj, 'taskId', 'task_id', 'jobId', 'job_id', 'id') ?? '',
    status: normalizeStatus(rawStatus),
    rawStatus,
    family,
    // The job's own error code, in whichever spelling the deployment uses.
    errorCode: str(obj, 'errorCode', 'error_code', 'failureCode', 'failure_code') ?? str(error, 'code', 'type', 'errorCode', 'error_code'),
    errorMessage:
      str(obj, 'errorMessage', 'error_message', 'failureMessage', 'failure_message') ??
      str(error, 'message', 'detail', 'reason') ??
      (typeof obj['error'] === 'string' ? obj['error'] : typeof obj['failure_reason'] === 'string' ? obj['failure_reason'] : typeof obj['failureReason'] === 'string' ? obj['failureReason'] : undefined),
    creditsCharged: num(obj, 'creditsCharged', 'creditsUsed', 'credits_charged', 'credits_used', 'quotaCharged'),
    createdAt: str(obj, 'createdAt', 'created_at'),
    startedAt: str(obj, 'startedAt', 'started_at'),
    completedAt: str(obj, 'completedAt', 'completed_at', 'finishedAt'),
    raw: obj,
  };
}

/** A task reached `failed` (thrown by `JobHandle.result()`). Code: the task's `errorCode`, else `generation_failed`. */
export class JobFailedError extends VoxpipeError {
  override name = 'JobFailedError';
  readonly task: BaseTask;
  constructor(task: BaseTask) {
    super(task.errorCode ?? 'generation_failed', `task ${task.id} ${task.rawStatus}${task.errorMessage ? `: ${task.errorMessage}` : ''}`);
    this.task = task;
  }
}

/** A page of a task list, whatever the family's pagination looks like. */
export interface TaskPage<T> {
  items: T[];
  hasMore: boolean;
  /** Page-style lists (`page`, `nextPage`). */
  page: number | undefined;
  nextPage: number | undefined;
  /** Offset-style lists (`offset`). */
  offset: number | undefined;
  limit: number | undefined;
  raw: JsonObject;
}

/** Query of a task list; each family uses the parameters it knows. */
export interface ListParams {
  /** Page number (page-style lists); default 1 on the server. */
  page?: number;
  /** 1 to 100; default 20 on the server. */
  limit?: number;
  /** Offset (offset-style lists); default 0 on the server. */
  offset?: number;
  /** A status filter, as the family spells it (a `TaskStatus` is translated where the family differs). */
  status?: string;
  /** ISO 8601; only tasks created after it. */
  createdAfter?: string;
  signal?: AbortSignal | undefined;
}
