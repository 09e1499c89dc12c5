/**
 * A segment checked against the protocol's limits before it is queued: the
 * driver asks it for reliable mode, the simple machine for each part.
 */
import { VoxpipeError } from '../errors.js';
import { ErrorCode } from '../protocol/constants.js';
import { countChars, LIMITS } from '../protocol/limits.js';
import type { SegmentInput } from '../transport.js';

/**
 * Check a segment against the protocol before it is queued: a segment id of
 * 1 to 128 characters, non-empty text of at most `maxChars` characters.
 * Throws VoxpipeError with the spec's code.
 */
export function validateSegment(segment: SegmentInput, maxChars: number = LIMITS.segmentMaxChars): void {
  const idChars = countChars(segment.segmentId);
  if (idChars < LIMITS.idMinChars || idChars > LIMITS.idMaxChars) {
    throw new VoxpipeError(ErrorCode.invalidMessage, `segment_id must be ${LIMITS.idMinChars} to ${LIMITS.idMaxChars} characters`);
  }
  if (segment.text.length === 0) throw new VoxpipeError(ErrorCode.emptySegment, `segment ${segment.segmentId} has no text`);
  if (countChars(segment.text) > maxChars) {
    throw new VoxpipeError(ErrorCode.segmentTooLarge, `segment ${segment.segmentId} is over ${maxChars} characters`);
  }
}
