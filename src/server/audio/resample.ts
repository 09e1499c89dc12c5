/**
 * A streaming mono resampler for 16-bit PCM with cubic (Catmull-Rom)
 * interpolation: enough for speech going from eSpeak's 22.05 kHz to a rate
 * Opus accepts (24 kHz), cheap, and continuous across chunk boundaries.
 * Positions are computed from integer sample counts, so the output does not
 * depend on how the input is chunked.
 */
export class Resampler {
  readonly #inRate: number;
  readonly #outRate: number;
  readonly #passthrough: boolean;
  /** Input not yet fully used; `#buf[0]` is input sample number `#base` (-1: a virtual zero before the start). */
  #buf: Int16Array = new Int16Array(1);
  #base = -1;
  #inCount = 0;
  #outCount = 0;

  constructor(inRate: number, outRate: number) {
    this.#inRate = inRate;
    this.#outRate = outRate;
    this.#passthrough = inRate === outRate;
  }

  /** Resamples a chunk; output lags input by at most two input samples until `flush()`. */
  push(input: Int16Array): Int16Array {
    if (this.#passthrough) return input;
    this.#append(input);
    this.#inCount += input.length;
    return this.#drain(Number.POSITIVE_INFINITY);
  }

  /** Emits the rest so the output holds `inputSamples * outRate / inRate` samples, then starts afresh. */
  flush(): Int16Array {
    if (this.#passthrough) return new Int16Array(0);
    const target = Math.round((this.#inCount * this.#outRate) / this.#inRate);
    this.#append(new Int16Array(2)); // the interpolator looks two samples ahead
    const out = this.#drain(target - this.#outCount);
    this.#buf = new Int16Array(1);
    this.#base = -1;
    this.#inCount = 0;
    this.#outCount = 0;
    return out;
  }

  #append(input: Int16Array): void {
    const buf = new Int16Array(this.#buf.length + input.length);
    buf.set(this.#buf);
    buf.set(input, this.#buf.length);
    this.#buf = buf;
  }

  #drain(limit: number): Int16Array {
    const buf = this.#buf;
    const base = this.#base;
    const out = new Int16Array(Math.min(limit, Math.ceil(((buf.length + 1) * this.#outRate) / this.#inRate) + 1));
    let produced = 0;
    let n = this.#outCount;
    while (produced < out.length) {
      const pos = (n * this.#inRate) / this.#outRate; // input sample number of output n
      const i = Math.floor(pos);
      const k = i - base; // index of sample i in buf
      if (k + 2 >= buf.length) break;
      const t = pos - i;
      const p0 = buf[k - 1] ?? 0;
      const p1 = buf[k] ?? 0;
      const p2 = buf[k + 1] ?? 0;
      const p3 = buf[k + 2] ?? 0;
      const value = p1 + 0.5 * t * (p2 - p0 + t * (2 * p0 - 5 * p1 + 4 * p2 - p3 + t * (3 * (p1 - p2) + p3 - p0)));
      const rounded = Math.round(value);
      out[produced++] = rounded > 32_767 ? 32_767 : rounded < -32_768 ? -32_768 : rounded;
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
}
