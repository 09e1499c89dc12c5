/**
 * Limits of the service (spec section 8), in one place for client and server.
 * "Characters" are Unicode code points: a surrogate pair (emoji) counts once
 * and is never split.
 */
export const LIMITS = {
  /** Sync and async TTS `text`. */
  httpTextMinChars: 1,
  httpTextMaxChars: 5_000,
  /** Above this the spec advises async jobs over sync TTS. */
  syncAdvisedMaxChars: 2_500,
  speedMin: 0.5,
  speedMax: 2,
  speedDefault: 1,
  listLimitMin: 1,
  listLimitMax: 100,
  listLimitDefault: 20,
  textPreviewMaxChars: 80,
  referenceImageUrlsMax: 16,
  /** Voice cloning: the reference speech's length, in seconds (the reference server's rule; the spec shows none). */
  cloneMinSeconds: 10,
  cloneMaxSeconds: 300,
  /** Realtime simple mode: whole buffered request. */
  simpleRequestMaxChars: 10_000,
  /** Realtime reliable mode: one `text` frame. */
  textFrameMaxChars: 2_000,
  /** Realtime reliable mode: one segment (one `flush`). */
  segmentMaxChars: 10_000,
  /** Realtime: billing units per session. */
  sessionMaxUnits: 100_000,
  chunkLengthMin: 50,
  chunkLengthMax: 1_000,
  volumeMin: 0,
  volumeMax: 10,
  languageMinChars: 1,
  languageMaxChars: 32,
  idMinChars: 1,
  idMaxChars: 128,
  /** Largest realtime frame either side accepts (bytes); 1 MiB (README, Decisions worth knowing). */
  maxFrameBytes: 1024 * 1024,
  /** Deepest MessagePack nesting the decoder accepts (containers on one path; the top map is 1). */
  maxDepth: 16,
  /**
   * Most values (keys, values, array items) in one frame. Bounds what a hostile
   * frame makes the decoder allocate: without it a 1 MiB frame of empty maps
   * decodes into about a million objects (~66 MB, ~300 ms). A real event holds
   * a few dozen.
   */
  maxFrameValues: 8_192,
} as const;

/** Number of Unicode code points in `text` (the unit of every character limit). */
export function countChars(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low surrogate is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Split `text` into pieces of at most `maxChars` code points, never inside a
 * surrogate pair. Joining the pieces gives `text` back.
 */
export function splitByChars(text: string, maxChars: number): string[] {
  // A fraction or NaN would never equal `count` below and return one oversized piece.
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError('maxChars must be an integer of at least 1');
  const out: string[] = [];
  let start = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    if (count === maxChars) {
      out.push(text.slice(start, i));
      start = i;
      count = 0;
    }
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    count++;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}
