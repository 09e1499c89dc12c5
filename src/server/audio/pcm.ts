/**
 * Reading s16le PCM out of arbitrary byte chunks: network and engine chunks
 * need not end on a sample boundary, so a stray byte is carried over.
 */
export class Int16Reader {
  #carry: number | undefined;

  /** Whole samples of `chunk`, with a byte left over from the previous chunk in front. */
  read(chunk: Uint8Array): Int16Array {
    let bytes: Uint8Array = chunk;
    if (this.#carry !== undefined) {
      bytes = new Uint8Array(chunk.length + 1);
      bytes[0] = this.#carry;
      bytes.set(chunk, 1);
      this.#carry = undefined;
    }
    const whole = bytes.length & ~1;
    if (whole < bytes.length) this.#carry = bytes[whole];
    // Copy: the input may be unaligned or reused by its owner.
    const samples = new Int16Array(whole / 2);
    const view = new DataView(bytes.buffer, bytes.byteOffset, whole);
    for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
    return samples;
  }

  /** Whether a byte is waiting for its other half. */
  get pending(): boolean {
    return this.#carry !== undefined;
  }
}

/** The bytes of `samples` as s16le (a view, no copy). */
export function int16Bytes(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}
