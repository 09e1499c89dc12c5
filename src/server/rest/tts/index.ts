/**
 * Module: HTTP text to speech. Sync `/speech/tts` (binary or cached JSON,
 * X-Request-Id table), the compatible contract at the root, async jobs in
 * the envelope (`/speech/tts/jobs`) and flat (`/tts/tasks`) shapes over one
 * task runner, the Bearer download routes with signed redirects, and the
 * legacy TTS paths of spec 9. Billing rules: `../common/billing.ts`.
 */
import type { ModuleFactory } from '../../module.js';
import type { Account } from '../../store/types.js';
import { AudioStore } from '../common/audio-store.js';
import { IdempotencyStore } from '../common/idempotency.js';
import { compatRoutes } from './compat.js';
import { downloadRoutes } from './downloads.js';
import { createTtsRunner } from './job-runner.js';
import { jobRoutes } from './jobs.js';
import { syncRoutes } from './sync.js';

export const createTtsModule: ModuleFactory = (ctx) => {
  const audio = new AudioStore(ctx);
  const idempotency = new IdempotencyStore(ctx);
  const runner = createTtsRunner(ctx, audio);
  const ownTask = (account: Account, taskId: string) => {
    const task = runner.peek(taskId);
    return task && task.userId === account.userId ? task : undefined;
  };
  const routes = [
    ...syncRoutes(ctx, audio),
    ...compatRoutes(ctx, idempotency),
    ...jobRoutes(ctx, runner, idempotency),
    ...downloadRoutes(ctx, audio, {
      finalAudioId: (account, taskId) => ownTask(account, taskId)?.result?.audioId ?? undefined,
      segmentAudioId: (account, taskId, index) => ownTask(account, taskId)?.result?.segments[index]?.audioId ?? undefined,
    }),
  ];
  return {
    routes: routes as never[],
    close: () => runner.close(),
  };
};
