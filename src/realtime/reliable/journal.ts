/**
 * The journal of a reliable request: every segment the user queued, in
 * order, with its full text, its state and how much of its audio reached the
 * listener. It is what makes resume possible: after a failure, the segments
 * not completed are sent again with the same id, order and text. It counts
 * no audio bytes: what the listener has of a segment is its ledger's
 * (`splice.ts`).
 */
import { LIMITS, splitByChars } from '../../protocol/limits.js';
import { SegmentState } from './types.js';

export class JournalEntry {
  readonly segmentId: string;
  readonly text: string;
  /** Position in the request, from 0. */
  readonly order: number;
  /** The text cut into `text` frames of at most 2,000 characters. */
  readonly frames: readonly string[];
  state: SegmentState = SegmentState.queued;
  /** `flush` was sent on some connection (the service may know the segment). */
  everFlushed = false;
  /** Billing units, once completed. */
  units = 0;
  /** An audio frame of it came on some connection, released or held (the server charged it at its first audio). */
  audioArrived = false;
  /** One-shot waterfall marks already made. */
  readonly marked = new Set<string>();
  /** `segment-accepted` already reported (once per segment, not per connection). */
  acceptReported = false;

  // Per connection, reset by `Journal.resetConnection()`.
  /** `text` frames sent on the current connection. */
  framesSent = 0;

  constructor(segmentId: string, text: string, order: number) {
    this.segmentId = segmentId;
    this.text = text;
    this.order = order;
    this.frames = splitByChars(text, LIMITS.textFrameMaxChars);
  }

  get completed(): boolean {
    return this.state === SegmentState.completed;
  }

  /** Not yet flushed on the current connection. */
  get unflushed(): boolean {
    return this.state === SegmentState.queued || this.state === SegmentState.sending;
  }
}

export class Journal {
  readonly #entries: JournalEntry[] = [];
  readonly #byId = new Map<string, JournalEntry>();

  /** Add a segment at the end. Throws on a duplicate id or empty text (the caller validates first). */
  add(segmentId: string, text: string): JournalEntry {
    if (this.#byId.has(segmentId)) throw new RangeError(`segment ${segmentId} is already queued`);
    if (text.length === 0) throw new RangeError(`segment ${segmentId} has no text`);
    const entry = new JournalEntry(segmentId, text, this.#entries.length);
    this.#entries.push(entry);
    this.#byId.set(segmentId, entry);
    return entry;
  }

  get(segmentId: string): JournalEntry | undefined {
    return this.#byId.get(segmentId);
  }

  has(segmentId: string): boolean {
    return this.#byId.has(segmentId);
  }

  all(): readonly JournalEntry[] {
    return this.#entries;
  }

  /** Segments not completed, in order. */
  pending(): JournalEntry[] {
    return this.#entries.filter((e) => !e.completed);
  }

  /** The next segment to send text for or to flush on the current connection. */
  firstUnflushed(): JournalEntry | undefined {
    return this.#entries.find((e) => e.unflushed);
  }

  /** A new connection: nothing was sent on it yet, so every segment not completed starts over. */
  resetConnection(): void {
    for (const e of this.#entries) {
      e.framesSent = 0;
      if (!e.completed) e.state = SegmentState.queued;
    }
  }
}
