/**
 * The text segmenter's pure core: where a stream of LLM text may be cut into
 * speech segments. No timers and no state beyond what the caller passes in;
 * `TokenSegmenter` (token-segmenter.ts) wraps it with a buffer and timeouts.
 *
 * Contract:
 * - Lossless: the segments plus the returned `rest` concatenate to the input,
 *   whitespace included. Whitespace after a cut point stays with the segment
 *   before it ("One. " + "Two."), so a segment never starts with the space
 *   that ended the previous sentence and the cut is only decided once the next
 *   non-space character has arrived.
 * - Split-independent: without timeouts, the segments do not depend on how the
 *   text was chunked (characters, words, sub-word tokens or one piece). Every
 *   decision waits until the text it depends on is buffered: a period at the
 *   end of the buffer ("Mr." may be followed by "Smith") is only a boundary
 *   once the following text is seen, or at the end of input.
 * - Lengths are Unicode code points (`countChars`), the unit of every service
 *   limit; a cut never falls inside a surrogate pair.
 */
import { LIMITS } from '../protocol/limits.js';

/** Options of the segmenter. All lengths are Unicode code points. */
export interface SegmenterOptions {
  /**
   * The first segment ends at the first clause or sentence boundary once at
   * least this many characters (trimmed) precede it. Default 12.
   */
  firstMinChars?: number;
  /**
   * If no such boundary appears within this many characters, the first
   * segment ends at the last whitespace before it. Default 80 (at most `maxChars`).
   */
  firstMaxChars?: number;
  /** Later segments merge whole sentences up to about this size. Default 250 (at most `maxChars`). */
  targetChars?: number;
  /** Hard limit of a segment. Default and maximum `LIMITS.segmentMaxChars` (10,000). */
  maxChars?: number;
}

/** Segmenter options with every default filled in. */
export type ResolvedSegmenterOptions = Readonly<Required<SegmenterOptions>>;

/**
 * Defaults, chosen for speech latency:
 * - `firstMinChars` 12: two or three words, about 0.8 s of speech, which
 *   covers the time to first audio of the second segment; "Sure, " alone is
 *   too short to be worth a request, "Sure, here it is: " is not.
 * - `firstMaxChars` 80: about 20 LLM tokens; text without any punctuation
 *   still starts speaking after a few words.
 * - `targetChars` 250: two or three typical sentences (15 s of speech), enough
 *   context for good prosody, one `text` frame, few billing segments.
 * - `maxChars` 10,000: the service's segment limit.
 */
export const SEGMENTER_DEFAULTS = {
  firstMinChars: 12,
  firstMaxChars: 80,
  targetChars: 250,
  maxChars: LIMITS.segmentMaxChars,
} as const satisfies ResolvedSegmenterOptions;

/** How much of the buffer `segmentText` may cut. */
export const CutMode = {
  /** More text may follow: cut only where the decision is final. */
  stream: 'stream',
  /** A timeout ran out: also cut once at the best place available now. */
  timeout: 'timeout',
  /** End of input or flush: cut everything. */
  final: 'final',
} as const;
export type CutMode = (typeof CutMode)[keyof typeof CutMode];

/** Kinds of cut point. */
export const BoundaryKind = {
  /** `.` `!` `?` `…`, CJK `。！？；`, or a line break. */
  sentence: 'sentence',
  /** `,` `;` `:` `—`, spaced `–`, CJK `，、：`. */
  clause: 'clause',
} as const;
export type BoundaryKind = (typeof BoundaryKind)[keyof typeof BoundaryKind];

/** A place where text may be cut: `index` (UTF-16) is where the next segment starts. */
export interface Boundary {
  index: number;
  kind: BoundaryKind;
}

/** What the caller keeps between calls of `segmentText`. */
export interface SegmenterState {
  /** Segments emitted so far in this utterance (0 means the next one is the first). */
  readonly emitted: number;
  /**
   * Scan progress returned by the previous call. Pass it back only if the new
   * buffer starts with that call's `rest` (text appended); otherwise omit it.
   */
  readonly scan?: ScanProgress;
}

