/**
 * Voice design (spec 2.3, 3.5b, 4.8): create previews from a prompt, fetch
 * a candidate's preview audio (Bearer), save a candidate as a permanent
 * personal voice.
 *
 * Decisions (the spec leaves them open):
 * - Create and save require `Idempotency-Key` (400 `idempotency_key_required`
 *   without); the same key and body replay the first result (no second
 *   design, no second charge); a changed body under a used key is 422
 *   `idempotency_key_reused`.
 * - The prompt's words set the parameters (`../../voices/design.ts`);
 *   DESIGN_CANDIDATES candidates vary around them, spread over the requested
 *   `providers` (unknown provider: 400). Previews are rendered at create.
 * - A design costs DESIGN_CREDITS_PER_CANDIDATE credits per candidate,
 *   held before rendering and refunded if rendering fails (500
 *   `generation_failed`); saving is free.
 * - Designs expire after `accountSettings(ctx).designTtlMs` (default 30 min,
 *   env VOXPIPE_DESIGN_TTL_MS). Previewing or saving an expired design
 *   answers 410 `design_expired` for 24 h, then 404.
 * - Each candidate can be saved once: saving it again under a new key is 409
 *   `candidate_already_saved` with the existing `voiceId`.
 * - Only `visibility: "private"` is accepted. designId and candidateId are
 *   never voice ids: the saved voice gets a new `voice_` id.
 */
import { AUDIO_CONTENT_TYPE } from '../../../protocol/audio.js';
import { MODELS, PROVIDERS, type ModelInfo } from '../../catalog.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, HttpError, badRequest, notFound } from '../../http/errors.js';
import { defineRoute, type RouteDef } from '../../http/router.js';
import type { Account, Collection } from '../../store/types.js';
import { designCandidates, parsePrompt, type CandidateParameters, type DesignParameters } from '../../voices/design.js';
import { findLanguage } from '../../voices/languages.js';
import { holdOr402 } from '../common/billing.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { encodeFile, synthesizeFile } from '../common/synthesize.js';
import { accountErrors, idempotencyHeader } from './docs.js';
import { designBody, designResponse, previewQuery, saveDesignBody, voiceResponse, type DesignBody, type PreviewQuery, type SaveDesignBody } from './schemas.js';
import { accountSettings, DESIGN_CANDIDATES, DESIGN_CREDITS_PER_CANDIDATE, EXPIRED_DESIGN_GRACE_MS } from './settings.js';
import { createVoice, personalView, VoiceSource } from './voice-records.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const VOICE_DESIGNS_PATH = serverPath(REST_ROUTES.voiceDesigns);
/** Store collection of designs. */
export const DESIGNS_COLLECTION = 'voice-designs';

/** Error codes of the design routes beyond the common ones. */
export const DesignErrorCode = {
  expired: 'design_expired',
  alreadySaved: 'candidate_already_saved',
} as const;

interface StoredCandidate {
  candidateId: string;
  parameters: CandidateParameters & { provider: string; engineModelId: string };
  /** Engine PCM of the preview (s16le mono at the engine's rate). */
  pcm: Buffer;
  /** The preview as WAV. */
  wav: Buffer;
  savedVoiceId: string | null;
}

interface StoredDesign {
  designId: string;
  userId: string;
  prompt: string;
  previewText: string;
  providers: string[];
  parameters: DesignParameters;
  candidates: StoredCandidate[];
  creditsCharged: number;
  createdAt: string;
  expiresAt: string;
}

function modelOfProvider(provider: string): ModelInfo {
  return MODELS.find((m) => m.provider === provider) ?? MODELS[0]!;
}

function designs(ctx: ServerContext): Collection<StoredDesign> {
  return ctx.store.collection<StoredDesign>(DESIGNS_COLLECTION);
}

/** Forget designs whose 410 period is over. */
function sweep(ctx: ServerContext): void {
  const now = ctx.now().getTime();
  for (const d of [...designs(ctx).values()]) if (Date.parse(d.expiresAt) + EXPIRED_DESIGN_GRACE_MS < now) designs(ctx).delete(d.designId);
}

