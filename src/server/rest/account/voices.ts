/**
 * Voices (spec 2.2, 4.8, 9): list public and personal voices, clone a voice
 * from reference audio, delete a personal voice; and the legacy paths
 * `POST /api/open/list-models`, `/create-model`, `/delete-model`.
 *
 * Cloning (decided here; the spec shows no request fields):
 * - JSON `{ name, audioUrl, language?, description? }` where `audioUrl` is
 *   publicly reachable (no loopback or LAN address, no credentials; the
 *   server option `allowPrivateUrls` lifts the address rule), or multipart
 *   with the file in field `audio` and the same text fields.
 * - The audio (WAV, mp3, Ogg Opus, or anything ffmpeg reads; at least 1 s
 *   with voiced speech) is analysed: its median F0 becomes the voice's
 *   pitch, its syllable rate the voice's rate factor, and the pitch picks
 *   eSpeak's male or female variant. Synthesis with the new `voiceId` uses them.
 * - Costs CLONE_CREDITS credits, held before the work and refunded when it
 *   fails: 402 before any download when the balance is short; 400 for a
 *   refused or unreachable URL; 422 `unprocessable_media` for audio that
 *   cannot be decoded or has no voiced speech.
 * - An optional `Idempotency-Key` replays the first result.
 *
 * Deleting: only the account's personal voices; a public voice answers 403,
 * another account's or an unknown voice 404. Deleted voices are unknown to
 * synthesis from then on.
 */
import { createHash } from 'node:crypto';
import { LIMITS } from '../../../protocol/limits.js';
import { MODELS, findModel } from '../../catalog.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode, HttpError, badRequest } from '../../http/errors.js';
import { describeZodError, defineRoute, type RouteContext, type RouteDef } from '../../http/router.js';
import type { Account } from '../../store/types.js';
import { analyzeVoice, UnusableReferenceError } from '../../voices/analyze.js';
import { decodeAudio, UnprocessableMediaError } from '../../audio/decode.js';
import { mediaToolsOf } from '../../media-engines/tools.js';
import { fetchReferenceAudio, ReferenceFetchError } from '../../voices/fetch-audio.js';
import { DEFAULT_LANGUAGE, findLanguage, VOICE_LANGUAGES, type VoiceLanguage } from '../../voices/languages.js';
import { holdOr402 } from '../common/billing.js';
import { idempotencyKeyOf, type IdempotencyStore } from '../common/idempotency.js';
import { accountErrors, idempotencyHeader } from './docs.js';
import {
  cloneBody,
  deleteVoiceResponse,
  legacyDeleteBody,
  voiceListQuery,
  voiceListResponse,
  voiceResponse,
  type CloneBody,
  type LegacyDeleteBody,
  type VoiceListQuery,
} from './schemas.js';
import { CLONE_CREDITS } from './settings.js';
import { createVoice, deleteVoice, newVoiceId, personalView, personalVoices, publicViews, VoiceSource, type StoredVoice, type VoiceView } from './voice-records.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const VOICES_PATH = serverPath(REST_ROUTES.voices);
/** Legacy voice paths (spec 9.3). */
export const LEGACY_VOICE_PATHS = { list: '/api/open/list-models', create: '/api/open/create-model', delete: '/api/open/delete-model' } as const;
/** Multipart field of the reference audio file. */
export const AUDIO_FIELD = 'audio';

function languageOr400(tag: string | undefined): VoiceLanguage {
  if (tag === undefined) return DEFAULT_LANGUAGE;
  const language = findLanguage(tag);
  if (!language) throw badRequest(`unsupported language ${JSON.stringify(tag.slice(0, 35))}`, { supportedLanguages: VOICE_LANGUAGES.map((l) => l.tag) });
  return language;
}

function matchesLanguage(view: VoiceView, tag: string): boolean {
  const want = tag.toLowerCase();
  const have = view.language.toLowerCase();
  return have === want || have.split('-')[0] === want;
}

/** Public voices then the account's personal voices, filtered. */
export function listVoices(ctx: ServerContext, account: Account, query: Partial<VoiceListQuery>): VoiceView[] {
  if (query.model !== undefined && !findModel(query.model)) throw badRequest(`unknown model ${JSON.stringify(query.model.slice(0, 128))}`, { supportedModels: MODELS.map((m) => m.id) });
  const all = [...publicViews(), ...personalVoices(ctx, account).map(personalView)];
  return all.filter(
    (v) =>
      (query.type === undefined || v.type === query.type) &&
      (query.model === undefined || v.models.includes(query.model)) &&
      (query.language === undefined || matchesLanguage(v, query.language)),
  );
}

/** The clone request, from JSON or multipart: the fields, and the audio bytes when uploaded. */
interface CloneRequest {
  fields: CloneBody;
  upload: Buffer | undefined;
}

