/**
 * What the reference server offers: providers, models, public voices and the
 * parameters each provider accepts. Formats are intersected with the encoders
 * that really work on this machine before anything is advertised.
 */
import type { AudioFormat } from '../protocol/audio.js';
import { DEFAULT_MODEL, type ProviderParameter } from '../protocol/constants.js';

export interface ProviderInfo {
  id: string;
  /** Formats the provider can produce (before intersecting with working encoders). */
  formats: AudioFormat[];
  /** Optional `start.request` parameters this provider accepts. */
  parameters: ProviderParameter[];
}

export interface ModelInfo {
  id: string;
  provider: string;
  /** Default model of the service. */
  default: boolean;
  /** Speaking-rate multiplier of the model's voice engine. */
  rate: number;
}

export interface PublicVoice {
  /** Public voice UUID. */
  voiceId: string;
  name: string;
  language: string;
  gender: 'female' | 'male';
  /** Models this voice supports. */
  models: string[];
  defaultEngineModelId: string;
  /** Engine parameters behind the voice. */
  basePitchHz: number;
  espeakVoice: string;
}

export const EMOTIONS = ['neutral', 'happy', 'sad', 'angry', 'calm'] as const;

export const PROVIDERS: readonly ProviderInfo[] = [
  { id: 'svc', formats: ['pcm', 'wav', 'mp3', 'opus'], parameters: ['latency', 'emotion'] },
  { id: 'aurora', formats: ['pcm', 'wav', 'mp3'], parameters: ['instructions', 'optimize_instructions'] },
  { id: 'lyra', formats: ['pcm', 'wav', 'opus'], parameters: ['latency'] },
];

export const MODELS: readonly ModelInfo[] = [
  { id: DEFAULT_MODEL, provider: 'svc', default: true, rate: 1 },
  { id: 'aurora-tts-1', provider: 'aurora', default: false, rate: 0.95 },
  { id: 'lyra-v2', provider: 'lyra', default: false, rate: 1.05 },
];

const ALL_MODELS = MODELS.map((m) => m.id);

export const PUBLIC_VOICES: readonly PublicVoice[] = [
  { voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01', name: 'Ava', language: 'en-US', gender: 'female', models: ALL_MODELS, defaultEngineModelId: DEFAULT_MODEL, basePitchHz: 210, espeakVoice: 'en-us+f3' },
  { voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a02', name: 'Ben', language: 'en-US', gender: 'male', models: ALL_MODELS, defaultEngineModelId: DEFAULT_MODEL, basePitchHz: 120, espeakVoice: 'en-us' },
  { voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a03', name: 'Chloe', language: 'en-GB', gender: 'female', models: [DEFAULT_MODEL, 'aurora-tts-1'], defaultEngineModelId: 'aurora-tts-1', basePitchHz: 220, espeakVoice: 'en-gb+f4' },
  { voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a04', name: 'Dev', language: 'en-GB', gender: 'male', models: [DEFAULT_MODEL, 'lyra-v2'], defaultEngineModelId: 'lyra-v2', basePitchHz: 110, espeakVoice: 'en-gb' },
  { voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a05', name: 'Elena', language: 'es-ES', gender: 'female', models: [DEFAULT_MODEL, 'lyra-v2'], defaultEngineModelId: DEFAULT_MODEL, basePitchHz: 200, espeakVoice: 'es+f2' },
  { voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a06', name: 'Felix', language: 'de-DE', gender: 'male', models: [DEFAULT_MODEL, 'aurora-tts-1'], defaultEngineModelId: 'aurora-tts-1', basePitchHz: 115, espeakVoice: 'de' },
];

export function findModel(id: string): ModelInfo | undefined {
  return MODELS.find((m) => m.id === id);
}

export function findProvider(id: string): ProviderInfo | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

export function findPublicVoice(voiceId: string): PublicVoice | undefined {
  return PUBLIC_VOICES.find((v) => v.voiceId === voiceId);
}

/** Formats a model really produces here: its provider's, intersected with working encoders. */
export function modelFormats(model: ModelInfo, working: readonly AudioFormat[]): AudioFormat[] {
  const provider = findProvider(model.provider);
  return provider ? provider.formats.filter((f) => working.includes(f)) : [];
}

/** Public voices that support `modelId`, in catalog order. */
export function voicesForModel(modelId: string): PublicVoice[] {
  return PUBLIC_VOICES.filter((v) => v.models.includes(modelId));
}
