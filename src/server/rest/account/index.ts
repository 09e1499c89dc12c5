/**
 * Module: profile, usage, voices (list, clone, delete), voice design, and
 * task-completion webhooks, with the legacy voice paths of spec 9.
 * Prices and the design lifetime: `settings.ts`; webhook rules:
 * `../../webhooks/dispatcher.ts`; signatures: `../../../protocol/webhooks.ts`.
 */
import type { ModuleFactory } from '../../module.js';
import { WebhookDispatcher, webhookOptionsFromEnv } from '../../webhooks/dispatcher.js';
import { IdempotencyStore } from '../common/idempotency.js';
import { taskTerminalHooks } from '../common/task-runner.js';
import { profileRoutes } from './profile.js';
import { accountSettings } from './settings.js';
import { usageRoutes } from './usage.js';
import { designRoutes } from './voice-designs.js';
import { voiceRoutes } from './voices.js';

export const createAccountModule: ModuleFactory = (ctx) => {
  const idempotency = new IdempotencyStore(ctx);
  accountSettings(ctx); // read the environment once, at start-up
  const webhooks = new WebhookDispatcher(ctx, webhookOptionsFromEnv());
  taskTerminalHooks(ctx).push((task) => {
    webhooks.taskTerminal(task);
  });
  return {
    routes: [...profileRoutes(ctx), ...usageRoutes(ctx), ...voiceRoutes(ctx, idempotency), ...designRoutes(ctx, idempotency)],
    close: () => webhooks.close(),
  };
};
