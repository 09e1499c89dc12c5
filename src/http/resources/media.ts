/**
 * What image, video and lip-sync tasks share (spec 2.7, 2.8): a result URL
 * under one of several names, normalised into `MediaTask.resultUrl`, and the
 * model catalog `GET /media/models`.
 */
import type { HttpClient } from '../client.js';
import { arr, asObject, isObject, str, type JsonObject } from '../../protocol/fields.js';
import { baseTaskFields, type BaseTask } from '../task.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const MEDIA_MODELS_PATH = REST_ROUTES.mediaModels;

/** Names a result URL goes by: `resultImageUrl` (image tasks), `resultVideoUrl` (video, lip-sync), and the open media-job shapes. */
const RESULT_URL_KEYS = ['resultImageUrl', 'resultVideoUrl', 'resultUrl', 'result_url', 'imageUrl', 'videoUrl', 'outputUrl', 'output_url', 'url'];

/** An image, video or lip-sync task, whichever route family it came from. */
export interface MediaTask extends BaseTask {
  /** URL of the result file, once succeeded. */
  resultUrl: string | undefined;
  model: string | undefined;
  /** Result metadata (lip-sync media jobs carry it in `data.result`). */
  result: JsonObject | undefined;
}

/** Find the result URL: at the top level first, then inside `result` / `output`. */
function findResultUrl(obj: JsonObject): string | undefined {
  const top = str(obj, 'resultImageUrl', 'resultVideoUrl', 'resultUrl', 'result_url', 'outputUrl', 'output_url');
  if (top) return top;
  for (const key of ['result', 'output']) {
    const inner = obj[key];
    if (typeof inner === 'string' && inner !== '') return inner;
    if (isObject(inner)) {
      const url = str(inner, ...RESULT_URL_KEYS);
      if (url) return url;
    }
  }
  return undefined;
}

export function normalizeMediaTask(obj: JsonObject, family: string): MediaTask {
  const result = obj['result'];
  return { ...baseTaskFields(obj, family), resultUrl: findResultUrl(obj), model: str(obj, 'model'), result: isObject(result) ? result : undefined };
}

/** Media kinds of the model catalog. */
export const MediaType = { image: 'image', video: 'video' } as const;
export type MediaType = (typeof MediaType)[keyof typeof MediaType];

export interface MediaModel {
  /** `id`, `modelId` or `model`, whichever the entry has. */
  id: string | undefined;
  raw: JsonObject;
}

/** `GET /media/models?mediaType=`; entries' fields are not specified, so `raw` carries them. */
export async function listMediaModels(client: HttpClient, mediaType: MediaType, signal?: AbortSignal): Promise<MediaModel[]> {
  const res = await client.json({ path: MEDIA_MODELS_PATH, query: { mediaType }, signal });
  const body = res.data;
  const items = Array.isArray(body) ? body : (arr(asObject(body), 'models', 'data', 'items') ?? []);
  return items.map((m) => {
    const raw = asObject(m);
    return { id: str(raw, 'id', 'modelId', 'model'), raw };
  });
}
