/**
 * Where heard text ends inside a segment the caller heard in part. Pure.
 *
 * The heard fraction of a segment's audio is mapped to characters in
 * proportion, then moved back to the end of the last word wholly inside it:
 * a word cut in the middle is not counted as heard. When the segment's audio
 * is all known, `heardInSegment` cuts at word timings estimated from it
 * instead (issue 26 item 1).
 */
import { estimateWordTimings, heardAtWord, type HeardCut } from '../stream/word-timing.js';

/** Characters of `text` heard when `playedMs` of its audio (`samples`, mono s16 at `sampleRate`) played, at a word's end. */
export function heardInSegment(text: string, samples: Int16Array, sampleRate: number, playedMs: number): HeardCut {
  return heardAtWord(estimateWordTimings(text, { samples, sampleRate }), playedMs, text.length);
}

/** Characters of `text` heard when `fraction` (0 to 1) of its audio played, ending at a word boundary. */
export function cutAtWord(text: string, fraction: number): number {
  if (fraction >= 1) return text.length;
  if (!(fraction > 0)) return 0;
  const at = Math.floor(text.length * fraction);
  // At a boundary already: the character there is a space (or the text ends).
  if (at >= text.length) return text.length;
  if (/\s/.test(text[at]!)) return at;
  // Back to the whitespace before the cut word; keep the space out.
  let i = at;
  while (i > 0 && !/\s/.test(text[i - 1]!)) i--;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  return i;
}
