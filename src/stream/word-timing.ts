/**
 * Word timings estimated from a segment's text and its audio.
 * Pure: no I/O, no clock.
 *
 * The service sends no word timestamps (spec 6), so the client estimates them:
 * 1. the words of the text are weighted by how long they take to say (vowel
 *    groups and letters; digits spoken as numbers; a pause after punctuation);
 * 2. the audio's short-time energy gives where speech starts and ends and
 *    where it pauses; the pauses are matched, in order, to the text's
 *    punctuation, so each clause is placed where the audio has it;
 * 3. inside a clause the weights share the clause's time, and each boundary is
 *    snapped to an energy dip nearby (the short silence of a stop or a gap).
 * Each boundary carries a confidence: high at a matched pause, lower when only
 * the weights place it.
 */

/** One word of a segment and where the estimate puts it in the segment's audio. */
export interface WordTiming {
  /** The word as written (a run of non-space characters, punctuation included). */
  word: string;
  /** Index of its first character in the segment's text. */
  charStart: number;
  /** Index after its last character. */
  charEnd: number;
  /** Where it starts in the segment's audio, ms from the segment's first sample. */
  startMs: number;
  /** Where it ends (the next word may start later, after a pause). */
  endMs: number;
  /**
   * Confidence, 0 to 1, in the boundary at this word's end (the last word's:
   * the end of speech): 0.9 at a pause matched to punctuation, 0.6 at an
   * energy dip, 0.3 where only the weights place it.
   */
  confidence: number;
  /**
   * The boundary is provisional: placed while the segment's audio was still
   * arriving, in the clause still being said (`estimateArrivingWordTimings`);
   * its confidence is then half what it would be once the segment completed.
   */
  provisional?: true;
}

/** PCM of a segment: mono or interleaved s16le samples and their rate. */
export interface WordTimingAudio {
  /** Samples (s16); interleaved when `channels` > 1. */
  samples: Int16Array;
  sampleRate: number;
  channels?: number;
}

/** Confidence of a boundary placed at a pause matched to punctuation. */
export const CONFIDENCE_PAUSE = 0.9;
/** Confidence of a boundary at a silent gap, where the clause has one between every two words. */
export const CONFIDENCE_GAP = 0.8;
/** Confidence of a boundary snapped to an energy dip. */
export const CONFIDENCE_DIP = 0.6;
/** Confidence of a boundary placed by the weights alone. */
export const CONFIDENCE_WEIGHT = 0.3;

const FRAME_MS = 10;
/** A pause is a run of quiet frames at least this long. */
const MIN_PAUSE_MS = 60;
/** A gap between words is a run of quiet frames at least this long. */
const MIN_GAP_MS = 30;
/** How far (ms) a boundary may move to reach an energy dip. */
const SNAP_MS = 60;
/** A dip is at least this much (dB) under the loudest frame within 50 ms on each side. */
const DIP_DEPTH_DB = 6;
/** What a dip's distance from where the weights put the boundary costs against its depth, in dB per ms: of two dips, the nearer wins unless the other is clearly deeper. */
const DIP_DISTANCE_DB_PER_MS = 0.1;
/** How far (ms, or share of the clause) a silent gap may lie from where the weights expect a boundary and still be taken as that boundary. */
const GAP_TOLERANCE_MS = 150;
const GAP_TOLERANCE_SHARE = 0.15;
/** Of a clause still arriving, the gaps are its boundaries when there are at least this share of the boundaries its rate expects in the audio so far. */
const GAP_SHARE_ARRIVING = 0.6;

interface Token {
  word: string;
  charStart: number;
  charEnd: number;
  weight: number;
  /** Strength of the break after the word: 0 none, 1 comma-like, 2 sentence end. */
  breakAfter: number;
}

