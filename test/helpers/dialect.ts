/**
 * What the dialect this suite runs under (VOXPIPE_DIALECT, vitest.config.ts
 * projects) declares, for assertions that depend on it: a drawn dialect may
 * choose another PCM rate (src/server/dialect-random.ts), and the audio must
 * then say that rate, not ours.
 */
import { dialectOf } from '../../src/server/dialect.js';
import { drawRandomDialect, isRandomDialectName } from '../../src/server/dialect-random.js';
import { TONE_SAMPLE_RATE } from '../../src/server/engines/tone.js';
import { DEFAULT_REORDER_WINDOW_FRAMES } from '../../src/realtime/sequence-window.js';

/** PCM rate of the tone engine's audio under this suite's dialect. */
export const TONE_RATE = dialectOf().sampleRate ?? TONE_SAMPLE_RATE;

/**
 * The dialect refuses its capabilities document (403, 500) or serves one
 * that cannot be parsed: the client treats it as absent after one
 * `capabilities_unusable` warning (issue 24 item 5).
 */
export const CAPABILITIES_UNUSABLE = (['refused-403', 'refused-500', 'unparseable'] as const).some((c) => c === dialectOf().capabilities);

const DIALECT = process.env['VOXPIPE_DIALECT'] || 'reference';

/**
 * The dialect numbers audio with steps drawn at random (legal: spec 6 says
 * only "increasing"): the client cannot learn a step, gives the gaps up and
 * says so once per connection (`audio_sequence_gap`); the byte counts still
 * decide whether audio is missing.
 */
export const SKIPPING_NUMBERING = isRandomDialectName(DIALECT) && drawRandomDialect(DIALECT).realtime.sequence.step === 'random';

/**
 * The dialect numbers audio in a way the reorder window must first learn
 * (src/realtime/sequence-window.ts): a step other than 1, or a first
 * sequence past 1 that is near enough to be frames arriving early (from 7:
 * 1 to 6 may still come). The first frames of a connection then wait in
 * the window until it fills, the step is learnt or the segment completes;
 * a cut before that drops them and the resume brings them again.
 * (Drawn seed fa487a3c: per-segment numbering from 7.)
 */
export const NUMBERING_LEARNT = ((): boolean => {
  if (!isRandomDialectName(DIALECT)) return false;
  const { start, step } = drawRandomDialect(DIALECT).realtime.sequence;
  return step !== 1 || (start > 1 && start - 1 <= DEFAULT_REORDER_WINDOW_FRAMES);
})();

/** Warning codes without the `audio_sequence_gap` notes such numbering earns, and only under such a dialect. */
export function withoutNumberingNotes(codes: readonly string[]): string[] {
  return SKIPPING_NUMBERING ? codes.filter((c) => c !== 'audio_sequence_gap') : [...codes];
}

/**
 * Standard error of a CLI run without the notes a legal deployment earns,
 * and only under a dialect that earns them (anywhere else they stay and
 * fail the assertion): the one `capabilities_unusable` warning of refused
 * or garbled capabilities, the `audio_sequence_gap` warning of numbering
 * that skips at random.
 */
export function withoutDeploymentNotes(err: string): string {
  let out = CAPABILITIES_UNUSABLE ? err.replace(/^voxpipe: warning capabilities_unusable:.*\n/m, '') : err;
  if (SKIPPING_NUMBERING) out = out.replace(/^voxpipe: warning audio_sequence_gap:.*\n/gm, '');
  return out;
}

const FRAMES = isRandomDialectName(DIALECT) ? drawRandomDialect(DIALECT).realtime.frames : undefined;

/**
 * How many of the engine's audio frames the dialect sends as one (1: as
 * made). A deployment that merges frames sends fewer of them, and holds a
 * segment's last audio until the event after it: fault positions counted in
 * frames scale by this, and no cut can fall between a segment's last audio
 * and its `segment_completed` there.
 */
export const FRAMES_MERGED = FRAMES?.kind === 'merge' ? FRAMES.count : 1;
