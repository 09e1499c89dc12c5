/**
 * Turning a validated TTS request into what the engine needs: voice, model,
 * format, speed and emotion, with the 400/403 answers of spec 4.1-4.3.
 */
import type { AudioFormat } from '../../../protocol/audio.js';
import { LIMITS } from '../../../protocol/limits.js';
import { findModel, findProvider, MODELS, modelFormats, type ModelInfo } from '../../catalog.js';
import type { ServerContext } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import type { Account } from '../../store/types.js';
import { resolveVoice, type ResolvedVoice } from '../common/voices.js';

/** A TTS request ready for the engine. */
export interface TtsParams {
  text: string;
  voice: ResolvedVoice;
  model: ModelInfo;
  format: AudioFormat;
  speed: number;
  emotion: string | null;
}

export interface TtsRequestFields {
  text: string;
  voiceId?: string | undefined;
  modelId?: string | undefined;
  format?: AudioFormat | undefined;
  speed?: number | undefined;
  emotion?: string | undefined;
}

/** 400 with `supportedModels` for an unknown model id (foreign names are not aliases). */
export function modelOr400(id: string): ModelInfo {
  const model = findModel(id);
  if (!model) throw badRequest(`unknown model ${JSON.stringify(id.slice(0, 128))}`, { supportedModels: MODELS.map((m) => m.id) });
  return model;
}

/**
 * Resolve and check a TTS request: voice (400 unknown, 403 another
 * account's), model (default the voice's, 400 unknown or not supported by
 * the voice), format (default mp3 where the model has it, else wav; 400 when
 * the model cannot produce it), emotion (400 when the model's provider has no
 * emotion parameter).
 */
export function resolveTtsParams(ctx: ServerContext, account: Account, fields: TtsRequestFields, defaultFormat?: AudioFormat): TtsParams {
  if (fields.voiceId === undefined) throw badRequest('voiceId is required');
  const voice = resolveVoice(ctx, account, fields.voiceId);
  const model = modelOr400(fields.modelId ?? voice.defaultEngineModelId);
  if (!voice.models.includes(model.id)) {
    throw badRequest(`voice ${voice.voiceId} does not support model ${model.id}`, { supportedModels: [...voice.models] });
  }
  const formats = modelFormats(model, ctx.formats);
  const preferred = defaultFormat ?? (formats.includes('mp3') ? 'mp3' : 'wav');
  const format = fields.format ?? preferred;
  if (!formats.includes(format)) throw badRequest(`format ${format} is not available for model ${model.id}`, { supportedFormats: formats });
  let emotion: string | null = null;
  if (fields.emotion !== undefined) {
    if (!findProvider(model.provider)?.parameters.includes('emotion')) throw badRequest(`model ${model.id} does not support emotion`);
    emotion = fields.emotion;
  }
  return { text: fields.text, voice, model, format, speed: fields.speed ?? LIMITS.speedDefault, emotion };
}
