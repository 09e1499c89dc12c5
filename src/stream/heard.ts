/**
 * What the listener heard, to the word: the one rule every facade asks
 * (SpeechStream, BrowserSpeech, the telephony bridge). Pure: no I/O, no clock.
 *
 * Given the segments in the order they played and a played position (bytes
 * of the listener's audio, or time), each segment is heard whole, in part or
 * not at all. Inside a segment heard in part, the cut is at the end of the
 * last word whose estimated end had played (`heardAtWord`, from the word
 * timings estimated of the segment's audio: of all of it once it completed,
 * of what has arrived while it arrives); a segment with no word timings (no
 * audio energy measured: a compressed format the platform does not decode)
 * is cut in proportion to its audio and back to a word boundary, with a low
 * confidence.
 *
 * The heard text is a prefix of what the caller wrote, character for
 * character (the segments' own text, spaces, newlines and punctuation kept:
 * no normalized copy), so its length is the offset at which to truncate an
 * agent's context.
 *
 * Bytes become time through the audio's own layout: bytes per sample from
 * its bit depth (16-bit PCM and WAV) or one per sample (G.711 mu-law and
 * A-law), times its channels and rate. A compressed format has no such
 * figure: a segment's own `msPerByte` (from decoding it) places its words in
 * its bytes; without it, a position in bytes is cut in proportion to the bytes.
 */
import { estimateWordTimings, heardAtWord, type HeardCut, type WordTiming } from './word-timing.js';

/** One segment as the heard rule reads it: its text, how much of its audio the listener's side has, and its word timings. */
export interface SpokenAudio {
  segmentId: string;
  text: string;
  /** Bytes of the segment's audio the listener's side has, in play order (a stream header included). */
  bytes: number;
  /** Of `bytes`, a stream header at its start (not speech). Default 0. */
  headerBytes?: number;
  /** `bytes` is all of the segment's audio (it completed). */
  complete: boolean;
  /**
   * Where each word lies in the segment's audio (`estimateWordTimings`), or
   * the words placed so far of one still arriving
   * (`estimateArrivingWordTimings`: the cut goes no further than the last).
   */
  words?: readonly WordTiming[] | undefined;
  /** Milliseconds of audio per byte of a compressed segment (mp3, opus), from decoding it: places `words` in its bytes. */
  msPerByte?: number | undefined;
}

/** The layout of the audio a position is counted in (`ready`'s, or the telephony stream's G.711). */
export interface HeardLayout {
  /** `pcm`, `wav`, `mulaw`, `alaw`, or a compressed format (`mp3`, `opus`: no bytes per ms). */
  format: string;
  sampleRate: number;
  channels: number;
  /** Bits per sample of PCM; default 16. */
  bitDepth?: number;
}

/** Where playback was: bytes of the listener's audio (a stream header included), or milliseconds of it. */
export type PlayedPosition = { bytes: number } | { ms: number };

/** One segment of what was heard. */
export interface HeardSegment {
  segmentId: string;
  text: string;
  /** The listener heard the segment to its end. */
  complete: boolean;
  /** Bytes of its audio the listener's side had (a stream header included). */
  audioBytes: number;
  /** Characters of `text` heard: all of a complete segment; of a partial one, to the end of a word. */
  heardChars: number;
  /**
   * Confidence, 0 to 1, in that word boundary: 1 when all or none of the
   * segment was heard; that of the estimated word timings within it; or
   * `PROPORTIONAL_CONFIDENCE` when it is cut in proportion to its audio.
   */
  confidence: number;
}

/** What was heard of a turn. */
export interface HeardText {
  /** The segments that had audio, in order. */
  segments: HeardSegment[];
  /**
   * The text heard, to the word: the segments heard whole, then the words
   * heard of the one the cut fell in. A prefix of the text the caller wrote,
   * exactly (its spaces, newlines and punctuation kept), so
   * `heardText.length` is the offset at which to truncate an agent's context.
   */
  heardText: string;
  /** Confidence, 0 to 1, in the word boundary `heardText` ends at. */
  heardConfidence: number;
}

/** Confidence of a cut in proportion to a segment's audio (no word timings of it). */
export const PROPORTIONAL_CONFIDENCE = 0.3;

