/**
 * Voice resolution for synthesis requests: a public voice UUID of the
 * catalog, or a personal voice of the calling account. Another account's
 * personal voice answers 403 (spec 5.3: no access to the voice); an unknown
 * or deleted voice answers 400 (spec 4.3: invalid voice).
 *
 * Personal voices live in the store collection `voices` (written by the voice
 * routes: clone and voice design); a record needs at least `voiceId` and
 * `userId`, the engine parameters default from the voice id.
 */
import { createHash } from 'node:crypto';
import { findPublicVoice, MODELS } from '../../catalog.js';
import type { ServerContext } from '../../context.js';
import { badRequest, forbidden } from '../../http/errors.js';
import type { Account } from '../../store/types.js';

/** Store collection of personal voices. */
export const PERSONAL_VOICES_COLLECTION = 'voices';

/** A personal (custom) voice as stored by the voice routes. */
export interface PersonalVoiceRecord {
  voiceId: string;
  userId: string;
  name?: string;
  /** Engine pitch of the voice; default derived from the id (90 to 250 Hz). */
  basePitchHz?: number;
  /** espeak voice name; default `en-us`. */
  espeakVoice?: string;
  /** Speaking-rate multiplier measured (clone) or designed; default 1. */
  rate?: number;
  /** Models the voice supports; default every model. */
  models?: string[];
  defaultEngineModelId?: string;
  /** Set when deleted: a deleted voice is unknown to synthesis. */
  deletedAt?: string | null;
}

/** A voice ready for synthesis. */
export interface ResolvedVoice {
  voiceId: string;
  name: string;
  personal: boolean;
  models: readonly string[];
  defaultEngineModelId: string;
  basePitchHz: number;
  espeakVoice: string;
  /** Speaking-rate multiplier of the voice (1 for public voices); synthesis multiplies it with the model's. */
  rate: number;
}

function derivedPitch(voiceId: string): number {
  const byte = createHash('sha256').update(voiceId).digest()[0] ?? 0;
  return 90 + Math.round((byte / 255) * 160);
}

/** The voice `voiceId` as `account` may use it; 400 unknown, 403 another account's. */
export function resolveVoice(ctx: ServerContext, account: Account, voiceId: string): ResolvedVoice {
  const pub = findPublicVoice(voiceId);
  if (pub) {
    return { voiceId, name: pub.name, personal: false, models: pub.models, defaultEngineModelId: pub.defaultEngineModelId, basePitchHz: pub.basePitchHz, espeakVoice: pub.espeakVoice, rate: 1 };
  }
  const own = ctx.store.collection<PersonalVoiceRecord>(PERSONAL_VOICES_COLLECTION).get(voiceId);
  if (!own || own.deletedAt) throw badRequest(`unknown voiceId ${JSON.stringify(voiceId.slice(0, 128))}; list voices with GET /voices`);
  if (own.userId !== account.userId) throw forbidden('this API key has no access to that voice');
  const models = own.models ?? MODELS.map((m) => m.id);
  return {
    voiceId,
    name: own.name ?? voiceId,
    personal: true,
    models,
    defaultEngineModelId: own.defaultEngineModelId ?? models[0] ?? MODELS[0]!.id,
    basePitchHz: own.basePitchHz ?? derivedPitch(voiceId),
    espeakVoice: own.espeakVoice ?? 'en-us',
    rate: own.rate ?? 1,
  };
}
