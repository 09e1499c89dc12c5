/**
 * Synchronous TTS (spec 4.1): `POST {base_url}/speech/tts`, binary audio or,
 * with `cache: true`, the JSON of 2.9; the `X-Request-Id` table of 3.6; and
 * the legacy paths of section 9 (`POST /api/open/tts`,
 * `POST {root_url}/v1/speech/tts`), hidden from openapi.json.
 */
import type { ServerContext } from '../../context.js';
import { defineRoute, type Reply, type RouteContext, type RouteDef } from '../../http/router.js';
import { quotaRemaining } from '../common/billing.js';
import { payloadFingerprint } from '../common/fingerprint.js';
import type { AudioStore } from '../common/audio-store.js';
import { audioHeaders, generateCharged } from './generate.js';
import { resolveTtsParams, type TtsParams } from './params.js';
import { clientRequestIdOf, RequestIdTable, requestInProgress, type RequestIdSlot } from './request-ids.js';
import { exclusively } from '../common/exclusive.js';
import { storedAudioUrl } from './downloads.js';
import { syncTtsBody, type SyncTtsBody } from './schemas.js';
import { errorResponses } from './docs.js';
import { HEADERS, REST_ROUTES, serverPath } from '../../../protocol/rest.js';

/** Current path of sync TTS. */
export const SYNC_TTS_PATH = serverPath(REST_ROUTES.tts);
/** Legacy paths answering like the current one (spec 9.3). */
export const LEGACY_SYNC_TTS_PATHS = ['/api/open/tts', '/v1/speech/tts'] as const;

/** Header with the credits charged by this call. */
export const CREDITS_CHARGED_HEADER = HEADERS.creditsCharged;

export function syncRoutes(ctx: ServerContext, audio: AudioStore): RouteDef<SyncTtsBody, unknown>[] {
  const requestIds = new RequestIdTable(ctx);

  async function handle(c: RouteContext<SyncTtsBody, unknown>): Promise<Reply> {
    const { account, body } = c;
    const voiceId = body.voiceId ?? body.reference_id;
    const params = resolveTtsParams(ctx, account, { text: body.text, voiceId, modelId: body.modelId, format: body.format, speed: body.speed, emotion: body.emotion });
    const clientRequestId = clientRequestIdOf(c.req.headers);
    const cache = body.cache === true;
    // "Same payload": the normalised request (alias resolved, defaults applied).
    const fingerprint = payloadFingerprint({ text: params.text, voiceId: params.voice.voiceId, modelId: params.model.id, format: params.format, speed: params.speed, emotion: params.emotion, cache });
    if (clientRequestId === undefined) return generate(c, params, cache, undefined);
    return exclusively(ctx, `sync-request-id:${account.userId}\u0000${clientRequestId}`, () => requestInProgress(), () =>
      generate(c, params, cache, requestIds.begin(account, clientRequestId, fingerprint)),
    );
  }

  async function generate(c: RouteContext<SyncTtsBody, unknown>, params: TtsParams, cache: boolean, slot: RequestIdSlot | undefined): Promise<Reply> {
    const { account } = c;
    if (slot?.kind === 'replay') {
      return { status: 200, json: slot.response, headers: { [CREDITS_CHARGED_HEADER]: '0', 'idempotent-replayed': 'true' } };
    }
    let generated;
    try {
      generated = await generateCharged(ctx, account, params, `sync:${c.requestId}`);
    } catch (err) {
      if (slot) {
        if ((err as { status?: number }).status === 500) requestIds.refunded(slot.key);
        else requestIds.abandon(slot.key);
      }
      throw err;
    }
    const charged = { [CREDITS_CHARGED_HEADER]: String(generated.credits) };
    if (cache) {
      const file = audio.put(account.userId, params.format, generated.file);
      const json = { audio_url: storedAudioUrl(ctx, file.id), credits_used: generated.credits, quota_remaining: quotaRemaining(account) };
      if (slot) requestIds.complete(slot.key, json);
      return { status: 200, json, headers: charged };
    }
    if (slot) requestIds.complete(slot.key);
    return { status: 200, body: generated.file, headers: { ...audioHeaders(ctx, params.format), ...charged } };
  }

  const doc = {
    summary: 'Synthesize speech: binary audio, or with cache=true the JSON { audio_url, credits_used, quota_remaining }',
    tags: ['tts'],
    capability: 'tts',
    generation: true,
    body: syncTtsBody,
    headers: [{ name: 'X-Request-Id', required: false, description: 'Stable id of one logical generation (1 to 128 characters); repeats answer the 409 codes of the request-id table or replay a cache=true result.' }],
    responses: {
      200: { description: 'Audio in the requested format (Content-Type audio/mpeg, audio/wav, audio/ogg or audio/pcm; header x-svc-credits-charged). With cache=true: JSON { audio_url, credits_used, quota_remaining }.', contentType: 'audio/mpeg' },
      ...errorResponses(400, 401, 402, 403, 409, 500),
    },
    handler: handle,
  };
  return [
    defineRoute<SyncTtsBody, unknown>({ method: 'POST', path: SYNC_TTS_PATH, ...doc }),
    ...LEGACY_SYNC_TTS_PATHS.map((path) => defineRoute<SyncTtsBody, unknown>({ method: 'POST', path, ...doc, summary: `Legacy alias of POST ${SYNC_TTS_PATH}`, hidden: true })),
  ];
}
