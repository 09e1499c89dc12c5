/**
 * Personal voices as the voice routes store them: the record synthesis reads
 * (`PersonalVoiceRecord` of `../common/voices.ts`) plus what the voice list
 * shows. Voices are soft-deleted (`deletedAt`), so synthesis treats a deleted
 * id as unknown and the id is never reused.
 */
import { DEFAULT_MODEL } from '../../../protocol/constants.js';
import { MODELS, PUBLIC_VOICES } from '../../catalog.js';
import type { ServerContext } from '../../context.js';
import { forbidden, notFound } from '../../http/errors.js';
import type { Account, Collection } from '../../store/types.js';
import { PERSONAL_VOICES_COLLECTION, type PersonalVoiceRecord } from '../common/voices.js';

/** How a personal voice came to be. */
export const VoiceSource = { clone: 'clone', design: 'design' } as const;
export type VoiceSource = (typeof VoiceSource)[keyof typeof VoiceSource];

/** A stored personal voice. */
export interface StoredVoice extends PersonalVoiceRecord {
  name: string;
  basePitchHz: number;
  espeakVoice: string;
  models: string[];
  defaultEngineModelId: string;
  deletedAt: string | null;
  /**
   * Speaking-rate factor of the voice (1 = normal), measured or designed.
   * Synthesis multiplies it into the pace where it reads this field.
   */
  rate: number;
  language: string;
  gender: 'female' | 'male';
  source: VoiceSource;
  description: string | null;
  createdAt: string;
  /** For designed voices: where the voice came from. */
  designId?: string;
  candidateId?: string;
}

/** A voice as `GET /voices` lists it. */
export interface VoiceView {
  voiceId: string;
  name: string;
  type: 'public' | 'personal';
  language: string;
  gender: string;
  models: string[];
  defaultEngineModelId: string;
  basePitchHz: number;
  rate: number;
  source?: VoiceSource;
  description?: string | null;
  createdAt?: string;
}

export function voiceCollection(ctx: ServerContext): Collection<StoredVoice> {
  return ctx.store.collection<StoredVoice>(PERSONAL_VOICES_COLLECTION);
}

export type NewVoice = Omit<StoredVoice, 'voiceId' | 'userId' | 'models' | 'defaultEngineModelId' | 'deletedAt' | 'createdAt'> & {
  models?: string[];
  defaultEngineModelId?: string;
};

/** A new personal voice id (never a design or candidate id: those have their own prefixes). */
export function newVoiceId(ctx: ServerContext): string {
  return ctx.newId('voice');
}

/** Store a new personal voice of `account` (every model unless given; default model the service's). */
export function createVoice(ctx: ServerContext, account: Account, fields: NewVoice, voiceId: string = newVoiceId(ctx)): StoredVoice {
  const models = fields.models ?? MODELS.map((m) => m.id);
  const voice: StoredVoice = {
    ...fields,
    voiceId,
    userId: account.userId,
    models,
    defaultEngineModelId: fields.defaultEngineModelId ?? (models.includes(DEFAULT_MODEL) ? DEFAULT_MODEL : models[0]!),
    deletedAt: null,
    createdAt: ctx.now().toISOString(),
  };
  voiceCollection(ctx).set(voice.voiceId, voice);
  return voice;
}

/** Personal voices of `account` (not deleted), oldest first. */
export function personalVoices(ctx: ServerContext, account: Account): StoredVoice[] {
  return [...voiceCollection(ctx).values()].filter((v) => v.userId === account.userId && !v.deletedAt);
}

/**
 * Delete a personal voice of `account`: 403 for a public voice (not the
 * account's to delete), 404 for an unknown, deleted or another account's voice.
 */
export function deleteVoice(ctx: ServerContext, account: Account, voiceId: string): StoredVoice {
  if (PUBLIC_VOICES.some((v) => v.voiceId === voiceId)) throw forbidden('public voices cannot be deleted');
  const voice = voiceCollection(ctx).get(voiceId);
  if (!voice || voice.userId !== account.userId || voice.deletedAt) throw notFound('voice');
  voice.deletedAt = ctx.now().toISOString();
  voiceCollection(ctx).set(voiceId, voice);
  return voice;
}

export function personalView(v: StoredVoice): VoiceView {
  return {
    voiceId: v.voiceId,
    name: v.name,
    type: 'personal',
    language: v.language,
    gender: v.gender,
    models: v.models,
    defaultEngineModelId: v.defaultEngineModelId,
    basePitchHz: v.basePitchHz,
    rate: v.rate,
    source: v.source,
    description: v.description,
    createdAt: v.createdAt,
  };
}

export function publicViews(): VoiceView[] {
  return PUBLIC_VOICES.map((v) => ({
    voiceId: v.voiceId,
    name: v.name,
    type: 'public',
    language: v.language,
    gender: v.gender,
    models: [...v.models],
    defaultEngineModelId: v.defaultEngineModelId,
    basePitchHz: v.basePitchHz,
    rate: 1,
  }));
}
