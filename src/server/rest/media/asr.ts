/**
 * Speech to text (spec 2.6, 4.4, 9): `POST|GET {base_url}/asr/tasks`,
 * `GET .../asr/tasks/{taskId}`, and the legacy creates
 * `POST /api/open/speech-to-text` and `POST {base_url}/speech/transcriptions`.
 *
 * Charging, in credits, 1 per started second (catalog.ts): with
 * `durationSeconds` the estimate is charged at create and the audio is
 * fetched when the task runs (audio longer than the estimate plus a
 * tolerance fails the task, refunded: resubmit with a right estimate or
 * none); without it the audio is fetched and measured at create, so an
 * unreachable or undecodable URL answers 400 right away. Recognition is
 * pocketsphinx; without it, create answers 503 `capability_unavailable`.
 */
import { z } from 'zod';
import type { ServerContext } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import { defineRoute, type RouteContext, type RouteDef } from '../../http/router.js';
import { UnprocessableMediaError } from '../../audio/decode.js';
import { decodeForRecognizer, type RecognizerAudio } from '../../media-engines/recognizer.js';
import { recognize } from '../../media-engines/recognizer.js';
import { mediaToolsOf } from '../../media-engines/tools.js';
import type { Account } from '../../store/types.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { TaskFailure, TaskRunner, type Task } from '../common/task-runner.js';
import { ASR_MAX_SECONDS, ASR_MODELS, asrCredits, asrEstimateTolerance, DEFAULT_ASR_MODEL, MediaCapability, MediaErrorCode, pickModel } from './catalog.js';
import { CREATE_ERRORS_WITH_TOOL, family, familyRoutes, flatShape, type FamilyShape } from './family.js';
import { checkUrlField, engineFailure, engineFaults, fetchField, fetchForTask, unavailable } from './inputs.js';
import { flatHead, flatHeadDoc, flatStatus, FlatStatus, taskMeta, taskMetaDoc, type FlatListQuery } from './views.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const ASR_PATHS = {
  tasks: serverPath(REST_ROUTES.asrTasks),
  task: serverPath(`${REST_ROUTES.asrTasks}/{taskId}`),
  legacySpeechToText: '/api/open/speech-to-text',
  legacyTranscriptions: '/api/open/v1/speech/transcriptions',
} as const;

/** Largest audio file fetched: 50 MiB. */
const ASR_MAX_BYTES = 50 * 1024 * 1024;

export interface AsrInput {
  audioUrl: string;
  model: string;
  /** Languages asked for (`language`), as given. */
  language: string[];
  languageHints: string[];
  /** The client's estimate (charged at create), when given. */
  durationSeconds: number | undefined;
}

export interface AsrResult {
  transcript: string;
  /** Measured length of the audio. */
  durationSeconds: number;
}

export type AsrTask = Task<AsrInput, AsrResult>;

const languageCode = z.string().min(1).max(32);

const asrFields = {
  model: z.string().min(1).max(128).optional().meta({ description: `ASR model id; default ${DEFAULT_ASR_MODEL}. Models: ${ASR_MODELS.map((m) => m.id).join(', ')}.` }),
  durationSeconds: z.number().positive().max(ASR_MAX_SECONDS).optional().meta({ description: `Estimated length in seconds (at most ${ASR_MAX_SECONDS}); charged at create. Without it the audio is measured at create.` }),
  languageHints: z.array(languageCode).max(16).optional().meta({ description: 'Language hints, e.g. ["en"].' }),
  language: z.union([languageCode, z.array(languageCode).min(1).max(16)]).optional().meta({ description: 'Language or languages of the audio.' }),
};

/** `POST /asr/tasks` (spec 4.4). */
export const asrBody = z.object({
  audioUrl: z.string().min(1).max(4096).meta({ description: 'Publicly reachable http(s) URL of the audio (no credentials, no LAN or loopback host).' }),
  ...asrFields,
});
export type AsrBody = z.infer<typeof asrBody>;

