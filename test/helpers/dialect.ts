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

/**
 * The dialect refuses its capabilities document (403, 500) or serves one
 * that cannot be parsed: the client treats it as absent after one
 * `capabilities_unusable` warning (issue 24 item 5).
 */
export const CAPABILITIES_UNUSABLE = (['refused-403', 'refused-500', 'unparseable'] as const).some((c) => c === dialectOf().capabilities);

/**
 * Standard error of a CLI run without the one `capabilities_unusable`
 * warning such a deployment earns, and only under such a dialect (anywhere
 * else the warning stays and fails the assertion).
 */
export function withoutDeploymentNotes(err: string): string {
  return CAPABILITIES_UNUSABLE ? err.replace(/^voxpipe: warning capabilities_unusable:.*\n/m, '') : err;
}