/** A live design of `account`: 404 unknown or another account's, 410 expired. */
function liveDesign(ctx: ServerContext, account: Account, designId: string): StoredDesign {
  sweep(ctx);
  const design = designs(ctx).get(designId);
  if (!design || design.userId !== account.userId) throw notFound('voice design');
  if (Date.parse(design.expiresAt) <= ctx.now().getTime()) {
    throw new HttpError(410, DesignErrorCode.expired, `voice design ${designId} expired at ${design.expiresAt}; create a new design`, { expiresAt: design.expiresAt });
  }
  return design;
}

function candidateOf(design: StoredDesign, candidateId: string): StoredCandidate {
  const candidate = design.candidates.find((c) => c.candidateId === candidateId);
  if (!candidate) throw notFound('candidate');
  return candidate;
}

function previewUrl(ctx: ServerContext, designId: string, candidateId: string): string {
  return `${ctx.urls.baseUrl}/voice-designs/${encodeURIComponent(designId)}/candidates/${encodeURIComponent(candidateId)}/audio`;
}

function providersOr400(requested: string[] | undefined): string[] {
  const providers = [...new Set(requested ?? [PROVIDERS[0]!.id])];
  const unknown = providers.filter((p) => !PROVIDERS.some((known) => known.id === p));
  if (unknown.length > 0) throw badRequest(`unknown provider ${JSON.stringify(unknown[0]!.slice(0, 64))}`, { supportedProviders: PROVIDERS.map((p) => p.id) });
  return providers;
}

async function createDesign(ctx: ServerContext, account: Account, body: DesignBody): Promise<Record<string, unknown>> {
  sweep(ctx);
  const providers = providersOr400(body.providers);
  const parameters = parsePrompt(body.prompt);
  const designId = ctx.newId('vdesign');
  const credits = DESIGN_CREDITS_PER_CANDIDATE * DESIGN_CANDIDATES;
  const refId = `voice-design:${designId}`;
  await holdOr402(ctx, account, 'credits', credits, refId, `voice design ${designId}`);
  const candidates: StoredCandidate[] = [];
  try {
    for (const [i, params] of designCandidates(parameters, DESIGN_CANDIDATES).entries()) {
      const provider = providers[i % providers.length]!;
      const model = modelOfProvider(provider);
      const language = findLanguage(params.language);
      const { file, pcm } = await synthesizeFile(ctx, body.previewText, 'wav', {
        voice: { basePitchHz: params.basePitchHz, rate: model.rate * params.rate, espeakVoice: params.espeakVoice },
      });
      candidates.push({
        candidateId: ctx.newId('vcand'),
        parameters: { ...params, provider, engineModelId: model.id, ...(language ? { language: language.tag } : {}) },
        pcm,
        wav: file,
        savedVoiceId: null,
      });
    }
  } catch (err) {
    ctx.ledger.release(refId);
    throw new HttpError(500, ApiErrorCode.generationFailed, `preview generation failed; the charge was refunded (${(err as Error)?.message ?? 'unknown error'})`);
  }
  ctx.ledger.commit(refId);
  const now = ctx.now();
  const design: StoredDesign = {
    designId,
    userId: account.userId,
    prompt: body.prompt,
    previewText: body.previewText,
    providers,
    parameters,
    candidates,
    creditsCharged: credits,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + accountSettings(ctx).designTtlMs).toISOString(),
  };
  designs(ctx).set(designId, design);
  return {
    designId,
    prompt: design.prompt,
    previewText: design.previewText,
    providers,
    parameters,
    candidates: candidates.map((c) => ({ candidateId: c.candidateId, previewAudioUrl: previewUrl(ctx, designId, c.candidateId), parameters: c.parameters })),
    billing: {
      creditsCharged: credits,
      currency: 'credits',
      creditsPerCandidate: DESIGN_CREDITS_PER_CANDIDATE,
      candidates: candidates.length,
      creditsRemaining: account.credits,
    },
    createdAt: design.createdAt,
    expiresAt: design.expiresAt,
  };
}

