/**
 * Audio delivery (spec 4.3, 5.4). The Bearer-protected routes at the root
 * answer 302 to a short-lived signed URL of the file route, which serves the
 * bytes without a key (so the key never lands in a URL or a player):
 *
 * - `GET /api/open/tts/jobs/{taskId}/audio[?download=1]`: a job's final audio
 *   (404 for another account's job or while no final audio exists);
 * - `GET /api/open/tts/jobs/{taskId}/segments/{index}/audio`: one completed segment;
 * - `GET /api/open/tts/audio/{audioId}`: a sync `cache: true` result (`audio_url`);
 * - `GET /api/open/tts/files/{audioId}?expires&sig[&download=1]`: the signed file.
 */
import type { ServerContext } from '../../context.js';
import { forbidden, notFound } from '../../http/errors.js';
import { defineRoute, type Reply, type RouteDef } from '../../http/router.js';
import type { Account } from '../../store/types.js';
import type { AudioStore } from '../common/audio-store.js';
import { signUrl, verifySignedUrl } from '../common/signed-url.js';
import { errorResponses } from './docs.js';
import { downloadQuery, signedFileQuery, type DownloadQuery, type SignedFileQuery } from './schemas.js';

export const DOWNLOAD_PATHS = {
  job: '/api/open/tts/jobs/{taskId}/audio',
  segment: '/api/open/tts/jobs/{taskId}/segments/{index}/audio',
  stored: '/api/open/tts/audio/{audioId}',
  file: '/api/open/tts/files/{audioId}',
} as const;

const enc = encodeURIComponent;

/** Playback route of a job's final audio (add `?download=1` for the download form). */
export function jobAudioUrl(ctx: ServerContext, taskId: string): string {
  return `${ctx.urls.rootUrl}/api/open/tts/jobs/${enc(taskId)}/audio`;
}

/** Playback route of one completed segment of a job. */
export function segmentAudioUrl(ctx: ServerContext, taskId: string, index: number): string {
  return `${ctx.urls.rootUrl}/api/open/tts/jobs/${enc(taskId)}/segments/${index}/audio`;
}

/** Route of a stored sync result (`audio_url` of `cache: true`). */
export function storedAudioUrl(ctx: ServerContext, audioId: string): string {
  return `${ctx.urls.rootUrl}/api/open/tts/audio/${enc(audioId)}`;
}

/** How the download routes find a job's audio; undefined answers 404. */
export interface JobAudioLookup {
  finalAudioId(account: Account, taskId: string): string | undefined;
  segmentAudioId(account: Account, taskId: string, index: number): string | undefined;
}

function isDownload(q: { download?: string | undefined }): boolean {
  return q.download === '1' || q.download === 'true';
}

function redirectTo(ctx: ServerContext, audioId: string, download: boolean): Reply {
  const location = signUrl(ctx, `/api/open/tts/files/${enc(audioId)}`, download ? { download: '1' } : {});
  return { status: 302, headers: { location, 'cache-control': 'no-store' } };
}

export function downloadRoutes(ctx: ServerContext, audio: AudioStore, jobs: JobAudioLookup): RouteDef<never, never>[] {
  const redirectDoc = {
    302: { description: 'Redirect to a short-lived signed URL of the audio file (follow it; it needs no key)' },
    ...errorResponses(400, 401, 404),
  };
  const ownFile = (account: Account, audioId: string | undefined): string => {
    const file = audioId === undefined ? undefined : audio.get(audioId);
    if (!file || file.userId !== account.userId) throw notFound('audio');
    return file.id;
  };
  return [
    defineRoute<unknown, DownloadQuery>({
      method: 'GET',
      path: DOWNLOAD_PATHS.job,
      summary: "Download a job's final audio (302 to a signed URL); add download=1 for an attachment",
      tags: ['tts-jobs'],
      query: downloadQuery,
      responses: redirectDoc,
      handler: ({ account, params, query }) => redirectTo(ctx, ownFile(account, jobs.finalAudioId(account, params['taskId']!)), isDownload(query)),
    }),
    defineRoute<unknown, DownloadQuery>({
      method: 'GET',
      path: DOWNLOAD_PATHS.segment,
      summary: 'Play one completed segment of a job (302 to a signed URL)',
      tags: ['tts-jobs'],
      query: downloadQuery,
      responses: redirectDoc,
      handler: ({ account, params, query }) => {
        const index = Number(params['index']);
        if (!Number.isInteger(index) || index < 0) throw notFound('segment');
        return redirectTo(ctx, ownFile(account, jobs.segmentAudioId(account, params['taskId']!, index)), isDownload(query));
      },
    }),
    defineRoute<unknown, DownloadQuery>({
      method: 'GET',
      path: DOWNLOAD_PATHS.stored,
      summary: 'Fetch a stored sync TTS result (audio_url of cache=true; 302 to a signed URL)',
      tags: ['tts'],
      query: downloadQuery,
      responses: redirectDoc,
      handler: ({ account, params, query }) => redirectTo(ctx, ownFile(account, params['audioId']), isDownload(query)),
    }),
    defineRoute<unknown, SignedFileQuery>({
      method: 'GET',
      path: DOWNLOAD_PATHS.file,
      summary: 'Signed audio file (the target of the download redirects; no key, the signature authorizes)',
      tags: ['tts-jobs'],
      auth: false,
      query: signedFileQuery,
      responses: {
        200: { description: 'The audio file', contentType: 'application/octet-stream' },
        ...errorResponses(400, 404),
        403: { description: 'Invalid or expired signature', schema: errorResponses(400)[400]!.schema! },
      },
      handler: ({ url, params, query }) => {
        if (!verifySignedUrl(ctx, url)) throw forbidden('invalid or expired signature; request the download route again');
        const file = audio.get(params['audioId']!);
        if (!file) throw notFound('audio');
        const disposition = isDownload(query) ? 'attachment' : 'inline';
        return {
          status: 200,
          body: file.data,
          headers: { 'content-type': file.contentType, 'content-disposition': `${disposition}; filename="${file.filename}"`, 'cache-control': 'private, max-age=60' },
        };
      },
    }),
  ] as unknown as RouteDef<never, never>[];
}
