/**
 * What the service says it can do, from the realtime capabilities route
 * (`GET {rt_http_url}/v2/tts/capabilities`): models, their formats and their
 * public voices. The bench sweeps only over combinations listed here, so a
 * refused combination is reported as skipped rather than as errors.
 */
import { AUDIO_FORMATS, isAudioFormat, type AudioFormat } from '../protocol/audio.js';
import { readCapabilities } from '../protocol/capabilities.js';
import { DEFAULT_MODEL } from '../protocol/constants.js';
import type { ServiceConfig } from '../config.js';
import { defaultVoice, fetchCapabilities as discoverCapabilities } from '../discovery.js';

/** One model as the bench uses it. */
export interface BenchModel {
  id: string;
  /** The service's default model. */
  isDefault: boolean;
  formats: AudioFormat[];
  voices: { id: string; name?: string }[];
}

export interface BenchCapabilities {
  /** `capabilities` (read from the route) or `fallback` (route unavailable: default model, every format, voices from the compatible list). */
  source: 'capabilities' | 'fallback';
  models: BenchModel[];
}

/** Parse the capabilities document in any shape (`protocol/capabilities.ts`); unknown formats dropped. */
export function parseCapabilities(body: unknown): BenchModel[] {
  return readCapabilities(body).models.map((m) => ({
    id: m.id,
    isDefault: m.isDefault,
    formats: m.formats.filter(isAudioFormat),
    // A model that names only its default voice still has that one.
    voices: m.voices.length > 0 ? m.voices : m.defaultVoiceId !== undefined ? [{ id: m.defaultVoiceId }] : [],
  }));
}

/**
 * Read the capabilities route (`discovery.ts`); when the deployment does not
 * offer it, or lists no model, fall back to the default model with every
 * format and the voices `GET /voices` or the compatible list name. A wrong
 * key or an unreachable service is thrown, not swallowed.
 */
export async function fetchCapabilities(config: ServiceConfig, signal?: AbortSignal): Promise<BenchCapabilities> {
  const caps = await discoverCapabilities(config, { signal });
  const models = caps ? parseCapabilities(caps.raw) : [];
  if (models.length > 0) return { source: 'capabilities', models };
  const model = caps?.defaultModel ?? DEFAULT_MODEL;
  const voices = await defaultVoice(config, model, signal, caps).then(
    (id) => [{ id }],
    (err: unknown) => {
      if ((err as { code?: string }).code === 'voice_not_found') return [];
      throw err;
    },
  );
  return { source: 'fallback', models: [{ id: model, isDefault: true, formats: [...AUDIO_FORMATS], voices }] };
}

/** The default model: the one marked default, else `svc-s21pro-flash`, else the first. */
export function defaultModel(caps: BenchCapabilities): BenchModel | undefined {
  return caps.models.find((m) => m.isDefault) ?? caps.models.find((m) => m.id === DEFAULT_MODEL) ?? caps.models[0];
}
