/**
 * The speech core under every facade (SpeechStream in Node, BrowserSpeech in
 * the page; the telephony bridge reads SpeechStream's): the segments cut
 * from the text, in order, each with its audio as the one ledger counts it
 * (`SegmentLedger`, `splice.ts`), the listener's output sequence, the energy
 * of each segment's audio as the listener gets it and the word timings
 * estimated from it, and what was heard at a played position (`heardAt`,
 * `heard.ts`). Platform-neutral: no Node module, no clock.
 */
import type { SegmentLedger, SpliceLedger } from '../splice.js';
import { heardAt, type HeardLayout, type HeardText, type PlayedPosition, type SpokenAudio } from './heard.js';
import { estimateWordTimings, FrameEnergies, type WordTiming } from './word-timing.js';

/** One segment of the core: what every facade knows of it. */
export interface CoreSegment {
  readonly segmentId: string;
  /** Its exact text, spaces kept. */
  readonly text: string;
  /** Its audio, as the one ledger counts it. */
  readonly audio: SegmentLedger;
  completed: boolean;
  /** Where each word lies in its audio, estimated once it completed (pcm, wav). */
  words?: WordTiming[] | undefined;
  /** The energy of its audio as the listener gets it, taken until it completes (not the PCM itself). */
  energies?: FrameEnergies | undefined;
  /** Bytes of a stream header at the start of its audio (not speech). */
  headerBytes: number;
}

/** Segments, the listener's sequence, word timings and heard text, shared by SpeechStream and BrowserSpeech. */
export class SpeechCore<S extends CoreSegment = CoreSegment> {
  readonly segments: S[] = [];
  readonly #ledger: SpliceLedger;
  readonly #prefix: string;
  /** The segment found last (its audio is arriving): lookups try it first. */
  #last: S | undefined;
  #next = 0;
  #sequence = 0;

  constructor(ledger: SpliceLedger, prefix: string) {
    this.#ledger = ledger;
    this.#prefix = prefix;
  }

  /** A new segment of `text` (its id `prefix-N`); `extend` adds the facade's own fields. */
  add(text: string, extend: (segment: CoreSegment) => S): S {
    const segmentId = `${this.#prefix}-${this.#next++}`;
    const segment = extend({ segmentId, text, audio: this.#ledger.segment(segmentId), completed: false, headerBytes: 0 });
    this.segments.push(segment);
    return segment;
  }

  /** A segment by id: the one found last, else a scan from the newest (what is looked up is in flight, near the end; no Map per stream). */
  find(segmentId: string): S | undefined {
    const last = this.#last;
    if (last !== undefined && last.segmentId === segmentId) return last;
    const segments = this.segments;
    for (let i = segments.length - 1; i >= 0; i--) if (segments[i]!.segmentId === segmentId) return (this.#last = segments[i]);
    return undefined;
  }

  /** The sequence of the listener's next chunk (from 1, over the whole stream and every transport). */
  nextSequence(): number {
    return ++this.#sequence;
  }

  /**
   * Take the energy of a chunk (`data`) of a pcm or wav segment's audio, as the
   * listener got it (counted by the ledger already), until the segment
   * completes (a restart starts it again). A stream header is not audio:
   * the ledger says its length, what it emitted of the segment beyond its
   * audio.
   */
  meter(segment: S, data: Uint8Array, format: string, layout: { sampleRate: number; channels: number }, restart: boolean): void {
    if (format !== 'pcm' && format !== 'wav') return;
    if (restart || !segment.energies) {
      segment.energies = new FrameEnergies(layout.sampleRate, layout.channels);
      const header = restart ? 0 : Math.min(data.length, segment.audio.emittedBytes - segment.audio.audioBytes);
      segment.headerBytes = header;
      data = data.subarray(header);
    }
    segment.energies.push(data);
  }

  /** The segment completed: its word timings from its text and the energy of its audio (dropped after). */
  complete(segment: S): void {
    segment.completed = true;
    const energies = segment.energies;
    segment.energies = undefined;
    if (energies) segment.words = estimateWordTimings(segment.text, energies);
  }

  /** The reader took `bytes` of a segment's audio. */
  delivered(segmentId: string, bytes: number): void {
    this.#ledger.delivered(segmentId, bytes);
  }

  /**
   * What the listener heard at `played` (bytes of the audio the reader took,
   * a stream header included, or ms of it); default all the reader took.
   */
  heard(played: PlayedPosition | undefined, layout: HeardLayout | undefined): HeardText {
    const spoken: SpokenAudio[] = [];
    for (const s of this.segments) {
      const bytes = s.audio.deliveredBytes;
      spoken.push({ segmentId: s.segmentId, text: s.text, bytes, headerBytes: s.headerBytes, complete: s.completed && bytes >= s.audio.emittedBytes, words: s.words });
    }
    return heardAt(spoken, played, layout);
  }
}
