/** Module: profile, usage, voices, voice design, webhooks. Not built yet: registers no routes. */
import type { ModuleFactory } from '../../app.js';

export const createAccountModule: ModuleFactory = () => ({ routes: [] });
