/**
 * The client's tolerant reader of the realtime capabilities document
 * (`GET {rt_http_url}/v2/tts/capabilities`, spec 4.10: "providers, models,
 * formats, parameters, limits, modes, PCM metadata; exact field names: not
 * shown"). Deployments lay it out differently, so this reads what it can
 * from any of the shapes seen:
 *
 * - ours: `{ default_model, providers: [{ id, formats, models: [{ id, default,
 *   formats, voices: [{ voice_id }] }] }], pcm }`;
 * - models at the top level: `{ models: [{ id, provider, default,
 *   default_voice_id, formats }] }`, voices listed elsewhere (`GET /voices`);
 * - camelCase spellings of the same (`defaultVoiceId`, `voiceId`, ...).
 *
 * Nothing is required: an empty document gives no models, not an error.
 */
import { arr, asObject, bool, isObject, num, str, type JsonObject } from './fields.js';
import type { PcmInfo } from './audio.js';

export interface CapabilityModel {
  id: string;
  provider: string | undefined;
  /** The deployment marks it as the default model. */
  isDefault: boolean;
  /** Formats of the model (else of its provider); as given, lower-case. */
  formats: string[];
  /** The model's own default voice, when the document names one. */
  defaultVoiceId: string | undefined;
  /** Public voices listed for the model, in order. */
  voiceIds: string[];
  /** The same voices with their names, where given. */
  voices: { id: string; name?: string }[];
}

export interface Capabilities {
  models: CapabilityModel[];
  /** The document's default model, when it names one. */
  defaultModel: string | undefined;
  /** PCM layout of the service's audio, when it says. */
  pcm: PcmInfo | undefined;
  raw: JsonObject;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').map((v) => v.toLowerCase()) : [];
}

function voicesOf(value: unknown): { id: string; name?: string }[] {
  if (!Array.isArray(value)) return [];
  const voices: { id: string; name?: string }[] = [];
  for (const v of value) {
    const id = typeof v === 'string' ? v : isObject(v) ? str(v, 'voice_id', 'voiceId', 'id') : undefined;
    if (id === undefined) continue;
    const name = isObject(v) ? str(v, 'name') : undefined;
    voices.push(name === undefined ? { id } : { id, name });
  }
  return voices;
}

function modelOf(m: unknown, provider: JsonObject | undefined): CapabilityModel | undefined {
  if (typeof m === 'string') return { id: m, provider: str(provider, 'id', 'name'), isDefault: false, formats: strings(provider?.['formats']), defaultVoiceId: undefined, voiceIds: [], voices: [] };
  if (!isObject(m)) return undefined;
  const id = str(m, 'id', 'model', 'model_id', 'modelId', 'name');
  if (id === undefined) return undefined;
  const own = strings(m['formats'] ?? m['output_formats']);
  const voices = voicesOf(m['voices'] ?? m['voice_ids'] ?? m['voiceIds']);
  return {
    id,
    provider: str(m, 'provider', 'provider_id', 'providerId') ?? str(provider, 'id', 'name'),
    isDefault: bool(m, 'default', 'is_default', 'isDefault') ?? false,
    formats: own.length > 0 ? own : strings(provider?.['formats']),
    defaultVoiceId: str(m, 'default_voice_id', 'defaultVoiceId', 'default_voice'),
    voiceIds: voices.map((v) => v.id),
    voices,
  };
}

function pcmOf(doc: JsonObject): PcmInfo | undefined {
  const p = isObject(doc['pcm']) ? doc['pcm'] : isObject(doc['pcm_metadata']) ? doc['pcm_metadata'] : undefined;
  const sampleRate = num(p, 'sample_rate', 'sampleRate');
  if (sampleRate === undefined) return undefined;
  return { sampleRate, channels: num(p, 'channels') ?? 1, bitDepth: num(p, 'bit_depth', 'bitDepth') ?? 16 };
}

/** Read a capabilities document in any of the shapes above. */
export function readCapabilities(body: unknown): Capabilities {
  const doc = asObject(isObject(body) && isObject(body['data']) && !('providers' in body) && !('models' in body) ? body['data'] : body);
  const models: CapabilityModel[] = [];
  for (const p of arr(doc, 'providers') ?? []) {
    const provider = asObject(p);
    for (const m of arr(provider, 'models') ?? []) {
      const model = modelOf(m, provider);
      if (model) models.push(model);
    }
  }
  for (const m of arr(doc, 'models') ?? []) {
    const model = modelOf(m, undefined);
    if (model && !models.some((x) => x.id === model.id)) models.push(model);
  }
  return {
    models,
    defaultModel: str(doc, 'default_model', 'defaultModel') ?? models.find((m) => m.isDefault)?.id,
    pcm: pcmOf(doc),
    raw: doc,
  };
}
