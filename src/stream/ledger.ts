/**
 * The audio ledger of a SpeechStream: one `SegmentLedger` per segment, and
 * the stream-wide decisions, made once here whatever transport carried the
 * audio (realtime reliable or simple, sync, async, compat) and however many
 * attempts a segment took (a failover is a new attempt at a segment):
 *
 * - the one stream header a listener gets (the first of a wav stream; a
 *   header a later attempt brings is not audio);
 * - continue or restart (`splice.ts`): what of a new attempt the listener
 *   gets, and the `discontinuity` a restart announces;
 * - the layout, from the first audio (not from an announcement made before
 *   it); PCM whose layout changes mid-stream cannot be one stream;
 * - bytes: emitted, received per attempt, delivered to the reader (what
 *   barge-in reports), and reconciled against what the transport says the
 *   segment carries (`audio_incomplete`, never a silent shortfall).
 *
 * Pure bookkeeping: no clock, no I/O, no events.
 */
import { AudioIncompleteError, VoxpipeError } from '../errors.js';
import { frameBytes, type AudioChunk, type PcmInfo } from '../protocol/audio.js';
import { probeEncodedLayout } from '../protocol/audio-probe.js';
import { HttpAudioErrorCode } from '../protocol/codes.js';
import { wavHeaderLength } from '../protocol/wav.js';
import { defaultPartialPolicy, splice } from '../splice.js';

/** What one segment's audio came to. */
export class SegmentLedger {
  readonly segmentId: string;
  /** Every byte the listener got for the segment: the stream header and `restart` repeats included. */
  emittedBytes = 0;
  /** Audio bytes the listener has of the segment since its last restart (no header). */
  audioBytes = 0;
  /** Bytes of the current attempt received (no header). */
  attemptBytes = 0;
  /** Bytes read by the consumer (the reader or `chunks()`). */
  deliveredBytes = 0;

  constructor(segmentId: string) {
    this.segmentId = segmentId;
  }

  /** Its audio had begun, on this attempt or an earlier one (a failover charges it again). */
  get began(): boolean {
    return this.emittedBytes > 0 || this.attemptBytes > 0;
  }

  /** A new attempt at the segment (another transport): its bytes count from 0 again. */
  newAttempt(): void {
    this.attemptBytes = 0;
  }

  /** Less than `expected` (what the transport says the segment carries): the error that says so. */
  shortfall(expected: number | undefined, requestId: string | undefined): AudioIncompleteError | undefined {
    if (expected === undefined || this.audioBytes >= expected) return undefined;
    return new AudioIncompleteError(this.segmentId, expected, this.audioBytes, { requestId, retryable: true });
  }
}

/** What the ledger made of one chunk. */
export interface LedgerEntry {
  /** What goes to the listener (may be empty: all of it was heard already). */
  chunk: AudioChunk;
  /** The chunk restarted its segment: the bytes of it the listener had. */
  restart?: { droppedBytes: number };
  /** This chunk decided the stream's layout (the first audio). */
  layout?: PcmInfo;
}

export class AudioLedger {
  readonly #segments = new Map<string, SegmentLedger>();
  /** Bytes emitted over the whole stream. */
  #bytes = 0;
  #layout: PcmInfo | undefined;

  /** Bytes emitted over the whole stream (header included). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The layout the audio stated, once the first audio came. */
  get layout(): PcmInfo | undefined {
    return this.#layout;
  }

  /** The segment's ledger (made at its first mention). */
  segment(segmentId: string): SegmentLedger {
    let s = this.#segments.get(segmentId);
    if (!s) {
      s = new SegmentLedger(segmentId);
      this.#segments.set(segmentId, s);
    }
    return s;
  }

  /**
   * Take one chunk of a segment's current attempt. Throws a VoxpipeError
   * (`pcm_layout_changed`) for PCM whose layout is not the stream's.
   */
  accept(chunk: AudioChunk): LedgerEntry {
    const s = this.segment(chunk.segmentId);
    const layout = this.#decideLayout(chunk);
    let data = chunk.data;
    // The stream's header comes with the stream's first audio; one a later
    // attempt or transport brings is not audio of the segment.
    let header = 0;
    if (chunk.format === 'wav' && s.attemptBytes === 0) header = wavHeaderLength(data) ?? 0;
    const keepHeader = header > 0 && this.#bytes === 0;
    const payload = header > 0 ? data.subarray(header) : data;
    const cut = splice({ emitted: s.audioBytes, received: s.attemptBytes }, payload, defaultPartialPolicy(chunk.format), frameBytes(chunk));
    s.attemptBytes += payload.length;
    if (cut.restart) s.audioBytes = 0;
    s.audioBytes += cut.data.length;
    data = keepHeader ? (cut.data.length === payload.length ? data : Buffer.concat([data.subarray(0, header), cut.data])) : cut.data;
    s.emittedBytes += data.length;
    this.#bytes += data.length;
    return {
      chunk: data === chunk.data ? chunk : { ...chunk, data },
      ...(cut.restart && { restart: cut.restart }),
      ...(layout && { layout }),
    };
  }

  /** The consumer read `bytes` of a segment's audio. */
  delivered(segmentId: string, bytes: number): void {
    this.segment(segmentId).deliveredBytes += bytes;
  }

  /** The first audio states the layout; a later PCM chunk must keep it. Returns the layout when this chunk decided it. */
  #decideLayout(chunk: AudioChunk): PcmInfo | undefined {
    if (chunk.data.length === 0) return undefined;
    const pcm = chunk.format === 'pcm' || chunk.format === 'wav';
    const decided = this.#layout;
    if (decided) {
      if (pcm && (chunk.sampleRate !== decided.sampleRate || chunk.channels !== decided.channels || chunk.bitDepth !== decided.bitDepth)) {
        throw new VoxpipeError(HttpAudioErrorCode.layoutChanged, `segment ${chunk.segmentId}: audio is ${chunk.sampleRate} Hz x${chunk.channels}, the stream is ${decided.sampleRate} Hz x${decided.channels}`);
      }
      return undefined;
    }
    const probed = pcm ? undefined : probeEncodedLayout(chunk.format, chunk.data);
    this.#layout = pcm ? { sampleRate: chunk.sampleRate, channels: chunk.channels, bitDepth: chunk.bitDepth } : { sampleRate: chunk.sampleRate, channels: chunk.channels, bitDepth: chunk.bitDepth, ...probed };
    return this.#layout;
  }
}
