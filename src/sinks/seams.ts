/**
 * Seams: where one segment's audio meets the next. Segment-by-segment
 * synthesis leaves uneven pauses (each segment brings its own leading and
 * trailing silence) and clicks (a step between the last sample of one
 * segment and the first of the next).
 *
 * - `measureSeams(pcm, boundaries, rate)`: for every seam, the silence on
 *   each side (ms of samples below a threshold, counted from the join) and
 *   the sample jump at the join. Pure.
 * - `SeamSmoother`: a streaming seam policy for what a listener hears: the
 *   pause at a seam (trailing plus leading silence) is trimmed to at most
 *   `maxPauseMs`, and a jump above `clickThreshold` is removed with a short
 *   fade-out and fade-in. Audio away from seams is passed through unchanged;
 *   latency is at most `fadeMs` plus any silence being held to decide.
 *
 * The policy is for playback only: a file, stdout or the stream's summary
 * keep the service's bytes (nothing here is applied to them).
 */
import { Pcm16Reader } from '../protocol/pcm16.js';

/** Default: a sample below 1% of full scale (-40 dBFS) is silence. */
export const DEFAULT_SILENCE_THRESHOLD = 328;
/** Default: a natural pause between sentences, 250 ms. */
export const DEFAULT_MAX_PAUSE_MS = 250;
/** Default: the fade that removes a click, 5 ms. */
export const DEFAULT_FADE_MS = 5;
/** Default: a step between two samples larger than this (2% of full scale, about -34 dBFS) is a click. */
export const DEFAULT_CLICK_THRESHOLD = 656;

export interface Seam {
  /** Index of the segment after the seam (1 for the first seam). */
  index: number;
  /** Where the join is, in ms from the start. */
  atMs: number;
  /** Silence at the end of the segment before, ms. */
  silenceBeforeMs: number;
  /** Silence at the start of the segment after, ms. */
  silenceAfterMs: number;
  /** The pause a listener hears at the seam: both silences, ms. */
  gapMs: number;
  /** |last sample before - first sample after|, in sample units (full scale 32768). */
  jump: number;
  /** `jump` above the click threshold. */
  click: boolean;
}

export interface SeamMeasureOptions {
  /** Amplitude below which a sample is silence; default 328 (-40 dBFS). */
  silenceThreshold?: number;
  /** Jump above which a seam is a click; default 656. */
  clickThreshold?: number;
}

/**
 * Measure every seam of mono 16-bit PCM. `boundaries` are the sample
 * indices where segments 2..n start (the first segment starts at 0).
 */
export function measureSeams(pcm: Int16Array, boundaries: readonly number[], sampleRate: number, options: SeamMeasureOptions = {}): Seam[] {
  const threshold = options.silenceThreshold ?? DEFAULT_SILENCE_THRESHOLD;
  const clickThreshold = options.clickThreshold ?? DEFAULT_CLICK_THRESHOLD;
  const ms = (samples: number) => (samples / sampleRate) * 1000;
  const starts = [0, ...boundaries, pcm.length];
  const seams: Seam[] = [];
  for (let k = 1; k < starts.length - 1; k++) {
    const prevStart = starts[k - 1]!;
    const at = starts[k]!;
    const nextEnd = starts[k + 1]!;
    let before = 0;
    while (at - before - 1 >= prevStart && Math.abs(pcm[at - before - 1]!) < threshold) before++;
    let after = 0;
    while (at + after < nextEnd && Math.abs(pcm[at + after]!) < threshold) after++;
    const jump = at > 0 && at < pcm.length ? Math.abs(pcm[at]! - pcm[at - 1]!) : 0;
    seams.push({ index: k, atMs: ms(at), silenceBeforeMs: ms(before), silenceAfterMs: ms(after), gapMs: ms(before + after), jump, click: jump > clickThreshold });
  }
  return seams;
}

