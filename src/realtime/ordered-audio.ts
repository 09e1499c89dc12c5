/**
 * The `audio` frames of one connection put back in `sequence` order, with
 * what the listener is told about them: written once for both machines.
 * `AudioOrder` (sequence-window.ts) decides the order; this says, through the
 * machine's port, what it dropped or skipped: a repeat, a frame that came
 * after later audio was released (late), and the first gap of the
 * connection (numbering may legally skip, so a gap is said once; the byte
 * count of each segment says whether audio is missing). The machine releases
 * the frames it gets back, by its mode's rules.
 */
import { WarningCode } from '../protocol/codes.js';
import type { AudioEvent } from '../protocol/events.js';
import { AudioOrder, describeGaps, type SequenceVerdict } from './sequence-window.js';

/** Where the warnings go: the machine's port. */
export interface WarningPort {
  emit(event: { type: 'warning'; code: string; message: string }): void;
}

export class OrderedAudio extends AudioOrder<AudioEvent> {
  readonly #port: WarningPort;
  /** A gap was said on this connection. */
  #gapSaid = false;

  /**
   * @param windowFrames frames held at most per segment while one is missing; default `DEFAULT_REORDER_WINDOW_FRAMES`
   * @param firstExpected the sequence the connection's first frame is expected to have; default 1
   */
  constructor(port: WarningPort, windowFrames?: number, firstExpected?: number) {
    super(windowFrames, firstExpected);
    this.#port = port;
  }

  /** One frame in: the frames to release now, in order. */
  accept(event: AudioEvent): SequenceVerdict<AudioEvent> {
    const verdict = this.push(event.segment_id, event.sequence, event);
    if (verdict.duplicate) this.#warn(WarningCode.audioRepeat, `dropped a repeat of audio sequence ${event.sequence} of segment ${event.segment_id}`);
    if (verdict.late) this.#warn(WarningCode.audioLate, `audio sequence ${event.sequence} of segment ${event.segment_id} came after later audio was emitted; it was left out`);
    this.#sayGaps(verdict);
    return verdict;
  }

  /** What a completed segment still holds (or, with no id, what every segment holds), released in order past the sequences still missing. */
  release(segmentId?: string): SequenceVerdict<AudioEvent> {
    const verdict = segmentId === undefined ? this.drainAll() : this.drainSegment(segmentId);
    this.#sayGaps(verdict);
    return verdict;
  }

  #sayGaps(verdict: SequenceVerdict<AudioEvent>): void {
    if (verdict.gaps.length === 0 || this.#gapSaid) return;
    this.#gapSaid = true;
    this.#warn(WarningCode.audioSequenceGap, `audio sequence ${describeGaps(verdict.gaps)} skipped (never arrived in order)`);
  }

  #warn(code: string, message: string): void {
    this.#port.emit({ type: 'warning', code, message });
  }
}
