/**
 * One charged generation for sync and compatible TTS: hold the credits
 * (402 when short), synthesize, then commit on success or release on
 * failure (500 `generation_failed`, refunded).
 */
import { AUDIO_CONTENT_TYPE } from '../../../protocol/audio.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, HttpError } from '../../http/errors.js';
import type { Account } from '../../store/types.js';
import { holdOr402, ttsCredits } from '../common/billing.js';
import { enginePcmInfo, synthesizeFile, SynthesisError, type EngineVoiceParams } from '../common/synthesize.js';
import type { TtsParams } from './params.js';
import { HEADERS } from '../../../protocol/rest.js';

export interface Generated {
  file: Buffer;
  /** Credits charged (one per character). */
  credits: number;
}

/** Engine parameters of the request's voice on its model. */
export function engineVoiceOf(params: Pick<TtsParams, 'voice' | 'model'>): EngineVoiceParams {
  return { basePitchHz: params.voice.basePitchHz, rate: params.model.rate * params.voice.rate, espeakVoice: params.voice.espeakVoice };
}

/** Thrown when generation failed after the charge was held and then refunded. */
export function generationFailed(err: unknown): HttpError {
  const detail = err instanceof SynthesisError ? err.message : 'internal error during generation';
  return new HttpError(500, ApiErrorCode.generationFailed, `${detail}; nothing was charged`, { refunded: true });
}

/**
 * Hold the credits of `params.text` under `refId`, generate, and commit
 * (success) or release (failure, then throws 500 `generation_failed`).
 */
export async function generateCharged(ctx: ServerContext, account: Account, params: TtsParams, refId: string): Promise<Generated> {
  const credits = ttsCredits(params.text);
  await holdOr402(ctx, account, 'credits', credits, refId, `tts ${params.model.id}`);
  try {
    const { file } = await synthesizeFile(ctx, params.text, params.format, { voice: engineVoiceOf(params), speed: params.speed });
    ctx.ledger.commit(refId);
    return { file, credits };
  } catch (err) {
    ctx.ledger.release(refId);
    if (!(err instanceof SynthesisError)) ctx.log('tts generation crashed', err);
    throw generationFailed(err);
  }
}

/** Content-Type and PCM metadata headers of an audio body. */
export function audioHeaders(ctx: ServerContext, format: TtsParams['format']): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': AUDIO_CONTENT_TYPE[format] };
  if (format === 'pcm') {
    const info = enginePcmInfo(ctx);
    Object.assign(headers, { [HEADERS.sampleRate]: String(info.sampleRate), [HEADERS.channels]: String(info.channels), [HEADERS.bitDepth]: String(info.bitDepth) });
  }
  return headers;
}