export interface SeamPolicy {
  /** Longest pause kept at a seam, ms; default 250. */
  maxPauseMs?: number;
  /** Fade applied on each side of a click, ms; default 5. */
  fadeMs?: number;
  silenceThreshold?: number;
  clickThreshold?: number;
}

/** Append without spreading (a long silence would overflow the argument stack). */
function append(out: number[], xs: readonly number[]): void {
  for (const x of xs) out.push(x);
}

function trailingSilence(x: readonly number[], threshold: number): number {
  let n = 0;
  while (n < x.length && Math.abs(x[x.length - 1 - n]!) < threshold) n++;
  return n;
}

/**
 * The seam policy over a stream of PCM chunks, each tagged with its
 * segment: `push()` returns the samples ready to play, `end()` the rest.
 * The output is the same however the input is chunked.
 */
export class SeamSmoother {
  readonly #maxPause: number;
  readonly #fade: number;
  readonly #threshold: number;
  readonly #click: number;
  #segment: string | undefined;
  /** Held samples of the current segment: up to `#fade` sounding samples, then its trailing silence. */
  #held: number[] = [];
  /** After a seam: the previous segment's held samples, waiting for the next segment's first sound. */
  #seam: { prev: number[]; lead: number[]; firstSound: number } | undefined;
  /** Samples returned so far. */
  #emitted = 0;
  /** Silence removed at seams so far, ms. */
  trimmedMs = 0;
  /** Seams whose click was faded so far. */
  fades = 0;
  /** Where each segment after the first starts in the output, in samples. */
  readonly boundaries: number[] = [];

  constructor(sampleRate: number, policy: SeamPolicy = {}) {
    this.#maxPause = Math.round(((policy.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS) * sampleRate) / 1000);
    this.#fade = Math.max(1, Math.round(((policy.fadeMs ?? DEFAULT_FADE_MS) * sampleRate) / 1000));
    this.#threshold = policy.silenceThreshold ?? DEFAULT_SILENCE_THRESHOLD;
    this.#click = policy.clickThreshold ?? DEFAULT_CLICK_THRESHOLD;
    this.sampleRate = sampleRate;
  }

  readonly sampleRate: number;

