/**
 * The server's one resampler: mono, cubic (Catmull-Rom) interpolation.
 * Streaming (`Resampler`, 16-bit PCM: eSpeak's 22.05 kHz to a rate Opus
 * accepts) or whole (`resample`, floats: reference audio to the voice
 * analysis rate, any input to the recognizer's 16 kHz). Going down, a box
 * low-pass as wide as the rate ratio comes first, so partials above the new
 * Nyquist rate do not alias into the pitch range.
 *
 * Positions are computed from integer sample counts, so the output does not
 * depend on how the input is chunked.
 */

/** Catmull-Rom between p1 and p2 at t in [0, 1). */
function cubic(p0: number, p1: number, p2: number, p3: number, t: number): number {
  return p1 + 0.5 * t * (p2 - p0 + t * (2 * p0 - 5 * p1 + 4 * p2 - p3 + t * (3 * (p1 - p2) + p3 - p0)));
}

export class Resampler {
  readonly #inRate: number;
  readonly #outRate: number;
  readonly #passthrough: boolean;
  /** Input not yet fully used; `#buf[0]` is input sample number `#base` (-1: a virtual zero before the start). */
  #buf: Float64Array = new Float64Array(1);
  #base = -1;
  #inCount = 0;
  #outCount = 0;

  constructor(inRate: number, outRate: number) {
    this.#inRate = inRate;
    this.#outRate = outRate;
    this.#passthrough = inRate === outRate;
  }

  /** Resamples a chunk of 16-bit PCM; output lags input by at most two input samples until `flush()`. */
  push(input: Int16Array): Int16Array {
    if (this.#passthrough) return input;
    return toInt16(this.#push(Float64Array.from(input)));
  }

  /** Emits the rest so the output holds `inputSamples * outRate / inRate` samples, then starts afresh. */
  flush(): Int16Array {
    if (this.#passthrough) return new Int16Array(0);
    return toInt16(this.#flush());
  }

  #push(input: Float64Array): Float64Array {
    this.#append(input);
    this.#inCount += input.length;
    return this.#drain(Number.POSITIVE_INFINITY);
  }

  #flush(): Float64Array {
    const target = Math.round((this.#inCount * this.#outRate) / this.#inRate);
    this.#append(new Float64Array(2)); // the interpolator looks two samples ahead
    const out = this.#drain(target - this.#outCount);
    this.#buf = new Float64Array(1);
    this.#base = -1;
    this.#inCount = 0;
    this.#outCount = 0;
    return out;
  }

  #append(input: Float64Array): void {
    const buf = new Float64Array(this.#buf.length + input.length);
    buf.set(this.#buf);
    buf.set(input, this.#buf.length);
    this.#buf = buf;
  }

  #drain(limit: number): Float64Array {
    const buf = this.#buf;
    const base = this.#base;
    const out = new Float64Array(Math.max(0, Math.min(limit, Math.ceil(((buf.length + 1) * this.#outRate) / this.#inRate) + 1)));
    let produced = 0;
    let n = this.#outCount;
    while (produced < out.length) {
      const pos = (n * this.#inRate) / this.#outRate; // input sample number of output n
      const i = Math.floor(pos);
      const k = i - base; // index of sample i in buf
      if (k + 2 >= buf.length) break;
      out[produced++] = cubic(buf[k - 1] ?? 0, buf[k] ?? 0, buf[k + 1] ?? 0, buf[k + 2] ?? 0, pos - i);
      n++;
    }
    this.#outCount = n;
    // Keep from the sample before the next output's position: the interpolator needs it.
    const next = Math.floor((n * this.#inRate) / this.#outRate);
    const drop = Math.max(0, next - 1 - base);
    if (drop > 0) {
      this.#buf = buf.slice(drop);
      this.#base = base + drop;
    }
    return out.subarray(0, produced);
  }

  /**
   * A whole signal at `fromRate` resampled to `toRate` (floats, any scale):
   * `samples.length * toRate / fromRate` samples, rounded.
   */
  static resample(samples: Float32Array, fromRate: number, toRate: number): Float32Array {
    if (fromRate === toRate) return samples;
    const resampler = new Resampler(fromRate, toRate);
    const input = fromRate > toRate ? boxLowPass(samples, Math.round(fromRate / toRate)) : Float64Array.from(samples);
    const head = resampler.#push(input);
    const tail = resampler.#flush();
    const out = new Float32Array(head.length + tail.length);
    out.set(head);
    out.set(tail, head.length);
    return out;
  }
}

/** The one-shot form: `Resampler.resample`. */
export const resample = Resampler.resample;

/** Moving average over `width` samples, centred (a cheap low-pass before going down). */
function boxLowPass(samples: Float32Array, width: number): Float64Array {
  if (width <= 1) return Float64Array.from(samples);
  const out = new Float64Array(samples.length);
  const half = Math.floor(width / 2);
  let sum = 0;
  let from = 0;
  let to = 0; // the window is samples[from, to)
  for (let i = 0; i < samples.length; i++) {
    const wantFrom = Math.max(0, i - half);
    const wantTo = Math.min(samples.length, i - half + width);
    while (to < wantTo) sum += samples[to++]!;
    while (from < wantFrom) sum -= samples[from++]!;
    out[i] = sum / (to - from);
  }
  return out;
}

/** Rounded and clamped to 16 bits. */
function toInt16(samples: Float64Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const rounded = Math.round(samples[i]!);
    out[i] = rounded > 32_767 ? 32_767 : rounded < -32_768 ? -32_768 : rounded;
  }
  return out;
}
