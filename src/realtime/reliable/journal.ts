/**
 * The journal of a reliable request: every segment the user queued, in
 * order, with its full text and its state. It is what makes resume
 * possible: after a failure, the segments not completed are sent again with
 * the same id, order and text. It counts no audio bytes: what the listener
 * has of a segment, on each attempt, is its ledger's (`splice.ts`).
 */
import { LIMITS, splitByChars } from '../../protocol/limits.js';
import { SegmentState, WaterfallStage } from './types.js';

/** One bit per waterfall stage: the marks made of a segment are a number, not a Set (memory per stream). */
const STAGE_BIT: Record<WaterfallStage, number> = {
  [WaterfallStage.sent]: 1,
  [WaterfallStage.inputAck]: 2,
  [WaterfallStage.accepted]: 4,
  [WaterfallStage.firstAudio]: 8,
  [WaterfallStage.completed]: 16,
};

export class JournalEntry {
  readonly segmentId: string;
  readonly text: string;
  /** Position in the request, from 0. */
  readonly order: number;
  /** The text cut into `text` frames of at most 2,000 characters, when it takes more than one (`frameAt`). */
  #frames: readonly string[] | undefined;
  state: SegmentState = SegmentState.queued;
  /** `flush` was sent on some connection (the service may know the segment). */
  everFlushed = false;
  /** Billing units, once completed. */
  units = 0;
  /** An audio frame of it came on some connection, released or held (the server charged it at its first audio). */
  audioArrived = false;
  /** One-shot waterfall marks already made (`STAGE_BIT`). */
  #marks = 0;
  /** `segment-accepted` already reported (once per segment, not per connection). */
  acceptReported = false;
  /** The attempt whose audio of the segment went to the ledger last (the one its counts are of); 0: none yet. */
  attempt = 0;

  // Per connection, reset by `Journal.resetConnection()`.
  /** `text` frames sent on the current connection. */
  framesSent = 0;
  /** What the server said on this connection the segment carries (its `usage`), when it said. */
  stated: number | undefined = undefined;
  /** Audio of the segment was released past skipped sequences on this connection: a hole before it cannot be asked for again. */
  skippedPast = false;

  constructor(segmentId: string, text: string, order: number) {
    this.segmentId = segmentId;
    this.text = text;
    this.order = order;
    this.#frames = text.length > LIMITS.textFrameMaxChars ? splitByChars(text, LIMITS.textFrameMaxChars) : undefined;
  }

  /** `text` frames the segment takes. */
  get frameCount(): number {
    return this.#frames?.length ?? 1;
  }

  /** Its `i`-th `text` frame. */
  frameAt(i: number): string {
    return this.#frames?.[i] ?? this.text;
  }

  /** Mark a waterfall stage; false when it was marked before (each stage once per segment). */
  mark(stage: WaterfallStage): boolean {
    const bit = STAGE_BIT[stage];
    if ((this.#marks & bit) !== 0) return false;
    this.#marks |= bit;
    return true;
  }

  get completed(): boolean {
    return this.state === SegmentState.completed;
  }

  /** Not yet flushed on the current connection. */
  get unflushed(): boolean {
    return this.state === SegmentState.queued || this.state === SegmentState.sending;
  }
}

/**
 * The segments in order. No index by id (a Map per stream): a
 * lookup first tries the entry found last (the segment whose audio is
 * arriving), then scans from the newest, so it costs the segments still
 * pending, not the request's length. Segments complete in order, so the
 * completed ones are a prefix that the scans for pending work skip.
 */
export class Journal {
  readonly #entries: JournalEntry[] = [];
  /** Every entry before this one completed. */
  #head = 0;
  #last: JournalEntry | undefined;

  /** Add a segment at the end. Throws on a duplicate id or empty text (the caller validates first). */
  add(segmentId: string, text: string): JournalEntry {
    if (this.has(segmentId)) throw new RangeError(`segment ${segmentId} is already queued`);
    if (text.length === 0) throw new RangeError(`segment ${segmentId} has no text`);
    const entry = new JournalEntry(segmentId, text, this.#entries.length);
    this.#entries.push(entry);
    return entry;
  }

  get(segmentId: string): JournalEntry | undefined {
    const last = this.#last;
    if (last !== undefined && last.segmentId === segmentId) return last;
    const entries = this.#entries;
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!;
      if (entry.segmentId === segmentId) return (this.#last = entry);
    }
    return undefined;
  }

  has(segmentId: string): boolean {
    return this.get(segmentId) !== undefined;
  }

  all(): readonly JournalEntry[] {
    return this.#entries;
  }

  /** Segments not completed, in order. */
  pending(): JournalEntry[] {
    const out: JournalEntry[] = [];
    const entries = this.#entries;
    for (let i = this.#skipCompleted(); i < entries.length; i++) if (!entries[i]!.completed) out.push(entries[i]!);
    return out;
  }

  /** Whether every segment completed. */
  get allCompleted(): boolean {
    const entries = this.#entries;
    for (let i = this.#skipCompleted(); i < entries.length; i++) if (!entries[i]!.completed) return false;
    return true;
  }

  /** The next segment to send text for or to flush on the current connection. */
  firstUnflushed(): JournalEntry | undefined {
    const entries = this.#entries;
    for (let i = this.#skipCompleted(); i < entries.length; i++) if (entries[i]!.unflushed) return entries[i];
    return undefined;
  }

  /** A new connection: nothing was sent on it yet, so every segment not completed starts over. */
  resetConnection(): void {
    const entries = this.#entries;
    for (let i = this.#skipCompleted(); i < entries.length; i++) {
      const e = entries[i]!;
      e.framesSent = 0;
      e.stated = undefined;
      e.skippedPast = false;
      if (!e.completed) e.state = SegmentState.queued;
    }
  }

  /** Move the head past the entries completed in front of it; returns it. */
  #skipCompleted(): number {
    const entries = this.#entries;
    while (this.#head < entries.length && entries[this.#head]!.completed) this.#head++;
    return this.#head;
  }
}
