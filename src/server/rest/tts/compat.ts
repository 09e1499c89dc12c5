/**
 * The compatible contract (spec 4.2) at the host root:
 * `POST /v1/audio/speech` and `GET /v1/audio/voices`. `model` must be an
 * engine model id of this service (foreign names such as `tts-1` are not
 * aliases: 400 with `supportedModels`). Same authentication, billing and
 * generation as sync TTS; an optional `Idempotency-Key` replays the first
 * audio without a second charge.
 */
import { PUBLIC_VOICES } from '../../catalog.js';
import type { ServerContext } from '../../context.js';
import { defineRoute, type RouteDef } from '../../http/router.js';
import { quotaRemaining } from '../common/billing.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { PERSONAL_VOICES_COLLECTION, resolveVoice, type PersonalVoiceRecord } from '../common/voices.js';
import { errorResponses } from './docs.js';
import { audioHeaders, generateCharged } from './generate.js';
import { modelOr400, resolveTtsParams } from './params.js';
import { compatSpeechBody, compatVoicesResponse, type CompatSpeechBody } from './schemas.js';
import { COMPAT_ROUTES } from '../../../protocol/rest.js';

export const COMPAT_PATHS = COMPAT_ROUTES;

export const QUOTA_REMAINING_HEADER = 'X-OpenAPI-Quota-Remaining';
export const CREDITS_USED_HEADER = 'X-OpenAPI-Credits-Used';

export function compatRoutes(ctx: ServerContext, idempotency: IdempotencyStore): RouteDef<never, never>[] {
  return [
    defineRoute<CompatSpeechBody, unknown>({
      method: 'POST',
      generation: true,
      path: COMPAT_PATHS.speech,
      summary: 'Compatible-contract speech synthesis (binary audio)',
      tags: ['compatible'],
      capability: 'tts',
      body: compatSpeechBody,
      headers: [{ name: 'Idempotency-Key', required: false, description: 'Replays the first audio of this key for the same body without a second charge.' }],
      responses: {
        200: { description: `Audio (audio/mpeg for mp3, audio/wav, audio/pcm); headers ${QUOTA_REMAINING_HEADER} and ${CREDITS_USED_HEADER}`, contentType: 'audio/mpeg' },
        ...errorResponses(400, 401, 402, 403, 409, 422, 500),
      },
      handler: ({ account, body, req, requestId }) =>
        idempotency.run(account, 'compat-speech', idempotencyKeyOf(req.headers), body, async () => {
          const model = modelOr400(body.model);
          const params = resolveTtsParams(
            ctx,
            account,
            { text: body.input, voiceId: typeof body.voice === 'string' ? body.voice : body.voice.id, modelId: model.id, format: body.response_format, speed: body.speed },
            'mp3',
          );
          const generated = await generateCharged(ctx, account, params, `compat:${requestId}`);
          return {
            status: 200,
            body: generated.file,
            headers: { ...audioHeaders(ctx, params.format), [QUOTA_REMAINING_HEADER]: String(quotaRemaining(account)), [CREDITS_USED_HEADER]: String(generated.credits) },
          };
        }),
    }),
    defineRoute<unknown, unknown>({
      method: 'GET',
      path: COMPAT_PATHS.voices,
      summary: 'Voices for the compatible contract: public voices and your personal voices',
      tags: ['compatible'],
      responses: { 200: { description: 'Voices', schema: compatVoicesResponse }, ...errorResponses(401) },
      handler: ({ account }) => {
        const pub = PUBLIC_VOICES.map((v) => ({ id: v.voiceId, voiceId: v.voiceId, name: v.name, language: v.language, gender: v.gender, type: 'public', models: v.models, defaultEngineModelId: v.defaultEngineModelId }));
        const own = [...ctx.store.collection<PersonalVoiceRecord>(PERSONAL_VOICES_COLLECTION).values()]
          .filter((v) => v.userId === account.userId && !v.deletedAt)
          .map((v) => resolveVoice(ctx, account, v.voiceId))
          .map((v) => ({ id: v.voiceId, voiceId: v.voiceId, name: v.name, type: 'personal', models: v.models, defaultEngineModelId: v.defaultEngineModelId }));
        return { json: { voices: [...pub, ...own] } };
      },
    }),
  ] as unknown as RouteDef<never, never>[];
}