/** Legacy creates also take `audio_url` (spec 9.4: ASR now uses camelCase `audioUrl`). */
export const legacyAsrBody = z
  .object({ audioUrl: asrBody.shape.audioUrl.optional(), audio_url: z.string().min(1).max(4096).optional(), ...asrFields })
  .refine((b) => b.audioUrl !== undefined || b.audio_url !== undefined, { message: 'audioUrl is required', path: ['audioUrl'] });
export type LegacyAsrBody = z.infer<typeof legacyAsrBody>;

const createDoc = z.object({ taskId: z.string(), status: z.enum(Object.values(FlatStatus)), model: z.string(), creditsCharged: z.number().int() });
const taskDoc = z.object({
  ...flatHeadDoc('asr'),
  audioUrl: z.string(),
  transcript: z.string().nullable().meta({ description: 'Set on success; empty for silence.' }),
  model: z.string(),
  language: z.array(z.string()),
  durationSeconds: z.number().nullable(),
  ...taskMetaDoc,
});

/** The ASR task object (spec 2.6). */
export function asrView(task: AsrTask) {
  const succeeded = flatStatus(task) === FlatStatus.succeeded;
  return {
    ...flatHead(task, 'asr'),
    audioUrl: task.input.audioUrl,
    transcript: succeeded ? (task.result?.transcript ?? '') : null,
    model: task.input.model,
    language: task.input.language,
    durationSeconds: task.result?.durationSeconds ?? task.input.durationSeconds ?? null,
    ...taskMeta(task),
  };
}

const flatAsr = flatShape(asrView, taskDoc);
/** The task family of ASR, whose create answer also names the model. */
const asrShape: FamilyShape<AsrTask, FlatListQuery> = {
  ...flatAsr,
  created: (task) => ({ status: 202, json: { taskId: task.taskId, status: flatStatus(task), model: task.input.model, creditsCharged: task.creditsCharged } }),
  docs: { ...flatAsr.docs, created: { description: 'Accepted', schema: createDoc } },
};

/** Primary language subtag, lower case (`en-US` -> `en`). */
const primary = (code: string) => code.split(/[-_]/)[0]!.toLowerCase();

export interface AsrRoutes {
  runner: TaskRunner<AsrInput, AsrResult>;
  routes: RouteDef<never, never>[];
  close(): void;
}

