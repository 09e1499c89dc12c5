/**
 * Request and response schemas of the HTTP TTS routes. Request schemas
 * validate (400 `invalid_request`) and, like the response schemas, feed
 * `openapi.json`. Unknown request fields are ignored.
 */
import { z } from 'zod';
import { AUDIO_FORMATS } from '../../../protocol/audio.js';
import { countChars, LIMITS } from '../../../protocol/limits.js';
import { EMOTIONS, MODELS } from '../../catalog.js';
import { listQueryShape } from '../common/pagination.js';
import { taskMetaDoc } from '../common/task-view.js';

/** Text of 1 to 5000 characters (code points, as JSON Schema counts them). */
export const ttsText = z
  .string()
  .refine((s) => {
    const n = countChars(s);
    return n >= LIMITS.httpTextMinChars && n <= LIMITS.httpTextMaxChars;
  }, `must be ${LIMITS.httpTextMinChars} to ${LIMITS.httpTextMaxChars} characters`)
  .meta({ minLength: LIMITS.httpTextMinChars, maxLength: LIMITS.httpTextMaxChars, description: 'Text to speak, 1 to 5000 characters.' });

const voiceIdField = z.string().min(1).max(128);
const speedField = z.number().min(LIMITS.speedMin).max(LIMITS.speedMax).meta({ description: 'Speaking rate, 0.5 to 2 (default 1).' });
const formatField = z.enum(AUDIO_FORMATS).meta({ description: "Output container; the model's formats are listed by the capabilities route." });
const emotionField = z.enum(EMOTIONS);
const modelIdField = z.string().min(1).max(128).meta({ description: `Engine model id, e.g. ${MODELS.map((m) => m.id).join(', ')}; default the voice's default model.` });

/** Fields shared by sync TTS and job creation. */
const ttsFields = {
  text: ttsText,
  voiceId: voiceIdField.optional().meta({ description: 'Voice id (required unless the legacy alias reference_id is given).' }),
  reference_id: voiceIdField.optional().meta({ description: 'Legacy alias of voiceId.', deprecated: true }),
  modelId: modelIdField.optional(),
  format: formatField.optional(),
  speed: speedField.optional(),
  emotion: emotionField.optional(),
};

/** `POST /speech/tts` (spec 4.1). */
export const syncTtsBody = z.object({
  ...ttsFields,
  cache: z.boolean().optional().meta({ description: 'When true, answer JSON with an audio URL instead of binary audio.' }),
});
export type SyncTtsBody = z.infer<typeof syncTtsBody>;

/** `POST /speech/tts/jobs` and `POST /tts/tasks` (spec 4.3). */
export const jobBody = z.object({
  ...ttsFields,
  engineModelId: modelIdField.optional().meta({ description: 'Alias of modelId.' }),
});
export type JobBody = z.infer<typeof jobBody>;

/** `POST {root_url}/v1/audio/speech` (spec 4.2). */
export const compatSpeechBody = z.object({
  model: z.string().min(1).meta({ description: 'An engine model id of this service (foreign model names are rejected).' }),
  input: ttsText,
  voice: z.union([voiceIdField, z.object({ id: voiceIdField })]).meta({ description: 'Voice id, or an object with id.' }),
  response_format: z.enum(['mp3', 'wav', 'pcm']).optional().meta({ description: 'Default mp3.' }),
  speed: speedField.optional(),
});
export type CompatSpeechBody = z.infer<typeof compatSpeechBody>;

// Job states are wire vocabulary, shared with the client: protocol/task-states.ts.
export { EnvelopeStatus, FlatStatus } from '../../../protocol/task-states.js';
import { EnvelopeStatus, FlatStatus } from '../../../protocol/task-states.js';

export const jobListQuery = z.object({ ...listQueryShape, status: z.enum(Object.values(EnvelopeStatus)).optional() });
export type JobListQuery = z.infer<typeof jobListQuery>;

export const flatListQuery = z.object({ ...listQueryShape, status: z.enum(Object.values(FlatStatus)).optional() });
export type FlatListQuery = z.infer<typeof flatListQuery>;

export const downloadQuery = z.object({
  download: z.enum(['0', '1', 'true', 'false']).optional().meta({ description: 'Set to 1 for the attachment (download) form.' }),
});
export type DownloadQuery = z.infer<typeof downloadQuery>;

export const signedFileQuery = z.object({
  expires: z.string().meta({ description: 'Expiry, Unix milliseconds.' }),
  sig: z.string().meta({ description: 'HMAC signature.' }),
  download: z.enum(['0', '1', 'true', 'false']).optional(),
});
export type SignedFileQuery = z.infer<typeof signedFileQuery>;

// ---- response schemas (documentation) ----

const nullableString = z.string().nullable();

export const syncCacheResponse = z.object({ audio_url: z.string(), credits_used: z.number().int(), quota_remaining: z.number().int() });

const segmentDoc = z.object({
  index: z.number().int(),
  status: z.enum(['pending', 'processing', 'success', 'fail']),
  characters: z.number().int(),
  playbackUrl: nullableString,
});

export const envelopeTaskDoc = z.object({
  id: z.string(),
  taskId: z.string(),
  status: z.enum(Object.values(EnvelopeStatus)),
  audioUrl: nullableString,
  delivery: z.object({ playbackUrl: nullableString, downloadUrl: nullableString, downloadReady: z.boolean() }),
  segments: z.array(segmentDoc),
  characters: z.number().int(),
  voiceId: z.string(),
  engineModelId: z.string(),
  format: z.string(),
  errorCode: nullableString,
  errorMessage: nullableString,
  createdAt: z.string(),
  startedAt: nullableString,
  completedAt: nullableString,
});

export const envelopeResponse = z.object({
  task: envelopeTaskDoc,
  record: z.object({ id: z.string(), status: z.string() }),
  requestId: z.string(),
  quotaRemaining: z.number().int().optional(),
  creditsUsed: z.number().int(),
});

export const jobListResponse = z.object({
  data: z.array(
    z.object({
      taskId: z.string(),
      status: z.enum(Object.values(EnvelopeStatus)),
      characters: z.number().int(),
      textPreview: z.string(),
      textFingerprint: z.string(),
      voiceId: z.string(),
      engineModelId: z.string(),
      creditsUsed: z.number().int(),
      createdAt: z.string(),
      audioUrl: nullableString,
    }),
  ),
  pagination: z.object({ page: z.number().int(), limit: z.number().int(), hasMore: z.boolean(), nextPage: z.number().int().nullable() }),
});

export const flatCreateResponse = z.object({ taskId: z.string(), status: z.enum(Object.values(FlatStatus)), creditsCharged: z.number().int() });

export const flatTaskDoc = z.object({
  id: z.string(),
  taskId: z.string(),
  type: z.literal('tts'),
  status: z.enum(Object.values(FlatStatus)),
  text: z.string(),
  voiceId: z.string(),
  engineModelId: z.string(),
  audioUrl: nullableString,
  ...taskMetaDoc,
});

export const flatListResponse = z.object({
  data: z.array(flatTaskDoc),
  pagination: z.object({ limit: z.number().int(), offset: z.number().int(), hasMore: z.boolean() }),
});

export const compatVoicesResponse = z.object({
  voices: z.array(z.object({ id: z.string(), name: z.string(), language: z.string().optional(), models: z.array(z.string()), defaultEngineModelId: z.string() })),
});
