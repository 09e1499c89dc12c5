/**
 * Request and response schemas of the account routes (profile, usage,
 * voices, voice design). Request schemas validate (400 `invalid_request`)
 * and feed `openapi.json`, as do the response schemas.
 */
import { z } from 'zod';
import { LIMITS } from '../../../protocol/limits.js';
import { MODELS, PROVIDERS } from '../../catalog.js';
import { VOICE_LANGUAGES } from '../../voices/languages.js';

const languageField = z
  .string()
  .min(2)
  .max(35)
  .meta({ description: `Language of the voice (BCP 47), one of ${VOICE_LANGUAGES.map((l) => l.tag).join(', ')} or their primary subtag; default en-US.` });
const voiceName = z.string().trim().min(1).max(100).meta({ description: 'Display name, 1 to 100 characters.' });
const description = z.string().max(500).optional().meta({ description: 'Free text, at most 500 characters.' });

/** `POST /profile`: unknown fields are rejected (400), so a typo never passes silently. */
export const profileUpdateBody = z.strictObject({
  webhookUrl: z
    .union([z.string().max(2048), z.null()])
    .meta({ description: 'http(s) URL receiving task-completion webhooks; null removes it. Must be publicly reachable.' }),
  rotateWebhookSecret: z.boolean().optional().meta({ description: 'Issue a new webhook signing secret (returned once in this response).' }),
});
export type ProfileUpdateBody = z.infer<typeof profileUpdateBody>;

export const profileResponse = z.looseObject({
  user_id: z.string(),
  api_quota_remaining: z.number().int(),
  tier: z.string(),
  credits: z.number().int(),
  webhookUrl: z.string().nullable(),
  webhookSecretHint: z.string().meta({ description: 'Last characters of the webhook signing secret.' }),
  webhookSecret: z.string().optional().meta({ description: 'The full signing secret: only in the response of a POST that sets a webhookUrl.' }),
});

export const usageQuery = z.object({
  limit: z.coerce.number().int().min(LIMITS.listLimitMin).max(LIMITS.listLimitMax).default(LIMITS.listLimitDefault).meta({ description: 'Ledger entries returned, 1 to 100 (newest first).' }),
  currency: z.enum(['credits', 'quota']).optional().meta({ description: 'Only ledger entries of this currency.' }),
});
export type UsageQuery = z.infer<typeof usageQuery>;

const ledgerEntry = z.object({
  refId: z.string(),
  currency: z.enum(['credits', 'quota']),
  amount: z.number(),
  state: z.enum(['held', 'committed', 'released']),
  reason: z.string(),
  createdAt: z.string(),
  releasedAt: z.string().nullable(),
});

export const usageResponse = z.looseObject({
  user_id: z.string(),
  balance: z.object({ credits: z.number(), apiQuota: z.number() }),
  apiUsage: z.looseObject({
    totalCreditsCharged: z.number().meta({ description: 'Credits charged and not refunded, over the whole ledger.' }),
    totalQuotaCharged: z.number(),
    totalCreditsRefunded: z.number(),
    totalQuotaRefunded: z.number(),
    charges: z.number().int(),
  }),
  ledger: z.array(ledgerEntry),
  pagination: z.object({ limit: z.number().int(), hasMore: z.boolean() }),
});

export const voiceListQuery = z.object({
  type: z.enum(['public', 'personal']).optional().meta({ description: 'Only public or only personal voices.' }),
  model: z.string().min(1).max(128).optional().meta({ description: `Only voices supporting this engine model (${MODELS.map((m) => m.id).join(', ')}).` }),
  language: z.string().min(2).max(35).optional().meta({ description: 'Only voices of this language (a tag or its primary subtag, e.g. en).' }),
  limit: z.coerce.number().int().min(1).max(100).default(100).meta({ description: 'Voices per page, 1 to 100 (default 100).' }),
  offset: z.coerce.number().int().min(0).default(0),
  page: z.coerce.number().int().min(1).optional().meta({ description: 'Page number from 1 (dialects that page by number).' }),
  pageSize: z.coerce.number().int().min(1).max(100).optional().meta({ description: 'Voices per page (dialects that page by number; default 20).' }),
});
export type VoiceListQuery = z.infer<typeof voiceListQuery>;

const voiceView = z.looseObject({
  voiceId: z.string(),
  name: z.string(),
  type: z.enum(['public', 'personal']),
  language: z.string(),
  models: z.array(z.string()),
  defaultEngineModelId: z.string(),
});

export const voiceListResponse = z.object({
  data: z.array(voiceView),
  pagination: z.object({ limit: z.number().int(), offset: z.number().int(), hasMore: z.boolean(), total: z.number().int() }),
});

/** `POST /voices` as JSON (multipart carries the same fields, plus the file `audio`). */
export const cloneBody = z.object({
  name: voiceName,
  audioUrl: z.string().max(2048).optional().meta({ description: 'Public http(s) URL of the reference audio (JSON requests); multipart requests send the file as field `audio` instead.' }),
  language: languageField.optional(),
  description,
});
export type CloneBody = z.infer<typeof cloneBody>;

export const voiceResponse = z.looseObject({
  voiceId: z.string(),
  name: z.string(),
  type: z.literal('personal'),
  source: z.enum(['clone', 'design']),
  models: z.array(z.string()),
  defaultEngineModelId: z.string(),
  basePitchHz: z.number(),
  rate: z.number(),
});

export const deleteVoiceResponse = z.object({ voiceId: z.string(), deleted: z.literal(true), deletedAt: z.string() });

/** Legacy `POST /api/open/delete-model`. */
export const legacyDeleteBody = z.object({
  voiceId: z.string().min(1).max(128).optional(),
  reference_id: z.string().min(1).max(128).optional(),
  id: z.string().min(1).max(128).optional(),
});
export type LegacyDeleteBody = z.infer<typeof legacyDeleteBody>;

const providerIds = PROVIDERS.map((p) => p.id);

export const designBody = z.object({
  prompt: z.string().trim().min(1).max(1000).meta({ description: 'What the voice should sound like, e.g. "a deep, calm British male voice".' }),
  previewText: z.string().trim().min(1).max(500).meta({ description: 'Text each candidate preview speaks, 1 to 500 characters.' }),
  providers: z
    .array(z.string())
    .min(1)
    .max(providerIds.length)
    .optional()
    .meta({ description: `Provider identifiers (${providerIds.join(', ')}); candidates are spread over them. Default [${providerIds[0]}].` }),
});
export type DesignBody = z.infer<typeof designBody>;

export const designResponse = z.looseObject({
  designId: z.string(),
  candidates: z.array(z.looseObject({ candidateId: z.string(), previewAudioUrl: z.string(), parameters: z.looseObject({}) })),
  billing: z.looseObject({ creditsCharged: z.number().int(), currency: z.string() }),
  createdAt: z.string(),
  expiresAt: z.string(),
});

export const previewQuery = z.object({
  format: z.enum(['wav', 'mp3']).default('wav').meta({ description: 'Preview container; default wav.' }),
});
export type PreviewQuery = z.infer<typeof previewQuery>;

export const saveDesignBody = z.object({
  candidateId: z.string().min(1).max(128),
  name: voiceName,
  visibility: z.literal('private').default('private').meta({ description: 'Only `private` (a personal voice of the account).' }),
  description,
});
export type SaveDesignBody = z.infer<typeof saveDesignBody>;
