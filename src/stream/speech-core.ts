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
import { DEFAULT_MS_PER_WEIGHT, estimateArrivingWordTimings, estimateWordTimings, FrameEnergies, msPerWeight, type WordTiming } from './word-timing.js';

/**
 * The energy of a compressed segment's audio (mp3, opus), decoded as it
 * arrives: what a platform that can decode plugs into the core
 * (`SpeechCoreOptions.decodedEnergies`; Node: `decoded-energies.ts`).
 */
export interface EnergySource {
  /** Take encoded bytes of the segment, in order. */
  push(data: Uint8Array): void;
  /** The energies of what was decoded so far (undefined before the first decoded audio). */
  readonly energies: FrameEnergies | undefined;
  /** Milliseconds of decoded audio per encoded byte so far (undefined before the first decoded audio). */
  readonly msPerByte: number | undefined;
  /** No more bytes: resolves when everything pushed is decoded (never rejects; a decoding failure leaves the energies as they were). */
  end(): Promise<void>;
  /** Release the decoder. */
  close(): void;
}

/** Options of the speech core. */
export interface SpeechCoreOptions {
  /**
   * An energy source for a compressed format (`format`: mp3, opus), or
   * undefined where the platform does not decode it: those segments are then
   * cut in proportion to their audio. Default none (the browser: decoding
   * there would grow its bundle).
   */
  decodedEnergies?: ((format: string, layout: { sampleRate: number; channels: number }) => EnergySource | undefined) | undefined;
}

/** One segment of the core: what every facade knows of it. */
export interface CoreSegment {
  readonly segmentId: string;
  /** Its exact text, spaces kept. */
  readonly text: string;
  /** Its audio, as the one ledger counts it. */
  readonly audio: SegmentLedger;
  completed: boolean;
  /** Where each word lies in its audio, estimated once it completed (pcm, wav; mp3, opus once decoded). */
  words?: WordTiming[] | undefined;
  /** The energy of its audio as the listener gets it, taken until it completes (not the PCM itself). */
  energies?: FrameEnergies | undefined;
  /** Of a compressed segment: its audio decoded as it arrives, until its words are estimated. */
  decoded?: EnergySource | undefined;
  /** Of a compressed segment: ms of audio per byte, once decoded. */
  msPerByte?: number | undefined;
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
  readonly #decodedEnergies: SpeechCoreOptions['decodedEnergies'];
  /** Speech rate of the segments completed so far (ms per unit of word weight): places the words of one still arriving. */
  #msPerWeight = DEFAULT_MS_PER_WEIGHT;
  #rated = 0;

  constructor(ledger: SpliceLedger, prefix: string, options: SpeechCoreOptions = {}) {
    this.#ledger = ledger;
    this.#prefix = prefix;
    this.#decodedEnergies = options.decodedEnergies;
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
   * Take the energy of a chunk (`data`) of a segment's audio, as the
   * listener got it (counted by the ledger already), until the segment
   * completes (a restart starts it again): pcm and wav here, per chunk;
   * mp3 and opus through the platform's decoder (`decodedEnergies`). A
   * stream header is not audio: the ledger says its length, what it emitted
   * of the segment beyond its audio.
   */
  meter(segment: S, data: Uint8Array, format: string, layout: { sampleRate: number; channels: number }, restart: boolean): void {
    const pcm = format === 'pcm' || format === 'wav';
    if (!pcm && !this.#decodedEnergies) return;
    if (restart || !(segment.energies ?? segment.decoded)) {
      segment.decoded?.close();
      segment.decoded = undefined;
      segment.energies = undefined;
      if (pcm) segment.energies = new FrameEnergies(layout.sampleRate, layout.channels);
      else if (!(segment.decoded = this.#decodedEnergies!(format, layout))) return;
      const header = restart ? 0 : Math.min(data.length, segment.audio.emittedBytes - segment.audio.audioBytes);
      segment.headerBytes = header;
      data = data.subarray(header);
    }
    if (segment.energies) segment.energies.push(data);
    else segment.decoded?.push(data);
  }

  /**
   * The segment completed: its word timings from its text and the energy of
   * its audio (dropped after); of a compressed segment, once its decoder has
   * decoded the rest (the promise; undefined when there is nothing to wait for).
   */
  complete(segment: S): Promise<void> | undefined {
    segment.completed = true;
    const energies = segment.energies;
    segment.energies = undefined;
    if (energies) this.#estimate(segment, energies);
    const decoded = segment.decoded;
    if (!decoded) return undefined;
    return decoded.end().then(() => {
      if (segment.decoded !== decoded) return;
      segment.decoded = undefined;
      segment.msPerByte = decoded.msPerByte;
      if (decoded.energies) this.#estimate(segment, decoded.energies);
      decoded.close();
    });
  }

  #estimate(segment: S, energies: FrameEnergies): void {
    const words = (segment.words = estimateWordTimings(segment.text, energies));
    const rate = msPerWeight(segment.text, words);
    if (rate === undefined) return;
    // The mean over the completed segments (the first replaces the default).
    this.#rated++;
    this.#msPerWeight += (rate - this.#msPerWeight) / this.#rated;
  }

  /**
   * Where each word of `segment` lies in its audio: once it completed, the
   * estimate of all of it; while it arrives, the words whose audio has
   * arrived (provisional at the clause still being said), estimated now
   * from the energies so far at the speech rate of the stream's earlier
   * segments (`estimateArrivingWordTimings`: one pass, at the asking).
   */
  wordsOf(segment: S): WordTiming[] | undefined {
    if (segment.words) return segment.words;
    const energies = segment.energies ?? segment.decoded?.energies;
    return energies && estimateArrivingWordTimings(segment.text, energies, this.#msPerWeight);
  }

  /** Release what decodes the segments still arriving (the stream ended; a completed one releases its own once decoded). */
  close(): void {
    for (const s of this.segments) {
      if (s.completed) continue;
      s.decoded?.close();
      s.decoded = undefined;
    }
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
      spoken.push({ segmentId: s.segmentId, text: s.text, bytes, headerBytes: s.headerBytes, complete: s.completed && bytes >= s.audio.emittedBytes, words: bytes > 0 ? this.wordsOf(s) : undefined, msPerByte: s.msPerByte ?? s.decoded?.msPerByte });
    }
    return heardAt(spoken, played, layout);
  }
}