export function asrFamily(ctx: ServerContext, idempotency: IdempotencyStore): AsrRoutes {
  /** Audio measured at create, handed to the worker so it is not fetched twice. */
  const measured = new Map<string, RecognizerAudio>();

  const runner = new TaskRunner<AsrInput, AsrResult>(ctx, {
    type: 'asr',
    idPrefix: 'asr',
    async worker({ task, signal }) {
      const input = task.input;
      let audio = measured.get(task.taskId);
      measured.delete(task.taskId);
      await engineFaults(ctx, input.audioUrl, signal);
      const tools = mediaToolsOf(ctx);
      if (!tools.recognizer) throw new TaskFailure(MediaErrorCode.generationFailed, 'speech recognition is no longer available on this server');
      if (!audio) {
        const data = await fetchForTask(ctx, 'audioUrl', input.audioUrl, { maxBytes: ASR_MAX_BYTES, signal });
        try {
          audio = await decodeForRecognizer(data, { ffmpeg: tools.ffmpeg, maxSeconds: ASR_MAX_SECONDS + 1, signal });
        } catch (err) {
          throw engineFailure(err, 'audioUrl');
        }
      }
      if (audio.durationSeconds > ASR_MAX_SECONDS) throw new TaskFailure(MediaErrorCode.unprocessable, `the audio is longer than ${ASR_MAX_SECONDS} s`);
      const estimate = input.durationSeconds;
      if (estimate !== undefined && audio.durationSeconds > estimate + asrEstimateTolerance(estimate)) {
        throw new TaskFailure(
          MediaErrorCode.durationExceedsEstimate,
          `the audio lasts ${audio.durationSeconds.toFixed(1)} s, more than the durationSeconds estimate of ${estimate} s that was charged; resubmit with a larger estimate or without one (the charge was refunded)`,
        );
      }
      let transcript: string;
      try {
        transcript = await recognize(tools.recognizer, audio.pcm, { signal });
      } catch (err) {
        throw engineFailure(err, 'recognition');
      }
      return { result: { transcript, durationSeconds: Math.round(audio.durationSeconds * 1000) / 1000 } };
    },
  });

  async function create(c: RouteContext<unknown, unknown>, account: Account, audioUrlRaw: string, body: Omit<AsrBody, 'audioUrl'>): Promise<AsrTask> {
    const tools = mediaToolsOf(ctx);
    if (!tools.recognizer) throw unavailable('speech recognition', 'no recognizer is installed (on Debian: apt-get install pocketsphinx pocketsphinx-en-us)');
    const model = pickModel(ASR_MODELS, body.model, DEFAULT_ASR_MODEL);
    const language = body.language === undefined ? [] : typeof body.language === 'string' ? [body.language] : body.language;
    const unsupported = language.filter((l) => !model.languages.includes(primary(l)));
    if (unsupported.length > 0) throw badRequest(`model ${model.id} does not recognize ${unsupported.join(', ')}; it recognizes ${model.languages.join(', ')}`, { supportedLanguages: model.languages });
    const audioUrl = await checkUrlField(ctx, 'audioUrl', audioUrlRaw);
    let estimate = body.durationSeconds;
    let audio: RecognizerAudio | undefined;
    if (estimate === undefined) {
      const data = await fetchField(ctx, 'audioUrl', audioUrl, { maxBytes: ASR_MAX_BYTES });
      try {
        audio = await decodeForRecognizer(data, { ffmpeg: tools.ffmpeg, maxSeconds: ASR_MAX_SECONDS + 1 });
      } catch (err) {
        if (err instanceof UnprocessableMediaError) throw badRequest(`audioUrl ${err.message}`, { field: 'audioUrl' });
        throw err;
      }
      if (audio.durationSeconds > ASR_MAX_SECONDS) throw badRequest(`the audio at audioUrl is longer than ${ASR_MAX_SECONDS} s`, { field: 'audioUrl' });
      estimate = audio.durationSeconds;
    }
    const input: AsrInput = { audioUrl, model: model.id, language, languageHints: body.languageHints ?? [], durationSeconds: body.durationSeconds };
    const task = await runner.create(account, input, { charge: { currency: 'credits', amount: asrCredits(estimate), reason: `asr task ${model.id}` }, requestId: c.requestId });
    if (audio) measured.set(task.taskId, audio);
    return task;
  }

  const common = { tags: ['asr'], capability: MediaCapability.asr };

  const routes = [
    ...familyRoutes(
      { runner, idempotency, common, createErrors: CREATE_ERRORS_WITH_TOOL },
      family({
        shape: asrShape,
        paths: { list: ASR_PATHS.tasks, one: ASR_PATHS.task },
        summaries: { create: 'Create a transcription task from a public audio URL; credits are pre-deducted', list: 'List transcription tasks, newest first', read: 'Read a transcription task' },
        create: {
          body: asrBody,
          scope: 'asr-tasks',
          requireKey: false,
          run: (c) => {
            const { audioUrl, ...rest } = c.body;
            return create(c, c.account, audioUrl, rest);
          },
        },
      }),
    ),
    ...[ASR_PATHS.legacySpeechToText, ASR_PATHS.legacyTranscriptions].map((path) =>
      defineRoute<LegacyAsrBody, unknown>({
        method: 'POST',
        path,
        summary: 'Legacy transcription create (now POST /asr/tasks)',
        ...common,
        hidden: true,
        body: legacyAsrBody,
        responses: { 202: asrShape.docs.created, ...CREATE_ERRORS_WITH_TOOL },
        handler: (c) => {
          const { audioUrl, audio_url, ...rest } = c.body;
          return idempotency.run(c.account, `legacy:${path}`, idempotencyKeyOf(c.req.headers), c.body, async () => asrShape.created(await create(c, c.account, (audioUrl ?? audio_url)!, rest)));
        },
      }),
    ),
  ] as unknown as RouteDef<never, never>[];

  return { runner, routes, close: () => measured.clear() };
}
