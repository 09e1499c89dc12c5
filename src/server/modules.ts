/**
 * The modules of the reference server, in route-matching order. Each lives in
 * its own folder; this list is the one place that wires them in.
 */
import type { ModuleFactory } from './module.js';
import { createRealtimeModule } from './realtime/index.js';
import { createTtsModule } from './rest/tts/index.js';
import { createMediaModule } from './rest/media/index.js';
import { createAccountModule } from './rest/account/index.js';
import { createOpenApiModule } from './rest/openapi.js';

export const SERVER_MODULES: ModuleFactory[] = [
  createRealtimeModule,
  createTtsModule,
  createMediaModule,
  createAccountModule,
  createOpenApiModule,
];