  /** Samples of `segmentId`; returns what can be played now. */
  push(segmentId: string, samples: Int16Array): Int16Array {
    const out: number[] = [];
    if (this.#segment !== undefined && segmentId !== this.#segment) {
      // A seam: hold what the previous segment left until the next one sounds.
      this.#seam = { prev: this.#held, lead: [], firstSound: -1 };
      this.#held = [];
    }
    this.#segment = segmentId;
    for (const s of samples) {
      if (this.#seam) {
        const seam = this.#seam;
        seam.lead.push(s);
        if (seam.firstSound < 0 && Math.abs(s) >= this.#threshold) seam.firstSound = seam.lead.length - 1;
        // Resolve once the next segment sounded and `#fade` samples of it are here.
        if (seam.firstSound >= 0 && seam.lead.length - seam.firstSound >= this.#fade) this.#resolveSeam(out);
        continue;
      }
      this.#held.push(s);
    }
    if (!this.#seam) this.#release(out);
    this.#emitted += out.length;
    return Int16Array.from(out);
  }

  /** Everything still held (the stream ended: no seam follows). */
  end(): Int16Array {
    const out: number[] = [];
    if (this.#seam) this.#resolveSeam(out);
    append(out, this.#held);
    this.#held = [];
    this.#emitted += out.length;
    return Int16Array.from(out);
  }

  /** Release the current segment's samples but its trailing silence and the last `#fade` before it. */
  #release(out: number[]): void {
    const keep = trailingSilence(this.#held, this.#threshold) + this.#fade;
    if (this.#held.length > keep) append(out, this.#held.splice(0, this.#held.length - keep));
  }

  #resolveSeam(out: number[]): void {
    const { prev, lead } = this.#seam!;
    this.#seam = undefined;
    const tail = trailingSilence(prev, this.#threshold);
    let head = lead.findIndex((v) => Math.abs(v) >= this.#threshold);
    if (head < 0) head = lead.length;
    // Keep at most `#maxPause` of silence: the start of the trailing one, then the end of the leading one.
    const keepTail = Math.min(tail, this.#maxPause);
    const keepHead = Math.min(head, this.#maxPause - keepTail);
    const before = prev.slice(0, prev.length - tail + keepTail);
    const after = lead.slice(head - keepHead);
    this.trimmedMs += ((tail - keepTail + head - keepHead) / this.sampleRate) * 1000;
    const last = before[before.length - 1];
    const first = after[0];
    if (last !== undefined && first !== undefined && Math.abs(first - last) > this.#click) {
      // A click: fade the last samples before the join out and the first after it in.
      const n = this.#fade;
      for (let i = 0; i < Math.min(n, before.length); i++) before[before.length - 1 - i] = Math.round(before[before.length - 1 - i]! * (i / n));
      for (let i = 0; i < Math.min(n, after.length); i++) after[i] = Math.round(after[i]! * (i / n));
      this.fades++;
    }
    append(out, before);
    this.boundaries.push(this.#emitted + out.length);
    this.#held = after;
    this.#release(out);
  }
}

/**
 * The seam policy over a whole buffer (what a player would play): returns
 * the smoothed PCM and where its segments now start.
 */
export function smoothSeams(pcm: Int16Array, boundaries: readonly number[], sampleRate: number, policy: SeamPolicy = {}): { pcm: Int16Array; boundaries: number[]; trimmedMs: number; fades: number } {
  const smoother = new SeamSmoother(sampleRate, policy);
  const starts = [0, ...boundaries, pcm.length];
  const parts: Int16Array[] = [];
  let length = 0;
  for (let k = 0; k < starts.length - 1; k++) {
    const piece = smoother.push(`s${k}`, pcm.subarray(starts[k]!, starts[k + 1]!));
    parts.push(piece);
    length += piece.length;
  }
  const tail = smoother.end();
  parts.push(tail);
  const out = new Int16Array(length + tail.length);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return { pcm: out, boundaries: [...smoother.boundaries], trimmedMs: smoother.trimmedMs, fades: smoother.fades };
}

/**
 * The seam policy between a SpeechStream and a playback sink: reads
 * `speech.chunks()` (pcm, mono) and yields the PCM to play. For playback
 * only: write files from the stream itself, so they keep the service's bytes.
 *
 * ```ts
 * const sink = await sinks.openPlaybackSink(info);
 * await pipeline(Readable.from(sinks.smoothSeamChunks(speech.chunks())), sink);
 * ```
 */
export async function* smoothSeamChunks(chunks: AsyncIterable<{ data: Buffer; segmentId: string; sampleRate: number; channels: number; format: string }>, policy: SeamPolicy = {}): AsyncGenerator<Buffer> {
  let smoother: SeamSmoother | undefined;
  const pcm16 = new Pcm16Reader(); // chunks may end mid-sample
  const toBuffer = (x: Int16Array) => {
    const b = Buffer.alloc(x.length * 2);
    for (let i = 0; i < x.length; i++) b.writeInt16LE(x[i]!, i * 2);
    return b;
  };
  for await (const chunk of chunks) {
    if (chunk.format !== 'pcm' || chunk.channels !== 1) {
      // Nothing to smooth in a format we would have to decode: pass it through.
      yield chunk.data;
      continue;
    }
    smoother ??= new SeamSmoother(chunk.sampleRate, policy);
    const samples = pcm16.push(chunk.data);
    const out = smoother.push(chunk.segmentId, samples);
    if (out.length > 0) yield toBuffer(out);
  }
  if (smoother) {
    const tail = smoother.end();
    if (tail.length > 0) yield toBuffer(tail);
  }
}
