/**
 * Finding the WAV header at the start of a `wav` audio frame, so that a
 * resumed request keeps one valid stream: the server starts the first audio
 * frame of a request on each connection (and every stored segment file) with
 * a header, and only the very first one may reach the listener.
 * Pure functions over bytes; no Node APIs, so the machine stays portable.
 */

const RIFF = [0x52, 0x49, 0x46, 0x46]; // "RIFF"
const WAVE = [0x57, 0x41, 0x56, 0x45]; // "WAVE"
const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"
/** RIFF id, size, WAVE id. */
const RIFF_PREAMBLE_BYTES = 12;
/** Chunk id and size. */
const CHUNK_HEADER_BYTES = 8;

function matches(bytes: Uint8Array, at: number, tag: readonly number[]): boolean {
  for (let i = 0; i < tag.length; i++) if (bytes[at + i] !== tag[i]) return false;
  return true;
}

function u32le(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)) + bytes[at + 3]! * 0x100_0000;
}

/**
 * Length of the WAV header (everything up to the first byte of the `data`
 * chunk's payload) when `bytes` starts with one, else `undefined`. Chunks
 * before `data` (`fmt `, `LIST`, ...) are walked, so ordinary files work as
 * well as the 44-byte streaming header.
 */
export function wavHeaderLength(bytes: Uint8Array): number | undefined {
  if (bytes.byteLength < RIFF_PREAMBLE_BYTES + CHUNK_HEADER_BYTES) return undefined;
  if (!matches(bytes, 0, RIFF) || !matches(bytes, 8, WAVE)) return undefined;
  let at = RIFF_PREAMBLE_BYTES;
  while (at + CHUNK_HEADER_BYTES <= bytes.byteLength) {
    if (matches(bytes, at, DATA)) return at + CHUNK_HEADER_BYTES;
    const size = u32le(bytes, at + 4);
    // Chunks are padded to an even length.
    at += CHUNK_HEADER_BYTES + size + (size % 2);
  }
  return undefined;
}