/** Result of `segmentText`. */
export interface SegmentTextResult {
  /**
   * Segments to send, in order. None is whitespace only, except a hard cut
   * through a run of more than `maxChars` whitespace characters.
   */
  segments: string[];
  /** Text still buffered (`segments.join('') + rest` is the input). */
  rest: string;
  state: SegmenterState;
}

/** Objects returned by `resolveSegmenterOptions`, which need no second check. */
const resolvedOptions = new WeakSet<object>();

/** Fill in defaults and check the options; throws `RangeError` on nonsense. */
export function resolveSegmenterOptions(options: SegmenterOptions = {}): ResolvedSegmenterOptions {
  if (resolvedOptions.has(options)) return options as ResolvedSegmenterOptions;
  // Defaults shrink to fit a smaller explicit limit; explicit conflicts throw.
  const maxChars = options.maxChars ?? SEGMENTER_DEFAULTS.maxChars; // code points
  const firstMaxChars = options.firstMaxChars ?? Math.min(SEGMENTER_DEFAULTS.firstMaxChars, maxChars); // code points
  const resolved = {
    firstMinChars: options.firstMinChars ?? Math.min(SEGMENTER_DEFAULTS.firstMinChars, firstMaxChars), // code points
    firstMaxChars,
    targetChars: options.targetChars ?? Math.min(SEGMENTER_DEFAULTS.targetChars, maxChars), // code points
    maxChars,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
  if (resolved.maxChars > LIMITS.segmentMaxChars) throw new RangeError(`maxChars must be at most ${LIMITS.segmentMaxChars}`);
  if (resolved.targetChars > resolved.maxChars) throw new RangeError('targetChars must be at most maxChars');
  if (resolved.firstMaxChars > resolved.maxChars) throw new RangeError('firstMaxChars must be at most maxChars');
  if (resolved.firstMinChars > resolved.firstMaxChars) throw new RangeError('firstMinChars must be at most firstMaxChars');
  Object.freeze(resolved);
  resolvedOptions.add(resolved);
  return resolved;
}

// ---------------------------------------------------------------------------
// Character classes: one flag table over the BMP, built once.

const WS = 1;
const NL = 2;
/** Sentence end that needs whitespace after it: `.` `!` `?` `…`. */
const TERM = 4;
/** CJK sentence end, no space needed: `。！？；`. */
const TERM_CJK = 8;
/** Clause mark that needs whitespace after it: `,` `;` `:`. */
const CLAUSE = 16;
/** Clause mark that needs no space: `—`, CJK `，、：`. */
const CLAUSE_FREE = 32;
/** En dash: a clause mark only with whitespace on both sides. */
const DASH_SPACED = 64;
const CLOSER = 128;
const OPENER = 256;
/** Ideographs and kana: a cut between two of them is a word boundary. */
const CJK_CHAR = 512;

const FLAGS = buildFlags();

function buildFlags(): Uint16Array {
  const t = new Uint16Array(0x10000);
  const mark = (chars: string, flag: number): void => {
    for (const ch of chars) t[ch.charCodeAt(0)]! |= flag;
  };
  const range = (from: number, to: number, flag: number): void => {
    for (let c = from; c <= to; c++) t[c]! |= flag;
  };
  // NBSP and the other no-break spaces are deliberately not whitespace: no cut there.
  mark('\t\n\v\f\r \u0085\u1680\u2028\u2029\u205f\u3000', WS);
  range(0x2000, 0x2006, WS);
  range(0x2008, 0x200a, WS);
  mark('\n\v\f\r\u0085\u2028\u2029', NL);
  mark('.!?\u2026\u203c\u2047\u2048\u2049\u061f\u06d4\u0964\u0965', TERM);
  mark('\u3002\uff01\uff1f\uff1b\uff61\uff0e', TERM_CJK);
  mark(',;:\u060c\u061b', CLAUSE);
  mark('\u2014\u2015\uff0c\u3001\uff1a\ufe50\ufe51', CLAUSE_FREE);
  mark('\u2013', DASH_SPACED);
  mark('"\')]}*_`\u00bb\u2019\u201d\u203a\u300d\u300f\uff09\u3011\u300b\u3009\u3015\u3017\uff3d\uff5d\uff02\uff07', CLOSER);
  mark('"\'([{*_`\u00ab\u2018\u201c\u2039\u00bf\u00a1\u300c\u300e\uff08\u3010\u300a\u3008', OPENER);
  range(0x3040, 0x30ff, CJK_CHAR); // hiragana, katakana
  range(0x3400, 0x4dbf, CJK_CHAR); // CJK extension A
  range(0x4e00, 0x9fff, CJK_CHAR); // CJK unified ideographs
  range(0xf900, 0xfaff, CJK_CHAR); // compatibility ideographs
  range(0xff66, 0xff9f, CJK_CHAR); // half-width katakana
  return t;
}

const DOT = 0x2e;

function flagsAt(text: string, i: number): number {
  return FLAGS[text.charCodeAt(i)] ?? 0;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

const LETTER = /\p{L}/u;
const LOWER = /\p{Ll}/u;

/** A UTF-16 unit that is a letter (BMP letters only: enough for abbreviations). */
function isLetterUnit(c: number): boolean {
  if (c < 0x80) return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  return !isHighSurrogate(c) && !isLowSurrogate(c) && LETTER.test(String.fromCharCode(c));
}

function isLowerCodePoint(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x61 && cp <= 0x7a;
  return LOWER.test(String.fromCodePoint(cp));
}

function isDigitUnit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

// ---------------------------------------------------------------------------
// Abbreviations. A single "." followed by whitespace ends a sentence unless
// the word before it says otherwise (lists are lowercase).

/** Always followed by more of the sentence (titles, "e.g."). */
const NEVER_END = new Set([
  'mr', 'mrs', 'ms', 'mx', 'dr', 'prof', 'rev', 'hon', 'gen', 'col', 'capt', 'cpt', 'lt', 'sgt', 'cmdr', 'adm',
  'gov', 'sen', 'rep', 'pres', 'supt', 'fr', 'e.g', 'i.e', 'cf', 'vs', 'viz', 'approx', 'fig', 'figs', 'eq', 'eqs',
  'vol', 'vols', 'ch', 'sec', 'pp', 'dept', 'esp', 'incl',
]);
/** May end a sentence; only does if a usual sentence opener follows ("Main St. The"). */
const NEEDS_STARTER = new Set([
  'jr', 'sr', 'inc', 'ltd', 'co', 'corp', 'bros', 'llc', 'plc', 'etc', 'al', 'st', 'mt', 'ft', 'ave', 'blvd', 'rd',
]);
/** Initials and dotted acronyms: "J", "U.S", "Ph.D", "a.m". */
const INITIALISM = /^(?:\p{L}{1,2}\.)*\p{L}{1,2}$/u;
/** Words that usually open a sentence, to tell "U.S. The" from "U.S. Army". */
const STARTERS = new Set([
  'The', 'An', 'He', 'She', 'It', 'Its', "It's", 'They', 'Their', 'There', 'These', 'Those', 'This', 'That', 'We',
  'Our', 'You', 'Your', 'My', 'His', 'Her', 'But', 'And', 'So', 'Then', 'However', 'In', 'On', 'At', 'As', 'If',
  'When', 'While', 'What', 'Why', 'How', 'Where', 'Who', 'After', 'Before', 'Also', 'Yet', 'For', 'Today', 'Now',
  'Here', 'Meanwhile', 'Finally', 'Next', 'Thus', 'Therefore', 'Although', 'Because', 'Since', 'Some', 'Many',
  'Most', 'All', 'Each', 'Every', 'Not', 'Let', 'Please', 'Yes', 'Still', 'Instead', 'Overall', 'Later', 'Once',
]);

const Verdict = { boundary: 0, none: 1, pending: 2 } as const;
type Verdict = (typeof Verdict)[keyof typeof Verdict];

/** Whether only spaces or tabs lie between `d` and the start of its line. */
function atLineStart(text: string, d: number, start: number): boolean {
  let p = d;
  while (p > start && (text.charCodeAt(p - 1) === 0x20 || text.charCodeAt(p - 1) === 0x09)) p--;
  return p === start || (flagsAt(text, p - 1) & NL) !== 0;
}

/**
 * Is the single "." at `i` a sentence end? `m` is where the next word starts
 * (after whitespace and opening quotes), `end` if there is none.
 */
function periodVerdict(text: string, i: number, start: number, m: number, end: number, atEnd: boolean): Verdict {
  let b = i;
  while (b > start) {
    const c = text.charCodeAt(b - 1);
    if (c !== DOT && !isLetterUnit(c)) break;
    b--;
  }
  while (b < i && text.charCodeAt(b) === DOT) b++;
  if (b === i) {
    // No word before the dot ("4.50.", "(see above)."), unless it is a list
    // marker: "1. Open the box" at the start of a line.
    let d = i;
    while (d > start && isDigitUnit(text.charCodeAt(d - 1))) d--;
    return d < i && atLineStart(text, d, start) ? Verdict.none : Verdict.boundary;
  }
  if (b > start && isDigitUnit(text.charCodeAt(b - 1))) return Verdict.boundary; // "3rd.", "5th."
  const word = text.slice(b, i);
  const lower = word.toLowerCase();
  if (NEVER_END.has(lower)) return Verdict.none;
  if (!NEEDS_STARTER.has(lower) && !INITIALISM.test(word)) return Verdict.boundary;
  if (m >= end) return Verdict.boundary; // end of input
  let e = m;
  while (e < end && isLetterUnit(text.charCodeAt(e))) e++;
  if (e === end && !atEnd) return Verdict.pending; // "U.S. Th" may become "The" or "Thomas"
  return STARTERS.has(text.slice(m, e)) ? Verdict.boundary : Verdict.none;
}

// ---------------------------------------------------------------------------
// The scanner: finds the next boundary candidate from a position.

const Scan = { none: 0, found: 1, pending: 2 } as const;
type Scan = (typeof Scan)[keyof typeof Scan];

/** Output of `scanNext`, reused to avoid an allocation per candidate. */
interface ScanResult {
  type: Scan;
  kind: BoundaryKind;
  /** found/pending: index of the punctuation; none: where scanning stopped. */
  at: number;
  /** found: where the next segment would start. */
  cut: number;
}

function newScanResult(): ScanResult {
  return { type: Scan.none, kind: BoundaryKind.sentence, at: 0, cut: 0 };
}

function found(r: ScanResult, kind: BoundaryKind, at: number, cut: number): -1 {
  r.type = Scan.found;
  r.kind = kind;
  r.at = at;
  r.cut = cut;
  return -1;
}

function pending(r: ScanResult, at: number): -1 {
  r.type = Scan.pending;
  r.at = at;
  return -1;
}

/** End of the whitespace run starting at `k`, and whether it holds a line break. */
function skipSpace(text: string, k: number, end: number): { k: number; nl: boolean } {
  let nl = false;
  while (k < end) {
    const f = flagsAt(text, k);
    if ((f & WS) === 0) break;
    if ((f & NL) !== 0) nl = true;
    k++;
  }
  return { k, nl };
}

/** Sentence punctuation at `i`. Sets `r` and returns -1, or returns where to resume scanning. */
function sentenceAt(text: string, i: number, start: number, end: number, atEnd: boolean, r: ScanResult): number {
  let j = i;
  let cjk = false;
  for (; j < end; j++) {
    const f = flagsAt(text, j);
    if ((f & TERM_CJK) !== 0) cjk = true;
    else if ((f & TERM) === 0) break;
  }
  const single = j - i === 1 && text.charCodeAt(i) === DOT;
  while (j < end && (flagsAt(text, j) & CLOSER) !== 0) j++;
  if (j === end && !atEnd) return pending(r, i); // "?" may become "?!", "." may become ".\""
  const { k, nl } = skipSpace(text, j, end);
  if (k === j && k < end && !cjk) return j; // "3.14", "example.com", "?c=d"
  if (k === end && !atEnd) return pending(r, i); // where the next sentence starts is not known yet
  if (nl || cjk) return found(r, BoundaryKind.sentence, i, k);
  let m = k;
  while (m < end && (flagsAt(text, m) & OPENER) !== 0) m++;
  if (m === end && !atEnd) return pending(r, i);
  if (m < end) {
    const cp = text.codePointAt(m) ?? 0;
    if (isLowerCodePoint(cp)) return j; // "etc. and", "Wait... what", '"Stop!" she said'
    if (single && isDigitUnit(cp)) return j; // "No. 5", "approx. 3 km"
  }
  if (single) {
    const v = periodVerdict(text, i, start, m, end, atEnd);
    if (v === Verdict.pending) return pending(r, i);
    if (v === Verdict.none) return j;
  }
  return found(r, BoundaryKind.sentence, i, k);
}

/** Clause punctuation at `i`, like `sentenceAt`. */
function clauseAt(text: string, i: number, start: number, end: number, atEnd: boolean, r: ScanResult): number {
  const f0 = flagsAt(text, i);
  let j = i + 1;
  if ((f0 & CLAUSE_FREE) !== 0) while (j < end && (flagsAt(text, j) & CLAUSE_FREE) !== 0) j++;
  if ((f0 & DASH_SPACED) !== 0 && (i === start || (flagsAt(text, i - 1) & WS) === 0)) return j; // "1990–2000"
  while (j < end && (flagsAt(text, j) & CLOSER) !== 0) j++;
  if (j === end && !atEnd) return pending(r, i);
  const { k, nl } = skipSpace(text, j, end);
  if (k === j && k < end && (f0 & CLAUSE_FREE) === 0) return j; // "1,000", "10:30", "https://"
  if (k === end && !atEnd) return pending(r, i);
  return found(r, nl ? BoundaryKind.sentence : BoundaryKind.clause, i, k);
}

/**
 * Find the next candidate at or after `from`, looking back no further than
 * `start`. Scanning stops before starting a character at or after `limit`.
 * With `atEnd`, the end of `text[..end]` is the end of input: nothing pends.
 */
function scanNext(text: string, from: number, start: number, end: number, limit: number, atEnd: boolean, r: ScanResult): void {
  let i = from;
  const stop = Math.min(end, limit);
  while (i < stop) {
    const f = flagsAt(text, i);
    if (f === 0) {
      i++;
    } else if ((f & (TERM | TERM_CJK)) !== 0) {
      i = sentenceAt(text, i, start, end, atEnd, r);
      if (i < 0) return;
    } else if ((f & (CLAUSE | CLAUSE_FREE | DASH_SPACED)) !== 0) {
      i = clauseAt(text, i, start, end, atEnd, r);
      if (i < 0) return;
    } else if ((f & WS) !== 0) {
      const { k, nl } = skipSpace(text, i, end);
      if (nl) {
        if (k === end && !atEnd) return void pending(r, i);
        return void found(r, BoundaryKind.sentence, i, k);
      }
      i = k;
    } else {
      i++;
    }
  }
  r.type = Scan.none;
  r.at = i;
}

// ---------------------------------------------------------------------------
// Counting.

/** Code points in `text[a..b)`. */
function cpCount(text: string, a: number, b: number): number {
  let n = b - a;
  for (let i = a + 1; i < b; i++) {
    if (isLowSurrogate(text.charCodeAt(i)) && isHighSurrogate(text.charCodeAt(i - 1))) n--;
  }
  return n;
}

/** Index after `count` code points from `from` (or `end`). */
function indexAfterChars(text: string, from: number, end: number, count: number): number {
  let i = from;
  for (let c = 0; c < count && i < end; c++) {
    i += isHighSurrogate(text.charCodeAt(i)) && i + 1 < end && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/** First non-whitespace index at or after `from`, or `end`. */
function firstContent(text: string, from: number, end: number): number {
  let i = from;
  while (i < end && (flagsAt(text, i) & WS) !== 0) i++;
  return i;
}

/** Code points in `text[a..b)` without trailing whitespace. */
function trimmedCount(text: string, a: number, b: number): number {
  while (b > a && (flagsAt(text, b - 1) & WS) !== 0) b--;
  return cpCount(text, a, b);
}

/**
 * Last word boundary in (content, limit]: after a whitespace character, or
 * between two ideographs. A cut at `end` between ideographs only if `allowEnd`.
 */
function lastWordCut(text: string, content: number, limit: number, end: number, allowEnd: boolean): number {
  for (let i = limit; i > content; i--) {
    const before = flagsAt(text, i - 1);
    if ((before & WS) !== 0) return i;
    if ((before & CJK_CHAR) !== 0 && (i < end ? (flagsAt(text, i) & CJK_CHAR) !== 0 : allowEnd)) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------
// Decisions. Each returns the cut index for the segment starting at `pos`, or
// -1 to wait for more text. A decision is only taken once no later text can
// change it, which is what makes the result independent of the token split.

const WAIT = -1;

/**
 * Where the scan of a waiting segment stopped, so that the next call, whose
 * buffer extends this call's `rest`, need not scan the same text again.
 * Opaque to callers; indices are relative to the start of `rest`.
 */
export interface ScanProgress {
  readonly first: boolean;
  /** No candidate starts in [0, resumeAt) other than those already counted. */
  readonly resumeAt: number;
  readonly best: number;
  readonly lastClause: number;
  readonly counted: number;
  readonly count: number;
}

/** In/out of a decision: progress to resume from (at `pos`), progress saved on WAIT. */
interface DecideIo {
  resume: ScanProgress | undefined;
  saved: ScanProgress | undefined;
}

/** Where to resume after a scan that stopped at `knownEnd`: before a trailing space run, which may still gain a line break. */
function resumePoint(text: string, from: number, knownEnd: number, pendingAt: boolean): number {
  if (pendingAt) return knownEnd;
  let b = knownEnd;
  while (b > from && (flagsAt(text, b - 1) & WS) !== 0) b--;
  return b;
}

function decideFirst(text: string, pos: number, end: number, atEnd: boolean, o: ResolvedSegmenterOptions, r: ScanResult, io: DecideIo): number {
  const content = firstContent(text, pos, end);
  if (content === end) return WAIT;
  const limitIdx = indexAfterChars(text, pos, end, o.firstMaxChars);
  const resume = io.resume?.first === true && io.resume.resumeAt <= end - pos ? io.resume : undefined;
  let i = pos + (resume?.resumeAt ?? 0);
  let from: number;
  let knownEnd: number;
  let overflow = false;
  for (;;) {
    from = i;
    scanNext(text, i, pos, end, limitIdx + 1, atEnd, r);
    if (r.type !== Scan.found) {
      knownEnd = r.at;
      break;
    }
    i = r.cut;
    if (r.cut <= content) continue; // a line break before any text
    if (r.cut > limitIdx) {
      overflow = true;
      knownEnd = r.at;
      break;
    }
    if (trimmedCount(text, content, r.cut) >= o.firstMinChars) return r.cut;
  }
  if (atEnd && end <= limitIdx) return end; // all of a short input
  // Until more than firstMaxChars are known, a qualifying boundary may still come.
  if (!overflow && knownEnd <= limitIdx) {
    const resumeAt = resumePoint(text, from, knownEnd, r.type === Scan.pending) - pos;
    io.saved = { first: true, resumeAt, best: -1, lastClause: -1, counted: 0, count: 0 };
    return WAIT;
  }
  const word = lastWordCut(text, content, limitIdx, end, false);
  if (word > 0) return word;
  return decideNext(text, pos, end, atEnd, o, r, io);
}

function decideNext(text: string, pos: number, end: number, atEnd: boolean, o: ResolvedSegmenterOptions, r: ScanResult, io: DecideIo): number {
  const content = firstContent(text, pos, end);
  if (content === end) return WAIT;
  // Index after maxChars code points, counted only when needed: a UTF-16
  // length within maxChars is within it in code points too.
  let limitIdx = end - pos <= o.maxChars ? end : -1;
  const limit = (): number => (limitIdx >= 0 ? limitIdx : (limitIdx = indexAfterChars(text, pos, end, o.maxChars)));
  const beyondLimit = (index: number): boolean => index - pos > o.maxChars && index > limit();
  const resume = io.resume?.first === false && io.resume.resumeAt <= end - pos ? io.resume : undefined;
  const rebase = (index: number): number => (index < 0 ? -1 : index + pos);
  let best = rebase(resume?.best ?? -1);
  let lastClause = rebase(resume?.lastClause ?? -1);
  let counted = pos + (resume?.counted ?? 0);
  let count = resume?.count ?? 0;
  let i = pos + (resume?.resumeAt ?? 0);
  let from: number;
  let knownEnd: number;
  let overflow = false;
  for (;;) {
    from = i;
    // Two UTF-16 units per code point at most: this bound lies past the limit.
    scanNext(text, i, pos, end, pos + 2 * o.maxChars + 1, atEnd, r);
    if (r.type !== Scan.found) {
      knownEnd = r.at;
      break;
    }
    i = r.cut;
    if (r.cut <= content) continue;
    if (beyondLimit(r.cut)) {
      if (best >= 0) return best;
      overflow = true;
      knownEnd = r.at;
      break;
    }
    if (r.kind === BoundaryKind.clause) {
      lastClause = r.cut;
      continue;
    }
    count += cpCount(text, counted, r.cut);
    counted = r.cut;
    if (count <= o.targetChars) {
      best = r.cut; // merge: a later sentence may still fit
      continue;
    }
    return best >= 0 ? best : r.cut;
  }
  if (atEnd && !beyondLimit(end)) {
    // The end of input is the last sentence end.
    const total = count + cpCount(text, counted, end);
    return total <= o.targetChars || best < 0 ? end : best;
  }
  const wait = (): number => {
    const resumeAt = resumePoint(text, from, knownEnd, r.type === Scan.pending) - pos;
    io.saved = { first: false, resumeAt, best: best < 0 ? -1 : best - pos, lastClause: lastClause < 0 ? -1 : lastClause - pos, counted: counted - pos, count };
    return WAIT;
  };
  if (best >= 0) {
    // Any later sentence end would make the segment longer than targetChars.
    // (UTF-16 units bound code points from above: count them only when needed.)
    if (count + (knownEnd - counted) <= o.targetChars) return wait();
    return count + cpCount(text, counted, knownEnd) > o.targetChars ? best : wait();
  }
  if (!overflow && !beyondLimit(knownEnd)) return wait();
  // No sentence end within maxChars: clause, else whitespace, else code point.
  if (lastClause > content && lastClause <= limit()) return lastClause;
  const word = lastWordCut(text, content, limit(), end, false);
  return word > 0 ? word : limit();
}

/** Timeout: the latest sentence end, else clause, else word boundary available now. */
function decideTimeout(text: string, pos: number, end: number, o: ResolvedSegmenterOptions, r: ScanResult): number {
  const content = firstContent(text, pos, end);
  if (content === end) return WAIT;
  const limitIdx = indexAfterChars(text, pos, end, o.maxChars);
  let lastSentence = -1;
  let lastClause = -1;
  let i = pos;
  for (;;) {
    scanNext(text, i, pos, end, limitIdx + 1, true, r);
    if (r.type !== Scan.found || r.cut > limitIdx) break;
    i = r.cut;
    if (r.cut <= content) continue;
    if (r.kind === BoundaryKind.sentence) lastSentence = r.cut;
    else lastClause = r.cut;
  }
  if (lastSentence > 0) return lastSentence;
  if (lastClause > 0) return lastClause;
  return lastWordCut(text, content, limitIdx, end, true);
}

// ---------------------------------------------------------------------------
// Public API.

/**
 * All boundaries of `text` (treated as the start of a segment), in order.
 * With `atEnd` (default true) `text` is complete; with false, a boundary
 * whose meaning depends on text not yet seen is left out.
 */
export function findBoundaries(text: string, atEnd = true): Boundary[] {
  const r = newScanResult();
  const out: Boundary[] = [];
  let i = 0;
  for (;;) {
    scanNext(text, i, 0, text.length, text.length, atEnd, r);
    if (r.type !== Scan.found) return out;
    out.push({ index: r.cut, kind: r.kind });
    i = r.cut;
  }
}

/**
 * Cut the segments that are ready off the front of `buffer`.
 *
 * - First segment (`state.emitted === 0`): ends at the first clause or
 *   sentence boundary with at least `firstMinChars` before it; failing that
 *   within `firstMaxChars`, at the last whitespace before `firstMaxChars`.
 * - Later segments: whole sentences merged up to `targetChars`; a single
 *   sentence longer than that is one segment; none over `maxChars` (then a
 *   clause boundary, else whitespace, else a code-point boundary).
 * - `mode` `stream` cuts only where more text cannot change the decision;
 *   `timeout` additionally cuts once at the latest sentence, clause or word
 *   boundary available; `final` treats the buffer as the end of input and
 *   leaves only whitespace in `rest`.
 *
 * Pure: the caller keeps `rest` and the returned `state` for the next call.
 */
export function segmentText(
  buffer: string,
  state: SegmenterState,
  mode: CutMode = CutMode.stream,
  options: SegmenterOptions = {},
): SegmentTextResult {
  const o = resolveSegmenterOptions(options);
  const atEnd = mode === CutMode.final;
  let end = buffer.length;
  // A token may end between the halves of a surrogate pair: wait for the other half.
  if (!atEnd && end > 0 && isHighSurrogate(buffer.charCodeAt(end - 1))) end--;
  let timeoutLeft = mode === CutMode.timeout;
  const r = newScanResult();
  const io: DecideIo = { resume: state.scan, saved: undefined };
  const segments: string[] = [];
  let emitted = state.emitted;
  let pos = 0;
  let waitedAt = -1;
  while (pos < end) {
    io.saved = undefined;
    let cut = emitted === 0 ? decideFirst(buffer, pos, end, atEnd, o, r, io) : decideNext(buffer, pos, end, atEnd, o, r, io);
    if (cut < 0 && timeoutLeft) {
      timeoutLeft = false;
      cut = decideTimeout(buffer, pos, end, o, r);
    }
    if (cut < 0) {
      waitedAt = pos;
      break;
    }
    segments.push(buffer.slice(pos, cut));
    pos = cut;
    emitted++;
    io.resume = undefined; // progress is about the text at the start of the buffer only
  }
  const rest = buffer.slice(pos);
  return waitedAt >= 0 && io.saved !== undefined ? { segments, rest, state: { emitted, scan: io.saved } } : { segments, rest, state: { emitted } };
}

/**
 * Split one segment into `text` frames of at most `maxFrameChars` code points,
 * preferably after whitespace in the second half of a frame, else at a
 * code-point boundary (never inside a surrogate pair). Joining the frames
 * gives the segment back; an empty segment gives no frames.
 * @param maxFrameChars default `LIMITS.textFrameMaxChars` (2,000)
 */
export function splitForFrames(segment: string, maxFrameChars: number = LIMITS.textFrameMaxChars): string[] {
  if (!Number.isInteger(maxFrameChars) || maxFrameChars < 1) throw new RangeError('maxFrameChars must be a positive integer');
  const frames: string[] = [];
  const end = segment.length;
  let pos = 0;
  while (pos < end) {
    const limitIdx = indexAfterChars(segment, pos, end, maxFrameChars);
    if (limitIdx === end) {
      frames.push(segment.slice(pos));
      break;
    }
    const halfIdx = indexAfterChars(segment, pos, end, Math.ceil(maxFrameChars / 2));
    let cut = limitIdx;
    for (let i = limitIdx; i > halfIdx; i--) {
      if ((flagsAt(segment, i - 1) & WS) !== 0) {
        cut = i;
        break;
      }
    }
    frames.push(segment.slice(pos, cut));
    pos = cut;
  }
  return frames;
}
