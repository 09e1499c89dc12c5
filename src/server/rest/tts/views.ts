/**
 * The two response shapes of one TTS task: the envelope shape of
 * `/speech/tts/jobs` (spec 2.4, states of 3.1) and the flat shape of
 * `/tts/tasks` (spec 2.5, states of 3.2).
 */
import type { ServerContext } from '../../context.js';
import type { TaskState } from '../common/task-runner.js';
import { taskMeta } from '../common/task-view.js';
import { jobAudioUrl, segmentAudioUrl } from './downloads.js';
import type { TtsTask } from './job-runner.js';
import { countChars } from '../../../protocol/limits.js';
import { EnvelopeStatus, FlatStatus } from './schemas.js';

const ENVELOPE_STATUS: Record<TaskState, EnvelopeStatus> = {
  pending: EnvelopeStatus.pending,
  processing: EnvelopeStatus.processing,
  succeeded: EnvelopeStatus.success,
  partial: EnvelopeStatus.partialFail,
  failed: EnvelopeStatus.fail,
};

/**
 * Flat shape has no partial state: a partial task has final audio, so it is
 * `succeeded`, with `errorCode`/`errorMessage` saying what was left out.
 */
const FLAT_STATUS: Record<TaskState, FlatStatus> = {
  pending: FlatStatus.pending,
  processing: FlatStatus.processing,
  succeeded: FlatStatus.succeeded,
  partial: FlatStatus.succeeded,
  failed: FlatStatus.failed,
};

/** Internal states behind an envelope status filter. */
export function statesOfEnvelope(status: EnvelopeStatus): TaskState[] {
  return (Object.keys(ENVELOPE_STATUS) as TaskState[]).filter((s) => ENVELOPE_STATUS[s] === status);
}

/** Internal states behind a flat status filter. */
export function statesOfFlat(status: FlatStatus): TaskState[] {
  return (Object.keys(FLAT_STATUS) as TaskState[]).filter((s) => FLAT_STATUS[s] === status);
}

export function envelopeStatus(task: TtsTask): EnvelopeStatus {
  return ENVELOPE_STATUS[task.state];
}

export function flatStatus(task: TtsTask): FlatStatus {
  return FLAT_STATUS[task.state];
}

function finalAudioUrl(ctx: ServerContext, task: TtsTask): string | null {
  return task.result?.audioId ? jobAudioUrl(ctx, task.taskId) : null;
}

/** `task` of the envelope (spec 2.4). */
export function envelopeTask(ctx: ServerContext, task: TtsTask) {
  const audioUrl = finalAudioUrl(ctx, task);
  const segments =
    task.result?.segments.map((s) => ({ index: s.index, status: s.status, characters: s.characters, playbackUrl: s.audioId ? segmentAudioUrl(ctx, task.taskId, s.index) : null })) ??
    task.input.segments.map((text, index) => ({ index, status: 'pending' as const, characters: countChars(text), playbackUrl: null }));
  return {
    id: task.taskId,
    taskId: task.taskId,
    status: envelopeStatus(task),
    audioUrl,
    delivery: { playbackUrl: audioUrl, downloadUrl: audioUrl === null ? null : `${audioUrl}?download=1`, downloadReady: audioUrl !== null },
    segments,
    characters: task.input.characters,
    voiceId: task.input.voiceId,
    engineModelId: task.input.engineModelId,
    format: task.input.format,
    errorCode: task.errorCode,
    errorMessage: task.errorMessage,
    createdAt: task.createdAt,
    startedAt: task.startedAt,
    completedAt: task.completedAt,
  };
}

/** The full envelope (spec 2.4); `quotaRemaining` only on create. */
export function envelope(ctx: ServerContext, task: TtsTask, requestId: string, quotaRemaining?: number) {
  const status = envelopeStatus(task);
  return {
    task: envelopeTask(ctx, task),
    record: { id: task.taskId, status },
    requestId,
    ...(quotaRemaining === undefined ? {} : { quotaRemaining }),
    creditsUsed: task.creditsCharged,
  };
}

/** A list item of `/speech/tts/jobs`: never the full text. */
export function jobListItem(ctx: ServerContext, task: TtsTask) {
  return {
    taskId: task.taskId,
    status: envelopeStatus(task),
    characters: task.input.characters,
    textPreview: task.input.textPreview,
    textFingerprint: task.input.textFingerprint,
    voiceId: task.input.voiceId,
    engineModelId: task.input.engineModelId,
    creditsUsed: task.creditsCharged,
    createdAt: task.createdAt,
    audioUrl: finalAudioUrl(ctx, task),
  };
}

/** The flat task (spec 2.5). */
export function flatTask(ctx: ServerContext, task: TtsTask) {
  return {
    id: task.id,
    taskId: task.taskId,
    type: 'tts' as const,
    status: flatStatus(task),
    text: task.input.text,
    voiceId: task.input.voiceId,
    engineModelId: task.input.engineModelId,
    audioUrl: finalAudioUrl(ctx, task),
    ...taskMeta(task),
  };
}

/**
 * The `minimal` shape (spec 2.5: "create returns `{ id, status }` with
 * initial status `queued`; detail adds `audioUrl` on success and an error
 * code or message on failure").
 */
export function minimalTask(ctx: ServerContext, task: TtsTask) {
  const status = task.state === 'pending' ? 'queued' : flatStatus(task);
  const out: Record<string, unknown> = { id: task.taskId, status };
  const audioUrl = finalAudioUrl(ctx, task);
  if (audioUrl) out['audioUrl'] = audioUrl;
  if (task.errorCode) out['errorCode'] = task.errorCode;
  if (task.errorMessage) out['errorMessage'] = task.errorMessage;
  return out;
}
