/**
 * Module: speech to text, image, video and lip-sync (spec 2.6-2.8, 3.2-3.4,
 * 4.4-4.7, 9), each a family file over the shared task runner, with the
 * media model catalog and the result-file routes. The engines behind them
 * are local stand-ins (`../../media/`): pocketsphinx for recognition, a
 * prompt-derived PNG pattern for images, ffmpeg-encoded MP4 for videos and
 * lip-sync. Billing: ASR in credits, the rest in API quota (see catalog.ts).
 */
import type { ModuleFactory } from '../../module.js';
import { IdempotencyStore } from '../common/idempotency.js';
import { asrFamily } from './asr.js';
import { imageFamily } from './images.js';
import { lipSyncFamily } from './lipsync.js';
import { modelRoutes } from './models.js';
import { MediaFiles, resultRoutes } from './results.js';
import { videoFamily } from './videos.js';

export const createMediaModule: ModuleFactory = (ctx) => {
  const files = new MediaFiles(ctx);
  const idempotency = new IdempotencyStore(ctx);
  const asr = asrFamily(ctx, idempotency);
  const images = imageFamily(ctx, files, idempotency);
  const videos = videoFamily(ctx, files, idempotency);
  const lipsync = lipSyncFamily(ctx, files, idempotency);
  return {
    routes: [...asr.routes, ...modelRoutes(ctx), ...images.routes, ...videos.routes, ...lipsync.routes, ...resultRoutes(ctx, files)],
    async close() {
      await Promise.all([asr.runner.close(), images.runner.close(), videos.runner.close(), lipsync.runner.close()]);
      asr.close();
      lipsync.close();
    },
  };
};