/** Syllables of a word, guessed from its vowel groups (at least 1 for any word with letters). */
export function syllables(word: string): number {
  const w = word.toLowerCase().replace(/[^a-z\u00c0-\u024f]/g, '');
  if (w.length === 0) return 0;
  let count = w.match(/[aeiouy\u00e0-\u00ff]+/g)?.length ?? 0;
  // A final silent 'e' ("make", "there") is no syllable of its own; "-le" after a consonant is.
  if (w.length > 2 && w.endsWith('e') && !/[aeiouy]e$/.test(w) && !/[^aeiouy]le$/.test(w)) count--;
  // "-ed" is silent after anything but t or d ("checked", "moved"; not "wanted").
  else if (w.length > 3 && /[^aeioutdy]ed$/.test(w)) count--;
  return Math.max(1, count);
}

/** Letters of a word as sounds: a digraph (th, sh, ch, ck, ng, ph, wh, gh) or a doubled letter is one. */
function soundLetters(word: string): number {
  const letters = word.replace(/[^\p{L}]/gu, '').toLowerCase();
  return letters.replace(/th|sh|ch|ck|ng|ph|wh|gh/g, '.').replace(/(\p{L})\1/gu, '$1').length;
}

/**
 * How long a word takes to say, in letter-lengths: its letters (a digraph or
 * a doubled letter counted once: one sound), a share per syllable, and each
 * digit said as a word or two ("42": "forty two"). The
 * coefficients are a least-squares fit of word durations on the reference
 * engine (bench/word-timing.mjs), rounded; the sound-letter count, the
 * final lengthening and the dip figures were chosen on the same corpus by
 * its median and p90 boundary error.
 */
export function wordWeight(word: string): number {
  const letters = soundLetters(word);
  const digits = word.replace(/[^0-9]/g, '').length;
  return 0.4 + letters + (letters > 0 ? 0.37 * syllables(word) : 0) + 5.3 * digits;
}

/** Extra weight, in letter-lengths, of the last word of a sentence (half for a clause). */
const FINAL_LENGTHENING = 3;

