/**
 * What the listener gets when a segment cut off mid-audio is generated again
 * (a resumed realtime request, or a failover to another transport that
 * speaks the whole segment anew): the one rule, used by the reliable machine
 * and by SpeechStream. Pure: the callers keep the counters.
 *
 * - `continue` (pcm, wav; sample-exact): skip what the listener already has
 *   and release the rest, so the output is byte-identical to an unbroken run.
 * - `restart` (mp3, opus: frames cannot be cut at a byte): release the whole
 *   segment again, announced by a `discontinuity` naming how many bytes of it
 *   the listener had (and now hears again).
 */

/** What the listener gets when a segment was cut off mid-audio and is generated again. */
export const PartialSegmentPolicy = {
  /** Skip the bytes already emitted and continue (sample-exact for pcm and wav). */
  continue: 'continue',
  /** Emit a `discontinuity` event, then the whole segment again (mp3, opus). */
  restart: 'restart',
} as const;
export type PartialSegmentPolicy = (typeof PartialSegmentPolicy)[keyof typeof PartialSegmentPolicy];

/** Formats whose bytes can be spliced at any sample boundary. */
const SPLICEABLE: ReadonlySet<string> = new Set(['pcm', 'wav']);

/** The default policy for a format: `continue` for pcm and wav, `restart` for the rest. */
export function defaultPartialPolicy(format: string): PartialSegmentPolicy {
  return SPLICEABLE.has(format) ? PartialSegmentPolicy.continue : PartialSegmentPolicy.restart;
}

/** Where a segment stands when a payload of it arrives. */
export interface SpliceCursor {
  /** Audio bytes of the segment the listener has (since its last restart). */
  emitted: number;
  /** Bytes of the segment received on the current attempt, before this payload. */
  received: number;
}

export interface Splice<T extends Uint8Array = Uint8Array> {
  /** What goes to the listener: `payload` or a view of its tail (a Buffer for a Buffer); may be empty. */
  data: T;
  /** Set when this payload restarts the segment: the bytes the listener had of it (the `discontinuity`'s `droppedBytes`); the caller resets `emitted`. */
  restart?: { droppedBytes: number };
}

/**
 * Splice one payload of a segment. `frameBytes` (channels x bytes per
 * sample) keeps a `continue` skip on a sample boundary.
 */
export function splice<T extends Uint8Array>(cursor: SpliceCursor, payload: T, policy: PartialSegmentPolicy, frameBytes = 1): Splice<T> {
  if (payload.byteLength === 0) return { data: payload };
  if (policy === PartialSegmentPolicy.restart) {
    return cursor.received === 0 && cursor.emitted > 0 ? { data: payload, restart: { droppedBytes: cursor.emitted } } : { data: payload };
  }
  const already = cursor.emitted - cursor.received;
  if (already <= 0) return { data: payload };
  const skip = Math.min(already - (already % frameBytes), payload.byteLength);
  // subarray of a Buffer is a Buffer.
  return { data: skip > 0 ? (payload.subarray(skip) as T) : payload };
}
