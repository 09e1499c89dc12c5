/**
 * What the listener gets when a segment cut off mid-audio is generated again
 * (a resumed realtime request, or a failover to another transport that
 * speaks the whole segment anew): the one rule, used by the reliable machine
 * and by SpeechStream. Pure: the callers keep the counters.
 *
 * - `continue` (pcm, wav; sample-exact): skip what the listener already has
 *   and release the rest, so the output is byte-identical to an unbroken run.
 * - `restart` (mp3, opus: frames cannot be cut at a byte): release the whole
 *   segment again, announced by a `discontinuity` naming how many bytes of it
 *   the listener had (and now hears again).
 *
 * And the one place that applies it: the audio ledger (`AudioLedger`), one
 * `SegmentLedger` per segment. Every transport hands its audio over one way,
 * raw bytes of a segment tagged with the attempt that carried them (a
 * realtime connection or a stored file of the manifest, another transport
 * after a failover); the ledger decides, once, whatever the transport and
 * however many attempts a segment took (a resume and a failover are the same
 * case: a new attempt at a segment):
 *
 * - the one stream header a listener gets (the first of a wav stream; a
 *   header a later attempt brings is not audio): stripped here, once;
 * - continue or restart: what of a new attempt the listener gets, and the
 *   `discontinuity` a restart announces;
 * - the layout, from the first audio (not from an announcement made before
 *   it); PCM whose layout changes mid-stream cannot be one stream;
 * - bytes: emitted, received per attempt, delivered to the reader (what
 *   barge-in reports), and reconciled against what the transport says the
 *   segment carries (`audio_incomplete`, never a silent shortfall).
 *
 * Pure bookkeeping: no clock, no I/O, no events, no Node APIs on the pcm and
 * wav paths (the browser session keeps one too). The reliable machine keeps
 * no byte counters of its own: it asks the ledger (`MachinePort.audioOf`),
 * which is SpeechStream's once the stream bound its session (`bindLedger`,
 * `transport.ts`). What a chunk is (`TransportAudio`: segment, attempt tag,
 * offset in the attempt's raw bytes, a stream header included) is defined
 * in `transport.ts`; an offset behind what the attempt brought is a repeat
 * (dropped, counted), one beyond it a hole (`audio_incomplete`).
 */
import { AudioIncompleteError, VoxpipeError } from './errors.js';
import type { AudioFormat, PcmInfo } from './protocol/audio.js';
import { probeEncodedLayout } from './protocol/audio-probe.js';
import { HttpAudioErrorCode } from './protocol/codes.js';
import { wavHeaderLength } from './protocol/wav.js';

/** What the listener gets when a segment was cut off mid-audio and is generated again. */
export const PartialSegmentPolicy = {
  /** Skip the bytes already emitted and continue (sample-exact for pcm and wav). */
  continue: 'continue',
  /** Emit a `discontinuity` event, then the whole segment again (mp3, opus). */
  restart: 'restart',
} as const;
export type PartialSegmentPolicy = (typeof PartialSegmentPolicy)[keyof typeof PartialSegmentPolicy];

/** Formats whose bytes can be spliced at any sample boundary. */
const SPLICEABLE: ReadonlySet<string> = new Set(['pcm', 'wav']);

/** The default policy for a format: `continue` for pcm and wav, `restart` for the rest. */
export function defaultPartialPolicy(format: string): PartialSegmentPolicy {
  return SPLICEABLE.has(format) ? PartialSegmentPolicy.continue : PartialSegmentPolicy.restart;
}

/** Where a segment stands when a payload of it arrives. */
export interface SpliceCursor {
  /** Audio bytes of the segment the listener has (since its last restart). */
  emitted: number;
  /** Bytes of the segment received on the current attempt, before this payload. */
  received: number;
}

export interface Splice<T extends Uint8Array = Uint8Array> {
  /** What goes to the listener: `payload` or a view of its tail (a Buffer for a Buffer); may be empty. */
  data: T;
  /** Set when this payload restarts the segment: the bytes the listener had of it (the `discontinuity`'s `droppedBytes`); the caller resets `emitted`. */
  restart?: { droppedBytes: number };
}

/**
 * Splice one payload of a segment. A `continue` skips exactly the bytes the
 * listener has, even mid-sample: the listener's stream already holds that
 * part of the sample, so byte N of the new attempt is what it needs next.
 * (Rounding the skip down to a sample boundary would repeat the bytes of a
 * part sample and shift everything after it, for a deployment that cuts
 * frames at odd sizes.)
 */
