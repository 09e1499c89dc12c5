/**
 * What the dialect this suite runs under (VOXPIPE_DIALECT, vitest.config.ts
 * projects) declares, for assertions that depend on it: a drawn dialect may
 * choose another PCM rate (src/server/dialect-random.ts), and the audio must
 * then say that rate, not ours.
 */
import { dialectOf } from '../../src/server/dialect.js';
import { drawRandomDialect, isRandomDialectName, labelsAudioUnknown } from '../../src/server/dialect-random.js';
import { TONE_SAMPLE_RATE } from '../../src/server/engines/tone.js';
import { DEFAULT_REORDER_WINDOW_FRAMES } from '../../src/realtime/sequence-window.js';

/** PCM rate of the tone engine's audio under this suite's dialect. */
export const TONE_RATE = dialectOf().sampleRate ?? TONE_SAMPLE_RATE;

/**
 * The dialect refuses its capabilities document (403, 500) or serves one
 * that cannot be parsed: the client treats it as absent after one
 * `capabilities_unusable` warning.
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
 * (For example, per-segment numbering from 7.)
 */
export const NUMBERING_LEARNT = ((): boolean => {
  if (!isRandomDialectName(DIALECT)) return false;
  const { start, step } = drawRandomDialect(DIALECT).realtime.sequence;
  return step !== 1 || (start > 1 && start - 1 <= DEFAULT_REORDER_WINDOW_FRAMES);
})();

/**
 * The dialect spells a needed field with a synonym no reader knows (an
 * `input_ack`'s sequence, a completion's segment id): the client reads it by
 * meaning and says so once (`server_field_not_found`).
 */
export const FIELDS_BY_MEANING = isRandomDialectName(DIALECT) && drawRandomDialect(DIALECT).realtime.byMeaning.length > 0;

/** The dialect labels audio with a type no client knows: the client goes by the bytes and says so once (`unknown_audio_type`). */
export const UNKNOWN_AUDIO_LABELS = isRandomDialectName(DIALECT) && labelsAudioUnknown(drawRandomDialect(DIALECT).http);

/** The note codes a legal deployment of this dialect earns (and only those: anywhere else they stay and fail the assertion). */
const EARNED_CODES = new Set([...(SKIPPING_NUMBERING ? ['audio_sequence_gap'] : []), ...(FIELDS_BY_MEANING ? ['server_field_not_found'] : []), ...(UNKNOWN_AUDIO_LABELS ? ['unknown_audio_type'] : [])]);

/** Warning codes without the notes a legal deployment of this dialect earns (`EARNED_CODES`). */
export function withoutDeploymentNoteCodes(codes: readonly string[]): string[] {
  return codes.filter((c) => !EARNED_CODES.has(c));
}

/**
 * Standard error of a CLI run without the notes a legal deployment earns,
 * and only under a dialect that earns them (anywhere else they stay and
 * fail the assertion): the one `capabilities_unusable` warning of refused
 * or garbled capabilities, the `audio_sequence_gap` warning of numbering
 * that skips at random, the one `server_field_not_found` of a needed field
 * read by meaning, the one `unknown_audio_type` of an audio label no client
 * knows.
 */
export function withoutDeploymentNotes(err: string): string {
  let out = CAPABILITIES_UNUSABLE ? err.replace(/^voxpipe: warning capabilities_unusable:.*\n/m, '') : err;
  for (const code of EARNED_CODES) out = out.replace(new RegExp(`^voxpipe: warning ${code}:.*\\n`, 'gm'), '');
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
