/**
 * 16-bit little-endian PCM bytes to samples across chunks: a chunk may end
 * mid-sample (frames are cut at any byte), so its odd byte is carried to the
 * next one.
 */
export class Pcm16Reader {
  #carry: Buffer | undefined;

  /** The whole samples `data` completes (with the byte carried from before). */
  push(data: Buffer): Int16Array {
    let bytes = this.#carry ? Buffer.concat([this.#carry, data]) : data;
    this.#carry = undefined;
    if (bytes.length % 2) {
      this.#carry = bytes.subarray(bytes.length - 1);
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    const samples = new Int16Array(bytes.length / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
    return samples;
  }
}