export function splice<T extends Uint8Array>(cursor: SpliceCursor, payload: T, policy: PartialSegmentPolicy): Splice<T> {
  if (payload.byteLength === 0) return { data: payload };
  if (policy === PartialSegmentPolicy.restart) {
    return cursor.received === 0 && cursor.emitted > 0 ? { data: payload, restart: { droppedBytes: cursor.emitted } } : { data: payload };
  }
  const already = cursor.emitted - cursor.received;
  if (already <= 0) return { data: payload };
  const skip = Math.min(already, payload.byteLength);
  // subarray of a Buffer is a Buffer.
  return { data: skip > 0 ? (payload.subarray(skip) as T) : payload };
}

/** What one segment's audio came to. */
export class SegmentLedger {
  readonly segmentId: string;
  /** Every byte the listener got for the segment: the stream header and `restart` repeats included. */
  emittedBytes = 0;
  /** Audio bytes the listener has of the segment since its last restart (no header). */
  audioBytes = 0;
  /** Bytes of the current attempt received (no header). */
  attemptBytes = 0;
  /** Length of the stream header the current attempt began with (0: none). */
  headerBytes = 0;
  /** Bytes read by the consumer (the reader or `chunks()`). */
  deliveredBytes = 0;
  /** The tag of the current attempt, when the transport tags its audio. */
  attempt: number | undefined;
  /** Bytes a transport handed over twice for the same offset of an attempt (dropped). */
  repeatedBytes = 0;

  constructor(segmentId: string) {
    this.segmentId = segmentId;
  }

  /** Its audio had begun, on this attempt or an earlier one (a failover charges it again). */
  get began(): boolean {
    return this.emittedBytes > 0 || this.attemptBytes > 0;
  }

  /** A new attempt at the segment (a resumed connection, a stored file, another transport): its bytes count from 0 again. */
  newAttempt(): void {
    this.attemptBytes = 0;
    this.headerBytes = 0;
  }

  /** Where the current attempt's next raw bytes start: its stream header and the audio it brought. */
  get nextOffset(): number {
    return this.headerBytes + this.attemptBytes;
  }

  /** Less than `expected` audio bytes (what the transport says the segment carries, `expectedAudioBytes`): the error that says so. */
  shortfall(expected: number | undefined, requestId: string | undefined): AudioIncompleteError | undefined {
    const have = shortOf(this, expected);
    return have === undefined ? undefined : new AudioIncompleteError(this.segmentId, expected!, have, { requestId, retryable: true });
  }
}

/**
 * The one header rule: the audio bytes a segment must carry, from what its
 * transport states (`usage` or `segment_completed` `audio_bytes`, a
 * manifest's, a sum of those in simple mode). A deployment may count the
 * stream header in or not; the stated figure less the header the attempt
 * began with lets both pass when every audio byte came, and is what
 * `SegmentResult.expectedBytes` carries (no header).
 */
export function expectedAudioBytes(stated: number, headerBytes: number): number {
  return Math.max(0, stated - headerBytes);
}

/**
 * Is a segment short? The one judgment, wherever it is asked (a machine at a
 * completion or for a stored file, SpeechStream at every result): the audio
 * the listener has of it against `expected` (header-free,
 * `expectedAudioBytes`). `attemptAudio`: what the current attempt brought
 * with frames not yet handed to the ledger (held behind a missing sequence),
 * counted when it is more. Returns the audio bytes had when short.
 */
export function shortOf(heard: { readonly audioBytes: number }, expected: number | undefined, attemptAudio = 0): number | undefined {
  if (expected === undefined) return undefined;
  const have = Math.max(heard.audioBytes, attemptAudio);
  return have < expected ? have : undefined;
}

/** What the ledger takes: raw bytes of one attempt at a segment, in order, and what they are. */
export interface LedgerChunk extends PcmInfo {
  data: Uint8Array;
  segmentId: string;
  format: AudioFormat;
  /**
   * The attempt that carried the bytes (`nextAttemptTag()`, `transport.ts`):
   * a new tag starts a new attempt at the segment. Absent: the current one.
   */
  attempt?: number | undefined;
  /** Where the bytes start in the attempt's raw bytes (a stream header included); absent: right after the last. */
  offset?: number | undefined;
}

/** What the ledger made of one chunk. */
export interface LedgerEntry<C extends LedgerChunk = LedgerChunk> {
  /** What goes to the listener (may be empty: all of it was heard already). */
  chunk: C;
  /** The chunk restarted its segment: the bytes of it the listener had. */
  restart?: { droppedBytes: number };
  /** This chunk decided the stream's layout (the first audio). */
  layout?: PcmInfo;
}

