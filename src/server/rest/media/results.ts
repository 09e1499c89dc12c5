/**
 * Result files of media tasks (PNG images, MP4 videos) and their delivery,
 * as for TTS audio (spec 4.3, 5.4): a task's result URL is a stable
 * Bearer-protected route at the root that answers 302 to a short-lived
 * signed URL of the file, so the key never lands in a URL or a player, and
 * repeated polls of a finished task return the same URL.
 *
 * - `GET {root_url}/api/open/media/files/{fileId}[?download=1]`: Bearer, owner only (404 otherwise);
 * - `GET {root_url}/api/open/media/signed/{fileId}?expires&sig[&download=1]`: the bytes, no key.
 */
import { z } from 'zod';
import type { ServerContext } from '../../context.js';
import { forbidden, notFound } from '../../http/errors.js';
import { defineRoute, type RouteDef } from '../../http/router.js';
import type { Collection } from '../../store/types.js';
import { signUrl, verifySignedUrl } from '../common/signed-url.js';
import type { Task } from '../common/task-runner.js';
import { errorResponses } from './docs.js';
import { flatStatus, FlatStatus } from './views.js';

export const MEDIA_FILE_PATHS = {
  file: '/api/open/media/files/{fileId}',
  signed: '/api/open/media/signed/{fileId}',
} as const;

export interface MediaFile {
  id: string;
  userId: string;
  contentType: string;
  filename: string;
  data: Buffer;
  createdAt: string;
}

/** The files of media results, owned by one account each. */
export class MediaFiles {
  readonly #files: Collection<MediaFile>;

  constructor(private readonly ctx: ServerContext, collection = 'media-files') {
    this.#files = ctx.store.collection<MediaFile>(collection);
  }

  /** Store `data`; `filename` is offered on downloads. */
  put(userId: string, contentType: string, filename: string, data: Buffer): MediaFile {
    const file: MediaFile = { id: this.ctx.newId('file'), userId, contentType, filename, data, createdAt: this.ctx.now().toISOString() };
    this.#files.set(file.id, file);
    return file;
  }

  get(id: string): MediaFile | undefined {
    return this.#files.get(id);
  }
}

/** The stable result URL of a file (Bearer; 302 to a signed URL). */
export function mediaFileUrl(ctx: ServerContext, fileId: string): string {
  return `${ctx.urls.rootUrl}/api/open/media/files/${encodeURIComponent(fileId)}`;
}

/** The result URL of a task whose result is a file: set once the task succeeded, null before and on failure. */
export function resultFileUrl(ctx: ServerContext, task: Pick<Task<unknown, { fileId: string }>, 'state' | 'result'>): string | null {
  return task.result && flatStatus(task) === FlatStatus.succeeded ? mediaFileUrl(ctx, task.result.fileId) : null;
}

const downloadQuery = z.object({
  download: z.enum(['0', '1', 'true', 'false']).optional().meta({ description: 'Set to 1 for the attachment (download) form.' }),
});
type DownloadQuery = z.infer<typeof downloadQuery>;

const signedQuery = z.object({
  expires: z.string().meta({ description: 'Expiry, Unix milliseconds.' }),
  sig: z.string().meta({ description: 'HMAC signature.' }),
  download: z.enum(['0', '1', 'true', 'false']).optional(),
});
type SignedQuery = z.infer<typeof signedQuery>;

const isDownload = (q: { download?: string | undefined }) => q.download === '1' || q.download === 'true';

export function resultRoutes(ctx: ServerContext, files: MediaFiles): RouteDef<never, never>[] {
  return [
    defineRoute<unknown, DownloadQuery>({
      method: 'GET',
      path: MEDIA_FILE_PATHS.file,
      summary: 'Fetch a media result (image or video): 302 to a short-lived signed URL; add download=1 for an attachment',
      tags: ['media'],
      query: downloadQuery,
      responses: { 302: { description: 'Redirect to a short-lived signed URL of the file (follow it; it needs no key)' }, ...errorResponses(400, 401, 404) },
      handler: ({ account, params, query }) => {
        const file = files.get(params['fileId']!);
        if (!file || file.userId !== account.userId) throw notFound('file');
        const location = signUrl(ctx, `/api/open/media/signed/${encodeURIComponent(file.id)}`, isDownload(query) ? { download: '1' } : {});
        return { status: 302, headers: { location, 'cache-control': 'no-store' } };
      },
    }),
    defineRoute<unknown, SignedQuery>({
      method: 'GET',
      path: MEDIA_FILE_PATHS.signed,
      summary: 'Signed media file (the target of the result redirects; the signature authorizes, no key)',
      tags: ['media'],
      auth: false,
      query: signedQuery,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        ...errorResponses(400, 403, 404),
      },
      handler: ({ url, params, query }) => {
        if (!verifySignedUrl(ctx, url)) throw forbidden('invalid or expired signature; request the result URL again');
        const file = files.get(params['fileId']!);
        if (!file) throw notFound('file');
        return {
          status: 200,
          body: file.data,
          headers: {
            'content-type': file.contentType,
            'content-disposition': `${isDownload(query) ? 'attachment' : 'inline'}; filename="${file.filename}"`,
            'cache-control': 'private, max-age=60',
          },
        };
      },
    }),
  ] as unknown as RouteDef<never, never>[];
}
