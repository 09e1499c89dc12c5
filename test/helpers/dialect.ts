/**
 * What the dialect this suite runs under (VOXPIPE_DIALECT, vitest.config.ts
 * projects) declares, for assertions that depend on it: a drawn dialect may
 * choose another PCM rate (src/server/dialect-random.ts), and the audio must
 * then say that rate, not ours.
 */
import { dialectOf } from '../../src/server/dialect.js';
import { TONE_SAMPLE_RATE } from '../../src/server/engines/tone.js';

/** PCM rate of the tone engine's audio under this suite's dialect. */
export const TONE_RATE = dialectOf().sampleRate ?? TONE_SAMPLE_RATE;