export interface SpliceLedgerOptions {
  /** Overrides the format's default (`defaultPartialPolicy`). */
  policy?: PartialSegmentPolicy;
}

export interface AudioLedgerOptions extends SpliceLedgerOptions {
  /** Decide the layout from the first audio and hold later PCM to it; default true. */
  layout?: boolean;
}

/**
 * The ledger without the layout check (`AudioLedger` adds it): for a session
 * that takes the layout from `ready` and never reads a stream's own header
 * for it. The browser session keeps this one, so the browser bundle carries
 * no encoded-stream probes (`protocol/audio-probe.ts`: the bundle's size budget).
 */
export class SpliceLedger {
  readonly #segments = new Map<string, SegmentLedger>();
  readonly #policy: PartialSegmentPolicy | undefined;
  /** Bytes emitted over the whole stream. */
  #bytes = 0;

  constructor(options: SpliceLedgerOptions = {}) {
    this.#policy = options.policy;
  }

  /** Bytes emitted over the whole stream (header included). */
  get bytes(): number {
    return this.#bytes;
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
  accept<C extends LedgerChunk>(chunk: C): LedgerEntry<C> {
    const s = this.segment(chunk.segmentId);
    if (chunk.attempt !== undefined && chunk.attempt !== s.attempt) {
      // Another tag: another attempt (a resume, a stored file, a failover to
      // another transport), whatever came before it, tagged or not.
      s.newAttempt();
      s.attempt = chunk.attempt;
    }
    // An offset behind what the attempt brought is a repeat: its overlap is
    // dropped (and counted). One beyond it is a hole nothing can fill in this
    // attempt: `audio_incomplete` naming the missing range of its raw bytes.
    const have = s.nextOffset;
    const over = have - (chunk.offset ?? have);
    if (over < 0) throw new AudioIncompleteError(chunk.segmentId, chunk.offset!, have, { retryable: true });
    if (over > 0) {
      const data = chunk.data.subarray(over);
      s.repeatedBytes += chunk.data.length - data.length;
      chunk = { ...chunk, data, offset: have };
    }
    const layout = this.decideLayout(chunk);
    // The stream's header comes with the stream's first audio; one a later
    // attempt or transport brings is not audio of the segment.
    let header = 0;
    if (chunk.format === 'wav' && s.attemptBytes === 0 && s.headerBytes === 0) header = wavHeaderLength(chunk.data) ?? 0;
    if (header > 0) s.headerBytes = header;
    const keepHeader = header > 0 && this.#bytes === 0;
    const payload = header > 0 ? chunk.data.subarray(header) : chunk.data;
    const cut = splice({ emitted: s.audioBytes, received: s.attemptBytes }, payload, this.#policy ?? defaultPartialPolicy(chunk.format));
    s.attemptBytes += payload.length;
    if (cut.restart) s.audioBytes = 0;
    s.audioBytes += cut.data.length;
    // Nothing was emitted before the stream's header: the whole payload goes with it.
    const data = keepHeader ? chunk.data : cut.data;
    s.emittedBytes += data.length;
    this.#bytes += data.length;
    // Built without spreads of absent parts: this runs for every frame.
    const entry: LedgerEntry<C> = { chunk: data === chunk.data ? chunk : { ...chunk, data } };
    if (cut.restart) entry.restart = cut.restart;
    if (layout) entry.layout = layout;
    return entry;
  }

  /** The consumer read `bytes` of a segment's audio. */
  delivered(segmentId: string, bytes: number): void {
    this.segment(segmentId).deliveredBytes += bytes;
  }

  /** The layout this chunk decided, if any (none here: `AudioLedger` decides it); it may throw to refuse the chunk. */
  protected decideLayout(_chunk: LedgerChunk): PcmInfo | undefined {
    return undefined;
  }
}

/** The audio ledger: `SpliceLedger` and the stream's layout, decided by its first audio (probed from the bytes of an encoded stream). */
export class AudioLedger extends SpliceLedger {
  readonly #checkLayout: boolean;
  #layout: PcmInfo | undefined;

  constructor(options: AudioLedgerOptions = {}) {
    super(options);
    this.#checkLayout = options.layout ?? true;
  }

  /** The layout the audio stated, once the first audio came. */
  get layout(): PcmInfo | undefined {
    return this.#layout;
  }

  /** The first audio states the layout; a later PCM chunk must keep it. Returns the layout when this chunk decided it. */
  protected override decideLayout(chunk: LedgerChunk): PcmInfo | undefined {
    if (!this.#checkLayout || chunk.data.length === 0) return undefined;
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
