/**
 * `GET {base_url}/media/models?mediaType=image|video` (spec 4.5, 4.6): the
 * verified models of each media type, with their limits and prices. Video
 * models are listed only where ffmpeg is installed (the capability is
 * otherwise unavailable). Without `mediaType`, both kinds are listed.
 */
import { z } from 'zod';
import type { ServerContext } from '../../context.js';
import { defineRoute, type RouteDef } from '../../http/router.js';
import { hasFfmpeg, mediaToolsOf } from '../../media-engines/tools.js';
import { IMAGE_MODELS, VIDEO_MODELS } from './catalog.js';
import { errorResponses } from './docs.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const MEDIA_MODELS_PATH = serverPath(REST_ROUTES.mediaModels);

export const MediaType = { image: 'image', video: 'video' } as const;
export type MediaType = (typeof MediaType)[keyof typeof MediaType];

export const modelsQuery = z.object({ mediaType: z.enum(Object.values(MediaType)).optional().meta({ description: 'image or video; default both.' }) });
export type ModelsQuery = z.infer<typeof modelsQuery>;

const modelDoc = z.looseObject({ id: z.string(), mediaType: z.enum(Object.values(MediaType)), name: z.string(), default: z.boolean() });

/** The catalog entries of `mediaType` (both when undefined) that work on this server. */
export function mediaModels(ctx: ServerContext, mediaType: MediaType | undefined) {
  const video = hasFfmpeg(mediaToolsOf(ctx)) ? VIDEO_MODELS : [];
  return [...(mediaType !== MediaType.video ? IMAGE_MODELS : []), ...(mediaType !== MediaType.image ? video : [])];
}

export function modelRoutes(ctx: ServerContext): RouteDef<never, never>[] {
  return [
    defineRoute<unknown, ModelsQuery>({
      method: 'GET',
      path: MEDIA_MODELS_PATH,
      summary: 'List the verified image or video models (limits, sizes, prices in API quota)',
      tags: ['media'],
      query: modelsQuery,
      responses: { 200: { description: 'The models', schema: z.object({ data: z.array(modelDoc) }) }, ...errorResponses(400, 401) },
      handler: ({ query }) => ({ json: { data: mediaModels(ctx, query.mediaType) } }),
    }),
  ] as unknown as RouteDef<never, never>[];
}
