/** Module: ASR, image, video and lip-sync tasks and jobs. Not built yet: registers no routes. */
import type { ModuleFactory } from '../../app.js';

export const createMediaModule: ModuleFactory = () => ({ routes: [] });
