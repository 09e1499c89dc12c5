/**
 * `GET /v2/tts/capabilities` (spec 4.10): per site, the providers with their
 * models, formats, parameters and voices, the limits, the modes and the PCM
 * metadata. Only combinations that really work are listed: a model whose
 * formats have no working encoder here is left out, and so is a provider
 * left with no model.
 */
import { z } from 'zod';
import { AUDIO_FORMATS } from '../../protocol/audio.js';
import { DEFAULT_MODEL, Mode, PROTOCOL_VERSION, REALTIME_PATHS, SUBPROTOCOL } from '../../protocol/constants.js';
import { LIMITS } from '../../protocol/limits.js';
import { EMOTIONS, MODELS, PROVIDERS, modelFormats, voicesForModel } from '../catalog.js';
import type { ServerContext } from '../context.js';
import { ApiErrorCode, HttpError, notFound } from '../http/errors.js';
import { defineRoute, type RouteDef } from '../http/router.js';

/** Values of `start.request.latency` (the codec's schema accepts exactly these). */
export const LATENCY_VALUES = ['normal', 'balanced', 'low'] as const;

/** PCM layout of every engine here: mono, signed 16-bit little-endian. */
export function pcmMetadata(ctx: ServerContext): { sample_rate: number; channels: number; bit_depth: number } {
  return { sample_rate: ctx.engine.sampleRate, channels: 1, bit_depth: 16 };
}

/** The capabilities document of this server. */
export function buildCapabilities(ctx: ServerContext) {
  const providers = PROVIDERS.map((provider) => {
    const models = MODELS.filter((m) => m.provider === provider.id)
      .map((m) => ({
        id: m.id,
        default: m.id === DEFAULT_MODEL,
        formats: modelFormats(m, ctx.formats),
        voices: voicesForModel(m.id).map((v) => ({ voice_id: v.voiceId, name: v.name, language: v.language, gender: v.gender })),
      }))
      .filter((m) => m.formats.length > 0 && m.voices.length > 0);
    return { id: provider.id, parameters: [...provider.parameters], formats: [...new Set(models.flatMap((m) => m.formats))], models };
  }).filter((p) => p.models.length > 0);

  return {
    site: ctx.site,
    protocol_version: PROTOCOL_VERSION,
    subprotocol: SUBPROTOCOL,
    paths: REALTIME_PATHS,
    modes: [Mode.simple, Mode.reliable],
    default_model: DEFAULT_MODEL,
    providers,
    parameters: {
      format: { values: AUDIO_FORMATS.filter((f) => ctx.formats.includes(f)), default: 'pcm' },
      speed: { min: LIMITS.speedMin, max: LIMITS.speedMax, default: LIMITS.speedDefault },
      volume: { min: LIMITS.volumeMin, max: LIMITS.volumeMax, default: 1 },
      language: { min_length: LIMITS.languageMinChars, max_length: LIMITS.languageMaxChars },
      chunk_length: { min: LIMITS.chunkLengthMin, max: LIMITS.chunkLengthMax },
      latency: { values: [...LATENCY_VALUES], providers: providerNamesWith('latency') },
      emotion: { values: [...EMOTIONS], providers: providerNamesWith('emotion') },
      instructions: { max_length: 1000, providers: providerNamesWith('instructions') },
      optimize_instructions: { type: 'boolean', providers: providerNamesWith('optimize_instructions') },
    },
    limits: {
      simple_request_max_characters: LIMITS.simpleRequestMaxChars,
      text_frame_max_characters: LIMITS.textFrameMaxChars,
      segment_max_characters: LIMITS.segmentMaxChars,
      session_max_units: LIMITS.sessionMaxUnits,
      id_min_length: LIMITS.idMinChars,
      id_max_length: LIMITS.idMaxChars,
      max_frame_bytes: LIMITS.maxFrameBytes,
      auth_timeout_ms: ctx.authTimeoutMs,
    },
    pcm: { ...pcmMetadata(ctx), encoding: 's16le' },
    billing: { unit: 'character', currency: 'quota', units_per_character: 1 },
  };
}

function providerNamesWith(parameter: (typeof PROVIDERS)[number]['parameters'][number]): string[] {
  return PROVIDERS.filter((p) => p.parameters.includes(parameter)).map((p) => p.id);
}

const CapabilitiesSchema = z.looseObject({
  site: z.string(),
  protocol_version: z.number(),
  modes: z.array(z.string()),
  providers: z.array(z.looseObject({ id: z.string(), parameters: z.array(z.string()), models: z.array(z.looseObject({ id: z.string(), formats: z.array(z.string()) })) })),
  limits: z.record(z.string(), z.number()),
  pcm: z.looseObject({ sample_rate: z.number(), channels: z.number(), bit_depth: z.number() }),
});

/** `GET /v2/tts/capabilities`: public, no key needed (it reveals nothing of an account). */
export function capabilitiesRoute(ctx: ServerContext): RouteDef {
  return defineRoute({
    method: 'GET',
    path: REALTIME_PATHS.capabilities,
    summary: 'Providers, models, formats, voices, parameters, limits, modes and PCM metadata of realtime TTS',
    tags: ['realtime'],
    auth: false,
    responses: { 200: { description: 'capabilities of this site', schema: CapabilitiesSchema } },
    handler: () => {
      const style = ctx.dialect.capabilities;
      if (style === 'absent') throw notFound('route');
      // A deployment may refuse the document, or answer one no parser reads (treated as absent).
      if (style === 'refused-403') throw new HttpError(403, ApiErrorCode.forbidden, 'capabilities are not available to this client');
      if (style === 'refused-500') throw new HttpError(500, ApiErrorCode.internalError, 'capabilities could not be loaded');
      if (style === 'unparseable') return { headers: { 'content-type': 'application/json' }, body: `{"site":${JSON.stringify(ctx.site)},"providers":[{"id":` };
      const doc = buildCapabilities(ctx);
      return { json: ctx.dialect.capabilities === 'top-level-models' ? topLevelModels(doc) : doc };
    },
  });
}

/**
 * The `alt` dialect's layout of the same facts: models at the top level,
 * each with its provider and a default voice, no voice lists (a client
 * finds voices through `GET /voices`).
 */
function topLevelModels(doc: ReturnType<typeof buildCapabilities>) {
  return {
    site: doc.site,
    protocol_version: doc.protocol_version,
    modes: doc.modes,
    models: doc.providers.flatMap((p) =>
      p.models.map((m) => ({ id: m.id, provider: p.id, default: m.default, default_voice_id: m.voices[0]?.voice_id, formats: m.formats })),
    ),
    pcm: doc.pcm,
  };
}