function saveCandidate(ctx: ServerContext, account: Account, designId: string, body: SaveDesignBody): Record<string, unknown> {
  const design = liveDesign(ctx, account, designId);
  const candidate = candidateOf(design, body.candidateId);
  if (candidate.savedVoiceId !== null) {
    throw new HttpError(409, DesignErrorCode.alreadySaved, `candidate ${candidate.candidateId} was already saved as voice ${candidate.savedVoiceId}`, { voiceId: candidate.savedVoiceId });
  }
  const p = candidate.parameters;
  const voice = createVoice(ctx, account, {
    name: body.name,
    basePitchHz: p.basePitchHz,
    rate: p.rate,
    espeakVoice: p.espeakVoice,
    gender: p.gender,
    language: p.language,
    source: VoiceSource.design,
    description: body.description ?? design.prompt,
    defaultEngineModelId: p.engineModelId,
    designId,
    candidateId: candidate.candidateId,
  });
  candidate.savedVoiceId = voice.voiceId;
  designs(ctx).set(designId, design);
  return { ...personalView(voice), visibility: body.visibility, designId, candidateId: candidate.candidateId };
}

export function designRoutes(ctx: ServerContext, idempotency: IdempotencyStore): RouteDef<never, never>[] {
  return [
    defineRoute<DesignBody, unknown>({
      method: 'POST',
      path: VOICE_DESIGNS_PATH,
      summary: 'Design a voice from a prompt: candidates with preview audio (expire after 30 min by default)',
      tags: ['voices'],
      body: designBody,
      headers: [idempotencyHeader(true)],
      responses: { 201: { description: 'The design with its candidates and billing', schema: designResponse }, ...accountErrors(400, 401, 402, 409, 422, 500) },
      handler: ({ account, body, req }) =>
        idempotency.run(account, 'voice-design', idempotencyKeyOf(req.headers), body, async () => ({ status: 201, json: await createDesign(ctx, account, body) }), true),
    }),
    defineRoute<unknown, PreviewQuery>({
      method: 'GET',
      path: `${VOICE_DESIGNS_PATH}/{designId}/candidates/{candidateId}/audio`,
      summary: "A candidate's preview audio (wav, or mp3 with ?format=mp3)",
      tags: ['voices'],
      query: previewQuery,
      responses: { 200: { description: 'Preview audio', contentType: 'audio/wav' }, ...accountErrors(400, 401, 404, 410) },
      handler: async ({ account, params, query }) => {
        const design = liveDesign(ctx, account, params['designId']!);
        const candidate = candidateOf(design, params['candidateId']!);
        const body = query.format === 'wav' ? candidate.wav : await encodeFile(ctx, 'mp3', candidate.pcm);
        return {
          body,
          headers: {
            'content-type': AUDIO_CONTENT_TYPE[query.format],
            'content-disposition': `inline; filename="${candidate.candidateId}.${query.format}"`,
            'cache-control': 'private, no-store',
          },
        };
      },
    }),
    defineRoute<SaveDesignBody, unknown>({
      method: 'POST',
      path: `${VOICE_DESIGNS_PATH}/{designId}/voices`,
      summary: 'Save a design candidate as a permanent personal voice',
      tags: ['voices'],
      body: saveDesignBody,
      headers: [idempotencyHeader(true)],
      responses: { 201: { description: 'The new personal voice', schema: voiceResponse }, ...accountErrors(400, 401, 404, 409, 410, 422) },
      handler: ({ account, body, params, req }) => {
        const designId = params['designId']!;
        return idempotency.run(account, `voice-design-save:${designId}`, idempotencyKeyOf(req.headers), body, async () => ({ status: 201, json: saveCandidate(ctx, account, designId, body) }), true);
      },
    }),
  ] as unknown as RouteDef<never, never>[];
}
