/**
 * The sinks' (and the package's public) view of WAV: `protocol/wav.ts` holds
 * the format and its one reader; here the header is a Buffer and what the
 * reader refuses is a `decode_failed` error (`parseWavHeader`, in the WAV
 * decoder below the sinks).
 */
import type { PcmInfo } from '../protocol/audio.js';
import { buildWavHeader as buildHeader } from '../protocol/wav.js';

export { parseWavHeader } from '../codecs/wav.js';
export { WAV_HEADER_BYTES, WAV_MAX_HEADER_BYTES, WAV_UNKNOWN_SIZE, type WavHeader } from '../protocol/wav.js';

/**
 * Build a 44-byte header for `dataBytes` of PCM.
 * @param dataBytes length of the data chunk; `WAV_UNKNOWN_SIZE` for a streaming header
 */
export function buildWavHeader(pcm: PcmInfo, dataBytes: number): Buffer {
  const header = buildHeader(pcm, dataBytes);
  return Buffer.from(header.buffer, header.byteOffset, header.byteLength);
}