function breakStrength(word: string): number {
  if (/[.!?]["')\]]*$/.test(word)) return 2;
  if (/[,;:\u2014]["')\]]*$/.test(word) || /^[-\u2013\u2014]+$/.test(word)) return 1;
  return 0;
}

/** The words of `text` (runs of non-space characters) with their weights. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(/\S+/g)) {
    const word = match[0];
    const charStart = match.index;
    const breakAfter = breakStrength(word);
    tokens.push({ word, charStart, charEnd: charStart + word.length, weight: wordWeight(word), breakAfter });
  }
  // The last word of a clause is drawn out (final lengthening), most at the end of a sentence.
  const last = tokens[tokens.length - 1];
  if (last !== undefined && last.breakAfter === 0) last.breakAfter = 2;
  for (const token of tokens) token.weight += token.breakAfter === 2 ? FINAL_LENGTHENING : token.breakAfter === 1 ? FINAL_LENGTHENING / 2 : 0;
  return tokens;
}

/** The two bytes of a sample value split between two chunks (`FrameEnergies.push`). */
const split = new Uint8Array(2);

/** Samples a second the frame energies read (every n-th sample, n = rate / this): energy, not spectrum, so 8 kHz is plenty. */
const ENERGY_READ_RATE = 2_000;

/**
 * The energy of each 10 ms frame of PCM, in dB, taken as the audio streams
 * in: all the estimate reads of the audio. A stream keeps this instead of a
 * segment's PCM until the segment completes: 8 bytes per 10 ms (800 B a
 * second) instead of 48 KB a second of 24 kHz mono s16 (memory per
 * stream). It reads every n-th sample (about `ENERGY_READ_RATE` a second:
 * every 3rd at 24 kHz, of one channel when n is a multiple of the channels),
 * straight from the bytes, so a client-bound stream spends a third of the
 * CPU on it (CPU per MB). Frames that the audio does not fill at
 * its end are left out.
 */
export class FrameEnergies {
  /** Length of a frame, ms (10, rounded to whole samples). */
  readonly frameMs: number;
  /** Sample values (all channels) per frame. */
  readonly #perFrame: number;
  /** Every `#stride`-th sample value is read. */
  readonly #stride: number;
  #db = new Float64Array(32);
  #frames = 0;
  /** Sum of squares and count of the values read of the frame being filled, and how far into it the reading is (in sample values). */
  #sum = 0;
  #read = 0;
  #pos = 0;
  /** Bytes to pass over, in the next chunk, before the first byte of the next sample value read. */
  #skip = 0;
  /** The low byte of the next sample value read, when a chunk ended between its two bytes (-1: none). */
  #carry = -1;

  constructor(sampleRate: number, channels = 1) {
    const frameSamples = Math.max(1, Math.round((sampleRate * FRAME_MS) / 1000));
    const ch = Math.max(1, channels);
    this.#perFrame = frameSamples * ch;
    this.#stride = Math.max(1, Math.floor(sampleRate / ENERGY_READ_RATE)) * ch;
    this.frameMs = (frameSamples * 1000) / sampleRate;
  }

  /**
   * Take s16le bytes (any length, at any offset: a sample split between two
   * chunks is joined). The hot loop of a client-bound stream: it reads the
   * two bytes of each sample value it needs where they are (no view, no
   * copy of a chunk that is not 2-byte aligned), in locals, with no call per
   * sample.
   */
  push(bytes: Uint8Array): void {
    const n = bytes.length;
    if (n === 0) return;
    if (this.#carry >= 0) {
      // The sample value split between the last chunk and this one, read whole; then the rest of this chunk.
      split[0] = this.#carry;
      split[1] = bytes[0]!;
      this.#carry = -1;
      this.#skip = 0;
      this.push(split);
      this.#skip++;
    }
    const stride = this.#stride;
    const step = stride * 2;
    const perFrame = this.#perFrame;
    let sum = this.#sum;
    let read = this.#read;
    let pos = this.#pos;
    let i = this.#skip;
    for (; i < n - 1; i += step) {
      // Little-endian: the high byte sign-extended, then the low byte.
      const v = ((bytes[i + 1]! << 24) >> 16) | bytes[i]!;
      sum += v * v;
      read++;
      pos += stride;
      if (pos >= perFrame) {
        this.#frame(sum / read);
        sum = 0;
        read = 0;
        pos -= perFrame;
      }
    }
    if (i === n - 1) {
      this.#carry = bytes[i]!;
      i = 0;
    } else i -= n;
    this.#sum = sum;
    this.#read = read;
    this.#pos = pos;
    this.#skip = i;
  }

  /** Take samples already read (the whole PCM of a segment: `estimateWordTimings`): their bytes, as s16le (the platforms a client runs on are little-endian, as `pcmSamples` reads the wire). */
  pushSamples(samples: Int16Array): void {
    this.push(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  }

  /** The energies of the whole frames taken so far. */
  get db(): Float64Array {
    return this.#db.subarray(0, this.#frames);
  }

  /** A whole frame of mean square `meanSquare`. */
  #frame(meanSquare: number): void {
    if (this.#frames === this.#db.length) {
      const grown = new Float64Array(this.#db.length * 2);
      grown.set(this.#db);
      this.#db = grown;
    }
    this.#db[this.#frames++] = 10 * Math.log10(meanSquare + 1);
  }
}

/** Energy of each 10 ms frame, in dB (mono mix). */
function frameEnergies(audio: WordTimingAudio | FrameEnergies): { db: Float64Array; frameMs: number } {
  if (audio instanceof FrameEnergies) return { db: audio.db, frameMs: audio.frameMs };
  const meter = new FrameEnergies(audio.sampleRate, audio.channels ?? 1);
  meter.pushSamples(audio.samples);
  return { db: meter.db, frameMs: meter.frameMs };
}

/** Weight of the pause after a word: by the strength of its break. */
function breakWeight(t: Token): number {
  return t.breakAfter === 2 ? 3 : t.breakAfter === 1 ? 1.5 : 0;
}

/** Weight of the tokens and the pauses between them. */
function totalWeight(tokens: readonly Token[]): number {
  return tokens.reduce((s, t, i) => s + t.weight + (i < tokens.length - 1 ? breakWeight(t) : 0), 0);
}

interface Pause {
  startMs: number;
  endMs: number;
}

interface Analysis {
  speechStart: number;
  speechEnd: number;
  /** No frame louder than the quiet threshold. */
  silent: boolean;
  pauses: Pause[];
  gaps: Pause[];
  db: Float64Array;
  frameMs: number;
}

/** Speech extent and interior pauses of the audio. */
function analyse(audio: WordTimingAudio | FrameEnergies): Analysis {
  const { db, frameMs } = frameEnergies(audio);
  let peak = 0;
  for (const v of db) peak = Math.max(peak, v);
  // Quiet: 35 dB under the loudest frame, or near digital silence.
  const threshold = Math.max(peak - 35, 20);
  let first = -1;
  let last = -1;
  for (let f = 0; f < db.length; f++) {
    if (db[f]! > threshold) {
      if (first < 0) first = f;
      last = f;
    }
  }
  if (first < 0) return { speechStart: 0, speechEnd: db.length * frameMs, silent: true, pauses: [], gaps: [], db, frameMs };
  const gaps: Pause[] = [];
  let runStart = -1;
  for (let f = first; f <= last + 1; f++) {
    const quiet = f <= last && db[f]! <= threshold;
    if (quiet && runStart < 0) runStart = f;
    if (!quiet && runStart >= 0) {
      if ((f - runStart) * frameMs >= MIN_GAP_MS) gaps.push({ startMs: runStart * frameMs, endMs: f * frameMs });
      runStart = -1;
    }
  }
  const pauses = gaps.filter((gap) => gap.endMs - gap.startMs >= MIN_PAUSE_MS);
  return { speechStart: first * frameMs, speechEnd: (last + 1) * frameMs, silent: false, pauses, gaps, db, frameMs };
}

/**
 * Match pauses to the breaks after words, in order: for each break (strongest
 * expectation first is not needed: both lists are in time order) take the
 * longest unused pause near where the weights expect it, keeping the order.
 * Returns, for each token index, the pause that follows it.
 */
function matchPauses(tokens: Token[], pauses: Pause[], speechStart: number, speechEnd: number): Map<number, Pause> {
  const matched = new Map<number, Pause>();
  if (pauses.length === 0 || tokens.length < 2) return matched;
  const total = totalWeight(tokens);
  const span = speechEnd - speechStart;
  let acc = 0;
  let nextPause = 0;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i]!;
    acc += t.weight;
    const expected = speechStart + (span * (acc + breakWeight(t) / 2)) / total;
    acc += breakWeight(t);
    const window = t.breakAfter > 0 ? span * 0.2 + 150 : 120;
    let best = -1;
    let bestScore = 0;
    for (let p = nextPause; p < pauses.length; p++) {
      const pause = pauses[p]!;
      const centre = (pause.startMs + pause.endMs) / 2;
      if (centre > expected + window) break;
      const distance = Math.abs(centre - expected);
      if (distance > window) continue;
      const length = pause.endMs - pause.startMs;
      // A break expects a pause; a word without punctuation only takes a long, close one.
      if (t.breakAfter === 0 && (length < 120 || distance > 80)) continue;
      const score = length * (1 - distance / (window * 1.5));
      if (score > bestScore) {
        bestScore = score;
        best = p;
      }
    }
    if (best >= 0) {
      matched.set(i, pauses[best]!);
      nextPause = best + 1;
    }
  }
  return matched;
}

/** The frame of lowest energy within `reachMs` of `ms` (the nearer preferred), if it is a real dip. */
function dipNear(ms: number, lo: number, hi: number, db: Float64Array, frameMs: number, reachMs: number): number | undefined {
  const from = Math.max(Math.ceil(Math.max(lo, ms - reachMs) / frameMs), 1);
  const to = Math.min(Math.floor(Math.min(hi, ms + reachMs) / frameMs), db.length - 2);
  let best = -1;
  let bestValue = Infinity;
  let bestScore = Infinity;
  for (let f = from; f <= to; f++) {
    const score = db[f]! + DIP_DISTANCE_DB_PER_MS * Math.abs(f * frameMs + frameMs / 2 - ms);
    if (score < bestScore) {
      bestScore = score;
      bestValue = db[f]!;
      best = f;
    }
  }
  if (best < 0) return undefined;
  // A dip: at least DIP_DEPTH_DB under the loudest frame within 50 ms on each side.
  const reach = Math.round(50 / frameMs);
  let left = -Infinity;
  let right = -Infinity;
  for (let f = Math.max(0, best - reach); f < best; f++) left = Math.max(left, db[f]!);
  for (let f = best + 1; f <= Math.min(db.length - 1, best + reach); f++) right = Math.max(right, db[f]!);
  if (left - bestValue < DIP_DEPTH_DB || right - bestValue < DIP_DEPTH_DB) return undefined;
  return best * frameMs + frameMs / 2;
}

/** Boundaries of `clause` (from `startMs`, at `msPerWeight`) expected before `ms`. */
function expectedBefore(clause: readonly Token[], startMs: number, msPerWeight: number, ms: number): number {
  let at = startMs;
  let count = 0;
  for (const t of clause) if ((at += t.weight * msPerWeight) < ms) count++;
  return count;
}

/** A clause placed between `startMs` and `endMs`: its words, their boundaries from gaps, dips or weights. */
function placeClause(clause: readonly Token[], startMs: number, endMs: number, endConfidence: number, found: Analysis, out: WordTiming[], arriving = false): void {
  const { gaps, db, frameMs } = found;
  const weight = clause.reduce((s, t) => s + t.weight, 0);
  const span = Math.max(0, endMs - startMs);
  // One silent gap between every two words of the clause (an engine that
  // pauses between words), each near where the weights expect a boundary (a
  // count that matches by chance is no such engine): the gaps are the boundaries.
  // Of a clause still arriving, the gaps so far are its first boundaries.
  const inner = gaps.filter((gap) => gap.startMs > startMs && gap.endMs < endMs);
  let expected = 0;
  const regular =
    (arriving ? inner.length > 1 && inner.length < clause.length && inner.length >= GAP_SHARE_ARRIVING * expectedBefore(clause, startMs, span / weight, found.speechEnd) : inner.length === clause.length - 1) &&
    inner.every((gap, k) => {
      expected += clause[k]!.weight;
      return Math.abs((gap.startMs + gap.endMs) / 2 - (startMs + (span * expected) / weight)) <= Math.max(GAP_TOLERANCE_MS, GAP_TOLERANCE_SHARE * span);
    });
  if (clause.length > 1 && regular) {
    clause.slice(0, inner.length + (arriving ? 0 : 1)).forEach((t, k) => {
      const last = k === clause.length - 1;
      out.push({ word: t.word, charStart: t.charStart, charEnd: t.charEnd, startMs: k === 0 ? startMs : inner[k - 1]!.endMs, endMs: last ? endMs : inner[k]!.startMs, confidence: last ? endConfidence : CONFIDENCE_GAP });
    });
    return;
  }
  let acc = 0;
  let previousEnd = startMs;
  for (let k = 0; k < clause.length; k++) {
    const t = clause[k]!;
    acc += t.weight;
    let end = startMs + (span * acc) / weight;
    let confidence = CONFIDENCE_WEIGHT;
    if (k === clause.length - 1) {
      end = endMs;
      confidence = endConfidence;
    } else {
      const dip = dipNear(end, previousEnd + frameMs, endMs - frameMs, db, frameMs, SNAP_MS);
      if (dip !== undefined) {
        end = dip;
        confidence = CONFIDENCE_DIP;
      }
    }
    out.push({ word: t.word, charStart: t.charStart, charEnd: t.charEnd, startMs: previousEnd, endMs: end, confidence });
    previousEnd = end;
  }
}

/**
 * Estimate where each word of `text` lies in `audio` (the segment's whole
 * PCM, or its frame energies taken as it streamed: `FrameEnergies`).
 * Words are runs of non-space characters; an empty text gives no words.
 */
export function estimateWordTimings(text: string, audio: WordTimingAudio | FrameEnergies): WordTiming[] {
  return place(text, audio, undefined);
}

/** Milliseconds of speech per unit of word weight at an ordinary rate (eSpeak NG at speed 1, pauses included: bench/word-timing.mjs). */
export const DEFAULT_MS_PER_WEIGHT = 56;

/** Weight (in units of word weight) the stream's rate keeps against what the segment's own closed clauses measured. */
const PRIOR_WEIGHT = 30;

/** A word of a segment still arriving is placed once this much audio (ms) arrived after its estimated end: enough to see the dip there. */
const ARRIVED_MARGIN_MS = 20;

/**
 * How fast `words` (a completed segment's estimate, every word of `text`)
 * were said: milliseconds of speech per unit of word weight, pauses
 * included. The rate a segment still arriving is placed with
 * (`estimateArrivingWordTimings`).
 */
export function msPerWeight(text: string, words: readonly WordTiming[]): number | undefined {
  const ms = words.length > 1 ? words[words.length - 1]!.endMs - words[0]!.startMs : 0;
  return ms > 0 ? ms / tokenize(text).reduce((s, t) => s + t.weight, 0) : undefined;
}

/**
 * Word timings of a segment whose audio is still arriving: `audio` is what
 * has arrived (its `FrameEnergies` so far). Only the words whose audio has
 * arrived are placed; the text's remaining words are left out (not yet
 * placed). Clauses that ended at a pause the audio already has are placed
 * as `estimateWordTimings` places them; the clause still being said is
 * placed as a whole clause would be over the time `msPerWeight` gives it
 * (the rate of the stream's earlier segments, default
 * `DEFAULT_MS_PER_WEIGHT`, drawn toward the rate of the segment's closed
 * clauses), and only its words whose end has arrived are kept. Those
 * boundaries are provisional (`provisional: true`, half the confidence they
 * would have once the segment completed): more audio may move them. Cost:
 * one pass over the frames and the words, so asking at a barge-in (not on
 * every chunk) keeps a stream linear.
 */
export function estimateArrivingWordTimings(text: string, audio: WordTimingAudio | FrameEnergies, msPerWeight = DEFAULT_MS_PER_WEIGHT): WordTiming[] {
  return place(text, audio, msPerWeight);
}

/** The words of `text` in `audio`: all of them (`rate` undefined), or those whose audio has arrived at `rate` ms per unit of weight. */
function place(text: string, audio: WordTimingAudio | FrameEnergies, rate: number | undefined): WordTiming[] {
  const tokens = tokenize(text);
  const found = analyse(audio);
  const out: WordTiming[] = [];
  if (tokens.length === 0 || (rate !== undefined && found.silent)) return out;
  const weightOf = (clause: Token[]): number => clause.reduce((s, t) => s + t.weight, 0);
  // Arriving: the pauses are matched over where the speech would end at `rate`.
  const matched = matchPauses(tokens, found.pauses, found.speechStart, rate === undefined ? found.speechEnd : Math.max(found.speechEnd, found.speechStart + rate * totalWeight(tokens)));
  // Clauses: runs of tokens between matched pauses.
  let clauseFirst = 0;
  let clauseStartMs = found.speechStart;
  let closedMs = 0;
  let closedWeight = 0;
  for (let i = 0; i < tokens.length; i++) {
    const pause = matched.get(i);
    if (pause === undefined && i < tokens.length - 1) continue;
    const clause = tokens.slice(clauseFirst, i + 1);
    if (pause) {
      placeClause(clause, clauseStartMs, pause.startMs, CONFIDENCE_PAUSE, found, out);
      closedMs += pause.endMs - clauseStartMs;
      closedWeight += weightOf(clause) + breakWeight(tokens[i]!);
      clauseFirst = i + 1;
      clauseStartMs = pause.endMs;
    } else if (rate === undefined) placeClause(clause, clauseStartMs, found.speechEnd, CONFIDENCE_WEIGHT, found, out);
    else {
      // The clause being said, over the time the rate gives it (never ending before the speech that arrived).
      const clauseRate = (rate * PRIOR_WEIGHT + closedMs) / (PRIOR_WEIGHT + closedWeight);
      const placed: WordTiming[] = [];
      placeClause(clause, clauseStartMs, Math.max(found.speechEnd, clauseStartMs + clauseRate * weightOf(clause)), CONFIDENCE_WEIGHT, found, placed, true);
      for (const w of placed) {
        if (w.endMs + ARRIVED_MARGIN_MS > found.db.length * found.frameMs) break;
        out.push({ ...w, confidence: w.confidence / 2, provisional: true });
      }
    }
  }
  return out;
}

/**
 * The baseline the estimate is measured against: each word starts where its
 * first character falls when the audio is shared out in proportion to characters.
 */
export function proportionalWordTimings(text: string, durationMs: number): WordTiming[] {
  const tokens = tokenize(text);
  const length = Math.max(1, text.length);
  return tokens.map((t, i) => ({
    word: t.word,
    charStart: t.charStart,
    charEnd: t.charEnd,
    startMs: (durationMs * t.charStart) / length,
    endMs: (durationMs * (tokens[i + 1]?.charStart ?? length)) / length,
    confidence: CONFIDENCE_WEIGHT,
  }));
}

/** Where heard text ends: characters heard and the confidence of that boundary. */
export interface HeardCut {
  /** Characters of the text heard, ending at the end of a word (0: none). */
  chars: number;
  /** Confidence (0 to 1) in the boundary; 1 when all or nothing was heard. */
  confidence: number;
}

/**
 * Heard text of a segment of which `playedMs` of audio played: up to the end
 * of the last word whose estimated end is within what played. `placedAll`
 * (default true): `words` places every word of the text; false for the
 * words of a segment still arriving (`estimateArrivingWordTimings`), whose
 * last placed word is then the furthest the cut can reach.
 */
export function heardAtWord(words: readonly WordTiming[], playedMs: number, textLength: number, placedAll = true): HeardCut {
  if (words.length === 0) return placedAll ? { chars: playedMs > 0 ? textLength : 0, confidence: 1 } : { chars: 0, confidence: CONFIDENCE_WEIGHT / 2 };
  const last = words[words.length - 1]!;
  if (playedMs >= last.endMs) return placedAll ? { chars: textLength, confidence: 1 } : { chars: last.charEnd, confidence: last.confidence };
  let heard: WordTiming | undefined;
  for (const word of words) {
    if (word.endMs <= playedMs) heard = word;
    else break;
  }
  if (heard === undefined) return { chars: 0, confidence: playedMs <= words[0]!.startMs ? 1 : words[0]!.confidence };
  return { chars: heard.charEnd, confidence: heard.confidence };
}

/** Reads s16le bytes as samples (copying when the buffer is not 2-byte aligned). */
export function pcmSamples(bytes: Uint8Array): Int16Array {
  const length = Math.floor(bytes.byteLength / 2);
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, length);
  const copy = new Uint8Array(length * 2);
  copy.set(bytes.subarray(0, length * 2));
  return new Int16Array(copy.buffer);
}

/** Where a word truly starts (from a engine that knows it), by its first character. */
export interface TrueWordStart {
  charStart: number;
  startMs: number;
}

/**
 * Boundary errors of `estimate` against `truth`, in ms: for every word after
 * the first that the truth places, |estimated start - true start|. A word's
 * true start is that of the first true word starting inside it.
 */
export function wordBoundaryErrors(estimate: readonly WordTiming[], truth: readonly TrueWordStart[]): number[] {
  const errors: number[] = [];
  for (let i = 1; i < estimate.length; i++) {
    const word = estimate[i]!;
    const hit = truth.find((t) => t.charStart >= word.charStart && t.charStart < word.charEnd);
    if (hit !== undefined) errors.push(Math.abs(word.startMs - hit.startMs));
  }
  return errors;
}
