/**
 * RIFF/WAVE headers for 16-bit PCM: the 44-byte canonical header, written
 * with exact sizes for whole files or with 0xFFFFFFFF sizes for streams
 * (the wire convention of `src/protocol/audio.ts`), and a parser that reads
 * any chunk layout (ffmpeg and sox add LIST and fact chunks).
 */
import type { PcmInfo } from '../../protocol/audio.js';

/** Bytes of the canonical header `wavHeader` writes. */
export const WAV_HEADER_BYTES = 44;
/** RIFF and data size of a stream whose length is unknown. */
export const WAV_STREAMING_SIZE = 0xffff_ffff;
const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * A 44-byte WAV header. With `dataBytes` the RIFF and data sizes are exact;
 * without it both are 0xFFFFFFFF (streaming, length unknown).
 */
export function wavHeader(info: PcmInfo, dataBytes?: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  const blockAlign = (info.bitDepth / 8) * info.channels;
  const streaming = dataBytes === undefined;
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(streaming ? WAV_STREAMING_SIZE : Math.min(WAV_STREAMING_SIZE, 36 + dataBytes), 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size for plain PCM
  header.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  header.writeUInt16LE(info.channels, 22);
  header.writeUInt32LE(info.sampleRate, 24);
  header.writeUInt32LE(info.sampleRate * blockAlign, 28); // byte rate
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(info.bitDepth, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(streaming ? WAV_STREAMING_SIZE : Math.min(WAV_STREAMING_SIZE, dataBytes), 40);
  return header;
}

/** What `parseWavHeader` found. */
export interface ParsedWavHeader {
  info: PcmInfo;
  /** Offset of the first sample byte. */
  dataOffset: number;
  /** Size of the data chunk; undefined for a streaming header (0xFFFFFFFF) . */
  dataBytes: number | undefined;
}

/**
 * Parses a PCM WAV header, walking the chunks up to `data`. Returns undefined
 * when `buf` does not hold a complete PCM WAV header (too short, not RIFF/WAVE,
 * not integer PCM).
 */
export function parseWavHeader(buf: Buffer): ParsedWavHeader | undefined {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let offset = 12;
  let info: PcmInfo | undefined;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (body + 16 > buf.length) return undefined;
      const format = buf.readUInt16LE(body);
      if (format !== WAVE_FORMAT_PCM && format !== WAVE_FORMAT_EXTENSIBLE) return undefined;
      info = { channels: buf.readUInt16LE(body + 2), sampleRate: buf.readUInt32LE(body + 4), bitDepth: buf.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (info === undefined) return undefined;
      return { info, dataOffset: body, dataBytes: size === WAV_STREAMING_SIZE ? undefined : size };
    }
    if (size === WAV_STREAMING_SIZE) return undefined; // only data may be open-ended
    offset = body + size + (size % 2); // chunks are word-aligned
  }
  return undefined;
}