/** Bytes of audio per millisecond in `layout`; undefined for a compressed format. */
export function bytesPerMs(layout: HeardLayout): number | undefined {
  const f = layout.format;
  const perSample = f === 'pcm' || f === 'wav' ? (layout.bitDepth ?? 16) / 8 : f === 'mulaw' || f === 'alaw' ? 1 : 0;
  return perSample ? (perSample * layout.channels * layout.sampleRate) / 1000 : undefined;
}

/**
 * What the listener heard of `segments` (in play order) at `played`; default
 * everything the listener's side has. `layout` turns time into bytes (a
 * position in ms needs a PCM or G.711 layout) and bytes into time within a
 * segment.
 */
export function heardAt(segments: readonly SpokenAudio[], played: PlayedPosition | undefined, layout: HeardLayout | undefined): HeardText {
  const perMs = layout && bytesPerMs(layout);
  if (played && 'ms' in played && !perMs) throw new RangeError('a position in ms needs a PCM or G.711 layout');
  // In bytes of the listener's audio: a stream header comes with the first segment only.
  let budget = !played ? Infinity : 'ms' in played ? played.ms * perMs! + (segments[0]?.headerBytes ?? 0) : played.bytes;
  // Bytes per character of the segments complete so far: the length estimate of one still arriving.
  let knownBytes = 0;
  let knownChars = 0;
  const report: HeardText = { segments: [], heardText: '', heardConfidence: 1 };
  let ended = false;
  // Text of segments with no audio (nothing to hear), kept so the heard text stays a prefix when a later one is heard.
  let silent = '';
  for (const s of segments) {
    const { text, bytes } = s;
    if (bytes <= 0) {
      if (!ended) silent += text;
      continue;
    }
    const header = s.headerBytes ?? 0;
    const had = Math.min(bytes, Math.max(0, budget));
    budget -= had;
    const complete = s.complete && had >= bytes;
    let cut: HeardCut;
    if (complete) cut = { chars: text.length, confidence: 1 };
    else if (s.words && (perMs || s.msPerByte)) {
      // The words may be those placed so far (a segment still arriving or decoding): the cut reaches past the last only when it is the text's last.
      const placedAll = !/\S/.test(text.slice(s.words[s.words.length - 1]?.charEnd ?? 0));
      cut = heardAtWord(s.words, perMs ? Math.max(0, had - header) / perMs : Math.max(0, had - header) * s.msPerByte!, text.length, placedAll);
    }
    else {
      const estimate = s.complete || !knownChars ? 0 : (text.length * knownBytes) / knownChars;
      const chars = cutAtWord(text, had / Math.max(bytes, estimate));
      cut = { chars, confidence: had > 0 ? PROPORTIONAL_CONFIDENCE : 1 };
    }
    if (s.complete) {
      knownBytes += bytes - header;
      knownChars += text.length;
    }
    report.segments.push({ segmentId: s.segmentId, text, complete, audioBytes: bytes, heardChars: cut.chars, confidence: cut.confidence });
    if (!ended) {
      if (cut.chars > 0) {
        report.heardText += silent;
        silent = '';
      }
      report.heardText += text.slice(0, cut.chars);
      report.heardConfidence = cut.confidence;
      ended = !complete;
    }
  }
  return report;
}

/** Characters of `text` heard when `fraction` (0 to 1) of its audio played, ending at a word boundary (a word cut in the middle is not heard). */
export function cutAtWord(text: string, fraction: number): number {
  if (fraction >= 1) return text.length;
  const at = Math.floor(text.length * fraction);
  // At a boundary already (a space), else back to the end of the word before.
  return /\s/.test(text[at] ?? '') ? at : text.slice(0, at).replace(/\s*\S*$/, '').length;
}

/** Characters of `text` heard when `playedMs` of its audio (`samples`, mono s16 at `sampleRate`) played, at a word's end. */
export function heardInSegment(text: string, samples: Int16Array, sampleRate: number, playedMs: number): HeardCut {
  return heardAtWord(estimateWordTimings(text, { samples, sampleRate }), playedMs, text.length);
}
