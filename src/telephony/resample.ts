/**
 * A band-limited sample-rate converter for 16-bit mono PCM: a polyphase
 * windowed-sinc FIR (Kaiser window) at the rational ratio `toRate/fromRate`.
 *
 * Every output sample is the input convolved with a low-pass sinc whose
 * cutoff sits below the lower of the two Nyquist frequencies (`rolloff` of
 * it), evaluated at the output instant: one of `L` precomputed phases of the
 * filter, where `L/M` is the reduced ratio. Content above the new Nyquist
 * (sibilants at 24 kHz going to 8 kHz) is removed before it can alias, which
 * dropping samples or linear interpolation do not do.
 *
 * Streaming: `push()` takes chunks of any size and returns what can be
 * computed so far (the filter looks `halfWidth` input samples ahead);
 * `flush()` returns the tail. The output is the same however the input is
 * chunked, has `ceil(inputSamples * toRate / fromRate)` samples, and is
 * zero-phase: output sample `n` is the signal at time `n / toRate`.
 */
import { VoxpipeError } from '../errors.js';

export interface ResamplerOptions {
  /** Input rate in Hz (the stream's, e.g. 24000 or 22050). */
  fromRate: number;
  /** Output rate in Hz (8000 for telephony). */
  toRate: number;
  /** Zero crossings of the sinc on each side of the centre. Default 16 (about 80 dB stopband with the default window). */
  zeroCrossings?: number;
  /** Cutoff as a fraction of the lower Nyquist frequency. Default 0.9 (3.6 kHz of a 4 kHz band). */
  rolloff?: number;
  /** Kaiser window beta. Default 8.6. */
  kaiserBeta?: number;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (series; converges fast for the betas used). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

function checkRate(name: string, rate: number): void {
  if (!Number.isInteger(rate) || rate <= 0 || rate > 384_000) {
    throw new VoxpipeError('invalid_arguments', `${name} must be a whole number of Hz between 1 and 384000, got ${String(rate)}`);
  }
}

export class Resampler {
  readonly fromRate: number;
  readonly toRate: number;
  /** Input samples the filter reaches on each side of an output instant. */
  readonly halfWidth: number;
  /** Up factor L and down factor M of the reduced ratio L/M. */
  readonly #up: number;
  readonly #down: number;
  /** `#up` phases of `2 * halfWidth` taps each, phase-major. */
  readonly #taps: Float32Array;
  /** Input not yet consumed; `#buf[0]` is input sample `#bufStart`. */
  #buf = new Float32Array(0);
  #bufStart = 0;
  #inCount = 0;
  /** Index of the next output sample. */
  #next = 0;
  #flushed = false;

  constructor(options: ResamplerOptions) {
    checkRate('fromRate', options.fromRate);
    checkRate('toRate', options.toRate);
    const zeroCrossings = options.zeroCrossings ?? 16;
    const rolloff = options.rolloff ?? 0.9;
    const beta = options.kaiserBeta ?? 8.6;
    if (!(rolloff > 0 && rolloff <= 1)) throw new VoxpipeError('invalid_arguments', `rolloff must be in (0, 1], got ${String(rolloff)}`);
    if (!(Number.isInteger(zeroCrossings) && zeroCrossings >= 2 && zeroCrossings <= 256)) throw new VoxpipeError('invalid_arguments', `zeroCrossings must be a whole number from 2 to 256, got ${String(zeroCrossings)}`);
    this.fromRate = options.fromRate;
    this.toRate = options.toRate;
    const g = gcd(options.fromRate, options.toRate);
    this.#up = options.toRate / g;
    this.#down = options.fromRate / g;
    // Cutoff in cycles per input sample.
    const fc = 0.5 * rolloff * Math.min(1, this.#up / this.#down);
    const half = Math.ceil(zeroCrossings / (2 * fc));
    this.halfWidth = half;
    const width = 2 * half;
    const taps = new Float32Array(this.#up * width);
    const i0Beta = besselI0(beta);
    for (let p = 0; p < this.#up; p++) {
      const frac = p / this.#up;
      let sum = 0;
      const row = new Float64Array(width);
      for (let j = 0; j < width; j++) {
        // Distance in input samples from the output instant to input sample (i - half + 1 + j).
        const d = j - half + 1 - frac;
        const x = 2 * fc * d;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const r = d / half;
        const w = Math.abs(r) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - r * r)) / i0Beta;
        row[j] = 2 * fc * sinc * w;
        sum += row[j]!;
      }
      // Unity gain at DC in every phase: no ripple at the output rate from phase to phase.
      for (let j = 0; j < width; j++) taps[p * width + j] = row[j]! / sum;
    }
    this.#taps = taps;
  }

  /** Output samples for the input so far: `ceil(inputSamples * toRate / fromRate)` once flushed. */
  static outputLength(inputSamples: number, fromRate: number, toRate: number): number {
    const g = gcd(fromRate, toRate);
    return Math.ceil((inputSamples * (toRate / g)) / (fromRate / g));
  }

  /** Feed input samples; returns the output samples now computable (possibly none). */
  push(samples: Int16Array): Int16Array {
    if (this.#flushed) throw new VoxpipeError('invalid_arguments', 'Resampler.push() after flush()');
    if (samples.length > 0) {
      const joined = new Float32Array(this.#buf.length + samples.length);
      joined.set(this.#buf);
      for (let i = 0; i < samples.length; i++) joined[this.#buf.length + i] = samples[i]!;
      this.#buf = joined;
      this.#inCount += samples.length;
    }
    // Output n needs input up to floor(n * M / L) + half.
    return this.#run((n) => Math.floor((n * this.#down) / this.#up) + this.halfWidth < this.#inCount);
  }

  /** The tail: the output samples that need input past the end (read as silence). */
  flush(): Int16Array {
    if (this.#flushed) return new Int16Array(0);
    this.#flushed = true;
    const total = Resampler.outputLength(this.#inCount, this.fromRate, this.toRate);
    return this.#run((n) => n < total);
  }

  #run(ready: (n: number) => boolean): Int16Array {
    const out: number[] = [];
    const half = this.halfWidth;
    const width = 2 * half;
    const buf = this.#buf;
    const taps = this.#taps;
    const inCount = this.#inCount;
    while (ready(this.#next)) {
      const n = this.#next;
      const pos = n * this.#down;
      const i = Math.floor(pos / this.#up);
      const phase = pos - i * this.#up;
      const base = phase * width;
      const first = i - half + 1; // input index of tap 0
      let acc = 0;
      for (let j = 0; j < width; j++) {
        const k = first + j;
        if (k < 0 || k >= inCount) continue; // before the start or past the end: silence
        acc += buf[k - this.#bufStart]! * taps[base + j]!;
      }
      const v = Math.round(acc);
      out.push(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
      this.#next++;
    }
    // Drop input no later output reaches.
    const keepFrom = Math.max(0, Math.floor((this.#next * this.#down) / this.#up) - half + 1);
    if (keepFrom > this.#bufStart) {
      this.#buf = this.#buf.slice(Math.min(keepFrom - this.#bufStart, this.#buf.length));
      this.#bufStart = keepFrom;
    }
    return Int16Array.from(out);
  }
}

/** Resample a whole buffer at once (one `push` and `flush`). */
export function resample(samples: Int16Array, fromRate: number, toRate: number, options: Omit<ResamplerOptions, 'fromRate' | 'toRate'> = {}): Int16Array {
  if (fromRate === toRate) return samples.slice();
  const r = new Resampler({ ...options, fromRate, toRate });
  const head = r.push(samples);
  const tail = r.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}
