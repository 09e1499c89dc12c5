/**
 * What the service says it can do, from the realtime capabilities route
 * (`GET {rt_http_url}/v2/tts/capabilities`): models, their formats and their
 * public voices. The bench sweeps only over combinations listed here, so a
 * refused combination is reported as skipped rather than as errors.
 */
import { AUDIO_FORMATS, isAudioFormat, type AudioFormat } from '../protocol/audio.js';
import { DEFAULT_MODEL, REALTIME_PATHS } from '../protocol/constants.js';
import type { ServiceConfig } from '../config.js';

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

interface RawVoice {
  voice_id?: unknown;
  name?: unknown;
}
interface RawModel {
  id?: unknown;
  default?: unknown;
  formats?: unknown;
  voices?: unknown;
}
interface RawProvider {
  formats?: unknown;
  models?: unknown;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function formatsOf(value: unknown): AudioFormat[] {
  return asArray(value).filter(isAudioFormat);
}

/** Parse the capabilities document (unknown fields ignored, malformed entries skipped). */
export function parseCapabilities(body: unknown): BenchModel[] {
  const models: BenchModel[] = [];
  const providers = asArray((body as { providers?: unknown } | null)?.providers) as RawProvider[];
  for (const provider of providers) {
    const providerFormats = formatsOf(provider?.formats);
    for (const m of asArray(provider?.models) as RawModel[]) {
      if (typeof m?.id !== 'string') continue;
      const own = formatsOf(m.formats);
      const voices = (asArray(m.voices) as RawVoice[])
        .filter((v) => typeof v?.voice_id === 'string')
        .map((v) => (typeof v.name === 'string' ? { id: v.voice_id as string, name: v.name } : { id: v.voice_id as string }));
      models.push({ id: m.id, isDefault: m.default === true, formats: own.length > 0 ? own : providerFormats, voices });
    }
  }
  return models;
}

/**
 * Read the capabilities route; when it is unavailable (realtime disabled for
 * the account), fall back to the default model with the compatible voice list.
 */
export async function fetchCapabilities(config: ServiceConfig, signal?: AbortSignal): Promise<BenchCapabilities> {
  const init = { headers: { authorization: `Bearer ${config.apiKey}` }, ...(signal && { signal }) };
  try {
    const res = await fetch(`${config.rtHttpUrl}${REALTIME_PATHS.capabilities}`, init);
    if (res.ok) {
      const models = parseCapabilities(await res.json());
      if (models.length > 0) return { source: 'capabilities', models };
    } else {
      await res.body?.cancel();
    }
  } catch {
    // Fall through to the compatible voice list.
  }
  const voices: { id: string }[] = [];
  try {
    const res = await fetch(`${config.rootUrl}/v1/audio/voices`, init);
    if (res.ok) {
      const body = (await res.json()) as { voices?: { id?: unknown }[] };
      for (const v of body.voices ?? []) if (typeof v.id === 'string') voices.push({ id: v.id });
    } else {
      await res.body?.cancel();
    }
  } catch {
    // No voice list either: the cases fail with the service's own error.
  }
  return { source: 'fallback', models: [{ id: DEFAULT_MODEL, isDefault: true, formats: [...AUDIO_FORMATS], voices }] };
}

/** The default model: the one marked default, else `svc-s21pro-flash`, else the first. */
export function defaultModel(caps: BenchCapabilities): BenchModel | undefined {
  return caps.models.find((m) => m.isDefault) ?? caps.models.find((m) => m.id === DEFAULT_MODEL) ?? caps.models[0];
}
