/**
 * Check `start.request` against the capability matrix (spec 4.10): the codec
 * already checked shapes and ranges; this checks that the model, voice,
 * format and provider parameters exist together here. Nothing is silently
 * ignored.
 */
import { AudioFormat } from '../../protocol/audio.js';
import { ErrorCode, PROVIDER_PARAMETERS } from '../../protocol/constants.js';
import type { StartRequest } from '../../protocol/events.js';
import { EMOTIONS, findModel, findProvider, findPublicVoice, modelFormats, type ModelInfo, type ProviderInfo, type PublicVoice } from '../catalog.js';
import type { ServerContext } from '../context.js';
import { RealtimeFailure } from './failure.js';

/** Format when `start.request.format` is absent: every provider here produces pcm. */
export const DEFAULT_FORMAT: AudioFormat = AudioFormat.pcm;

/** A `start.request` that names a working combination. */
export interface ResolvedRequest {
  request: StartRequest;
  model: ModelInfo;
  provider: ProviderInfo;
  voice: PublicVoice;
  format: AudioFormat;
}

const fail = (code: ErrorCode, message: string, path: string) => new RealtimeFailure(code, message, { path, stage: 'start' });

/** Resolve `request` or throw a non-terminal RealtimeFailure naming the field. */
export function resolveRequest(ctx: ServerContext, request: StartRequest): ResolvedRequest {
  const model = findModel(request.model);
  const provider = model && findProvider(model.provider);
  if (!model || !provider) throw fail(ErrorCode.modelNotFound, `unknown model ${JSON.stringify(request.model)}; see GET /v2/tts/capabilities`, 'request.model');
  const formats = modelFormats(model, ctx.formats);
  if (formats.length === 0) throw fail(ErrorCode.modelNotFound, `model ${model.id} is not available on this server`, 'request.model');
  const voice = findPublicVoice(request.voice_id);
  if (!voice) throw fail(ErrorCode.voiceNotFound, `unknown public voice ${JSON.stringify(request.voice_id)}`, 'request.voice_id');
  if (!voice.models.includes(model.id)) throw fail(ErrorCode.unsupportedParameter, `voice ${voice.voiceId} does not support model ${model.id}`, 'request.voice_id');
  const format = (request.format ?? DEFAULT_FORMAT) as AudioFormat;
  if (!formats.includes(format)) throw fail(ErrorCode.unsupportedParameter, `format ${format} is not available for model ${model.id} (available: ${formats.join(', ')})`, 'request.format');
  for (const name of PROVIDER_PARAMETERS) {
    if (request[name] !== undefined && !provider.parameters.includes(name)) {
      throw fail(ErrorCode.unsupportedParameter, `provider ${provider.id} (model ${model.id}) does not accept ${name}`, `request.${name}`);
    }
  }
  if (request.emotion !== undefined && !(EMOTIONS as readonly string[]).includes(request.emotion)) {
    throw fail(ErrorCode.unsupportedParameter, `unknown emotion ${JSON.stringify(request.emotion)} (known: ${EMOTIONS.join(', ')})`, 'request.emotion');
  }
  return { request, model, provider, voice, format };
}