async function readCloneRequest(route: RouteContext<CloneBody | undefined, unknown>): Promise<CloneRequest> {
  const contentType = route.req.headers['content-type'] ?? '';
  if (!contentType.startsWith('multipart/form-data')) {
    if (route.body === undefined) throw badRequest('send JSON { name, audioUrl } or multipart with the file in field "audio"');
    return { fields: route.body, upload: undefined };
  }
  let form: FormData;
  try {
    const raw = await route.rawBody();
    // A view of the body read, not a copy of it (an upload may be 25 MiB).
    const body = new Uint8Array(raw.buffer as ArrayBuffer, raw.byteOffset, raw.byteLength);
    form = await new Request('http://multipart.invalid/', { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
  } catch {
    throw badRequest('malformed multipart body');
  }
  const text: Record<string, string> = {};
  form.forEach((value, key) => {
    if (typeof value === 'string' && key !== AUDIO_FIELD) text[key] = value;
  });
  const parsed = cloneBody.safeParse(text);
  if (!parsed.success) throw badRequest(`invalid body: ${describeZodError(parsed.error)}`);
  const file = form.get(AUDIO_FIELD);
  if (typeof file === 'string') throw badRequest(`multipart field "${AUDIO_FIELD}" must be a file`);
  return { fields: parsed.data, upload: file === null ? undefined : Buffer.from(await file.arrayBuffer()) };
}

function cloneView(voice: StoredVoice, extra: Record<string, unknown>): Record<string, unknown> {
  return { ...personalView(voice), espeakVoice: voice.espeakVoice, ...extra };
}

/** Clone a voice for `account` (see the module comment for the rules). */
async function cloneVoice(ctx: ServerContext, account: Account, request: CloneRequest): Promise<Record<string, unknown>> {
  const { fields, upload } = request;
  if ((upload === undefined) === (fields.audioUrl === undefined)) {
    throw badRequest(`give the reference audio either as audioUrl (JSON) or as the multipart file "${AUDIO_FIELD}", not both or neither`);
  }
  const language = languageOr400(fields.language);
  const voiceId = newVoiceId(ctx);
  const refId = `voice-clone:${voiceId}`;
  await holdOr402(ctx, account, 'credits', CLONE_CREDITS, refId, `voice clone ${voiceId}`);
  try {
    const bytes = upload ?? (await fetchReferenceAudio(fields.audioUrl!, { allowPrivate: ctx.allowPrivateUrls }));
    const decoded = await decodeAudio(bytes, { ffmpeg: mediaToolsOf(ctx).ffmpeg });
    const seconds = decoded.samples.length / decoded.sampleRate;
    // Refused before the hold is committed: a clip outside the range costs nothing.
    if (seconds < LIMITS.cloneMinSeconds || seconds > LIMITS.cloneMaxSeconds) {
      throw badRequest(`the reference audio lasts ${seconds.toFixed(1)} s; a clone takes ${LIMITS.cloneMinSeconds} s to ${LIMITS.cloneMaxSeconds / 60} min of speech`);
    }
    const analysis = analyzeVoice(decoded, language);
    const voice = createVoice(
      ctx,
      account,
      {
        name: fields.name,
        basePitchHz: analysis.basePitchHz,
        rate: analysis.rate,
        espeakVoice: analysis.espeakVoice,
        gender: analysis.gender,
        language: analysis.language,
        source: VoiceSource.clone,
        description: fields.description ?? null,
      },
      voiceId,
    );
    ctx.ledger.commit(refId);
    return cloneView(voice, {
      analysis: analysis.measured,
      creditsCharged: CLONE_CREDITS,
      billing: { creditsCharged: CLONE_CREDITS, currency: 'credits', creditsRemaining: account.credits },
    });
  } catch (err) {
    ctx.ledger.release(refId);
    if (err instanceof ReferenceFetchError) throw badRequest(err.message);
    if (err instanceof UnprocessableMediaError) throw new HttpError(422, ApiErrorCode.unprocessable, `the reference audio ${err.message}`);
    if (err instanceof UnusableReferenceError) throw new HttpError(422, ApiErrorCode.unprocessable, err.message);
    throw err;
  }
}

/** What identifies a clone request for Idempotency-Key replay (uploads by their hash). */
function clonePayload(request: CloneRequest): unknown {
  return { ...request.fields, audioSha256: request.upload ? createHash('sha256').update(request.upload).digest('hex') : null };
}

function deleteView(voice: StoredVoice): Record<string, unknown> {
  return { voiceId: voice.voiceId, deleted: true, deletedAt: voice.deletedAt };
}

export function voiceRoutes(ctx: ServerContext, idempotency: IdempotencyStore): RouteDef<never, never>[] {
  const listHandler = ({ account, query, url }: RouteContext<unknown, VoiceListQuery>) => {
    const all = listVoices(ctx, account, query);
    // How a list is paged is the deployment's choice (spec 4.8: "response fields and filters: not shown"); the dialect picks it.
    const max = ctx.dialect.wire.maxPageSize;
    const paging = ctx.dialect.voicesPaging;
    if (paging === 'page') {
      const pageSize = Math.min(query.pageSize ?? 20, max);
      const number = query.page ?? 1;
      return { json: { data: all.slice((number - 1) * pageSize, number * pageSize), page: number, pageSize, total: all.length } };
    }
    if (paging === 'cursor' || paging === 'next-link') {
      // An opaque cursor (the offset, encoded) or a link to the next page; no total, no hasMore.
      const cursor = url?.searchParams.get('cursor');
      const offset = cursor ? Number(Buffer.from(cursor, 'base64url').toString('utf8').replace(/^o/, '')) || 0 : 0;
      const size = Math.min(query.limit, max);
      const next = offset + size < all.length ? Buffer.from(`o${offset + size}`).toString('base64url') : null;
      const data = all.slice(offset, offset + size);
      if (paging === 'cursor') return { json: { data, next_cursor: next } };
      const link = next === null ? null : `${VOICES_PATH}?${new URLSearchParams({ ...Object.fromEntries(url?.searchParams ?? []), cursor: next }).toString()}`;
      return { json: { data, links: { next: link === null ? null : `${ctx.urls.rootUrl}${link}` } } };
    }
    const limit = Math.min(query.limit, max);
    const page = all.slice(query.offset, query.offset + limit);
    return { json: { data: page, pagination: { limit, offset: query.offset, hasMore: query.offset + limit < all.length, total: all.length } } };
  };
  const cloneHandler = async (route: RouteContext<CloneBody | undefined, unknown>) => {
    const request = await readCloneRequest(route);
    return idempotency.run(route.account, 'voice-clone', idempotencyKeyOf(route.req.headers), clonePayload(request), async () => ({
      status: 201,
      json: await cloneVoice(ctx, route.account, request),
    }));
  };
  const cloneDocs = {
    tags: ['voices'],
    body: cloneBody,
    multipart: true,
    headers: [idempotencyHeader(false)],
    responses: { 201: { description: 'The new personal voice, with the analysis of the reference audio', schema: voiceResponse }, ...accountErrors(400, 401, 402, 409, 422) },
  };
  return [
    defineRoute<unknown, VoiceListQuery>({
      method: 'GET',
      path: VOICES_PATH,
      summary: 'Public and personal voices (filters: type, model, language)',
      tags: ['voices'],
      query: voiceListQuery,
      responses: { 200: { description: 'Voices', schema: voiceListResponse }, ...accountErrors(400, 401) },
      handler: listHandler,
    }),
    defineRoute<unknown, VoiceListQuery>({
      method: 'POST',
      path: LEGACY_VOICE_PATHS.list,
      summary: 'Legacy voice list (use GET /voices)',
      hidden: true,
      handler: (route) => listHandler({ ...route, query: voiceListQuery.parse({}) }),
    }),
    defineRoute<CloneBody | undefined, unknown>({ method: 'POST', path: VOICES_PATH, summary: 'Clone a voice from reference audio (JSON with audioUrl, or multipart with the file "audio")', ...cloneDocs, handler: cloneHandler }),
    defineRoute<CloneBody | undefined, unknown>({ method: 'POST', path: LEGACY_VOICE_PATHS.create, summary: 'Legacy voice clone (use POST /voices)', hidden: true, ...cloneDocs, handler: cloneHandler }),
    defineRoute({
      method: 'DELETE',
      path: `${VOICES_PATH}/{voiceId}`,
      summary: 'Delete a personal voice',
      tags: ['voices'],
      responses: { 200: { description: 'Deleted', schema: deleteVoiceResponse }, ...accountErrors(401, 403, 404) },
      handler: ({ account, params }) => ({ json: deleteView(deleteVoice(ctx, account, params['voiceId']!)) }),
    }),
    defineRoute<LegacyDeleteBody, unknown>({
      method: 'POST',
      path: LEGACY_VOICE_PATHS.delete,
      summary: 'Legacy voice delete (use DELETE /voices/{voiceId})',
      hidden: true,
      body: legacyDeleteBody,
      handler: ({ account, body }) => {
        const voiceId = body.voiceId ?? body.reference_id ?? body.id;
        if (voiceId === undefined) throw badRequest('voiceId is required');
        return { json: deleteView(deleteVoice(ctx, account, voiceId)) };
      },
    }),
  ] as unknown as RouteDef<never, never>[];
}
