/**
 * The sinks' (and the package's public) view of WAV: `protocol/wav.ts` holds
 * the format and its one reader; here the header is a Buffer and what the
 * reader refuses is a `decode_failed` error.
 */
import { VoxpipeError } from '../errors.js';
import type { PcmInfo } from '../protocol/audio.js';
import { buildWavHeader as buildHeader, readWavHeader, type WavHeader } from '../protocol/wav.js';
import { SinkErrorCode } from './types.js';

export { WAV_HEADER_BYTES, WAV_MAX_HEADER_BYTES, WAV_UNKNOWN_SIZE, type WavHeader } from '../protocol/wav.js';

/**
 * Build a 44-byte header for `dataBytes` of PCM.
 * @param dataBytes length of the data chunk; `WAV_UNKNOWN_SIZE` for a streaming header
 */
export function buildWavHeader(pcm: PcmInfo, dataBytes: number): Buffer {
  const header = buildHeader(pcm, dataBytes);
  return Buffer.from(header.buffer, header.byteOffset, header.byteLength);
}

/**
 * Parse a WAV header from the first bytes of a stream.
 * @returns the header, or undefined when `bytes` ends before the `data` chunk starts
 * @throws VoxpipeError `decode_failed` when the bytes are not 16-bit integer PCM WAV
 */
export function parseWavHeader(bytes: Uint8Array): WavHeader | undefined {
  const read = readWavHeader(bytes);
  if (read.status === 'invalid') throw new VoxpipeError(SinkErrorCode.decodeFailed, `invalid WAV header: ${read.reason}`);
  return read.status === 'header' ? read.header : undefined;
}
