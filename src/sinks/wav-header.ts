/**
 * The sinks' view of WAV (`protocol/wav.ts` holds the format): the header as
 * a Buffer, and a parser that says `decode_failed` for anything that is not
 * 16-bit integer PCM.
 */
import { VoxpipeError } from '../errors.js';
import type { PcmInfo } from '../protocol/audio.js';
import { buildWavHeader as buildHeader, scanWav, unsupportedFmt } from '../protocol/wav.js';
import { SinkErrorCode } from './types.js';

export { WAV_HEADER_BYTES, WAV_MAX_HEADER_BYTES, WAV_UNKNOWN_SIZE } from '../protocol/wav.js';

/**
 * Build a 44-byte header for `dataBytes` of PCM.
 * @param dataBytes length of the data chunk; `WAV_UNKNOWN_SIZE` for a streaming header
 */
export function buildWavHeader(pcm: PcmInfo, dataBytes: number): Buffer {
  const header = buildHeader(pcm, dataBytes);
  return Buffer.from(header.buffer, header.byteOffset, header.byteLength);
}

/** A parsed header: where the samples start and how many bytes of them there are. */
export interface WavHeader {
  pcm: PcmInfo;
  /** Offset of the first sample byte. */
  dataOffset: number;
  /** Length of the data chunk, or undefined when the header says unknown (streaming). */
  dataBytes: number | undefined;
}

function invalid(message: string): VoxpipeError {
  return new VoxpipeError(SinkErrorCode.decodeFailed, `invalid WAV header: ${message}`);
}

/**
 * Parse a WAV header from the first bytes of a stream.
 * @returns the header, or undefined when `bytes` ends before the `data` chunk starts
 * @throws VoxpipeError `decode_failed` when the bytes are not 16-bit integer PCM WAV
 */
export function parseWavHeader(bytes: Uint8Array): WavHeader | undefined {
  const scan = scanWav(bytes);
  if (scan.status === 'incomplete') return undefined;
  if (scan.status === 'invalid') throw invalid(scan.reason);
  const problem = unsupportedFmt(scan.fmt);
  if (problem !== undefined || !scan.fmt) throw invalid(problem ?? 'no fmt chunk');
  const { sampleRate, channels, bitDepth } = scan.fmt;
  return { pcm: { sampleRate, channels, bitDepth }, dataOffset: scan.dataOffset, dataBytes: scan.dataBytes };
}
