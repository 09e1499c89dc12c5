/**
 * The reference server's view of WAV (`protocol/wav.ts` holds the format):
 * headers as Buffers, and a lenient reader of uploaded audio that takes any
 * integer-PCM bit depth (the voice decoder reads 8 to 32 bits) and answers
 * undefined, not an error, for anything else.
 */
import type { PcmInfo } from '../../protocol/audio.js';
import { buildWavHeader, scanWav, WAV_UNKNOWN_SIZE, WAVE_FORMAT_PCM } from '../../protocol/wav.js';

export { WAV_HEADER_BYTES } from '../../protocol/wav.js';
/** RIFF and data size of a stream whose length is unknown. */
export const WAV_STREAMING_SIZE = WAV_UNKNOWN_SIZE;

/**
 * A 44-byte WAV header. With `dataBytes` the RIFF and data sizes are exact;
 * without it both are 0xFFFFFFFF (streaming, length unknown).
 */
export function wavHeader(info: PcmInfo, dataBytes?: number): Buffer {
  const header = buildWavHeader(info, dataBytes);
  return Buffer.from(header.buffer, header.byteOffset, header.byteLength);
}

/** What `parseWavHeader` found. */
export interface ParsedWavHeader {
  info: PcmInfo;
  /** Offset of the first sample byte. */
  dataOffset: number;
  /** Size of the data chunk; undefined for a streaming header. */
  dataBytes: number | undefined;
}

/** An integer-PCM WAV header at the start of `buf`, or undefined (incomplete, not WAV, not integer PCM). */
export function parseWavHeader(buf: Uint8Array): ParsedWavHeader | undefined {
  const scan = scanWav(buf);
  if (scan.status !== 'header' || !scan.fmt || scan.fmt.format !== WAVE_FORMAT_PCM) return undefined;
  const { channels, sampleRate, bitDepth } = scan.fmt;
  return { info: { channels, sampleRate, bitDepth }, dataOffset: scan.dataOffset, dataBytes: scan.dataBytes };
}
