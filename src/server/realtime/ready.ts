/** The `ready` event both modes send after an accepted `start`. */
import { AudioFormat } from '../../protocol/audio.js';
import type { Mode } from '../../protocol/constants.js';
import { pcmMetadata } from './capabilities.js';
import type { ResolvedRequest } from './resolve-request.js';
import type { EventBody, SessionPort } from './session-port.js';

/** True for formats whose frames carry PCM metadata (spec 6 rule 2; wav too, since it wraps PCM). */
export function carriesPcmMetadata(format: AudioFormat): boolean {
  return format === AudioFormat.pcm || format === AudioFormat.wav;
}

/** Body of `ready`: the resolved request, plus PCM metadata for pcm and wav. */
export function readyBody(port: SessionPort, resolved: ResolvedRequest, mode: Mode, requestId: string, extra: Record<string, unknown> = {}): EventBody<'ready'> {
  return {
    mode,
    request_id: requestId,
    session_id: port.sessionId,
    provider: resolved.provider.id,
    model: resolved.model.id,
    voice_id: resolved.voice.voiceId,
    format: resolved.format,
    ...(carriesPcmMetadata(resolved.format) ? pcmMetadata(port.ctx) : {}),
    ...extra,
  };
}
