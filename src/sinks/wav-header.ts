/**
 * The canonical 44-byte WAV header (RIFF, `fmt ` chunk for integer PCM,
 * `data` chunk) and a parser for the headers voxpipe reads: the streaming
 * header of the `wav` format (sizes 0xFFFFFFFF) and ordinary files, whose
 * extra chunks (LIST, fact, ...) before `data` are skipped. Pure functions.
 */
import { VoxpipeError } from '../errors.js';
import { frameBytes, type PcmInfo } from '../protocol/audio.js';
import { SinkErrorCode } from './types.js';

/** Bytes in the canonical header this module writes. */
export const WAV_HEADER_BYTES = 44;
/** The size a streaming header puts in its RIFF and data fields: length unknown. */
export const WAV_UNKNOWN_SIZE = 0xffff_ffff;
/** RIFF sizes are 32-bit; longer audio gets a saturated size. */
const MAX_RIFF_SIZE = 0xffff_ffff;
/** A header that needs more than this before its `data` chunk is not one we accept. */
export const WAV_MAX_HEADER_BYTES = 1024 * 1024;

const FORMAT_PCM = 1;
const FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Build a 44-byte header for `dataBytes` of PCM.
 * @param dataBytes length of the data chunk; `WAV_UNKNOWN_SIZE` for a streaming header
 */
export function buildWavHeader(pcm: PcmInfo, dataBytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  const streaming = dataBytes === WAV_UNKNOWN_SIZE;
  const riffSize = streaming ? WAV_UNKNOWN_SIZE : Math.min(MAX_RIFF_SIZE, 36 + dataBytes + (dataBytes % 2));
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(riffSize, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(FORMAT_PCM, 20);
  header.writeUInt16LE(pcm.channels, 22);
  header.writeUInt32LE(pcm.sampleRate, 24);
  header.writeUInt32LE(pcm.sampleRate * frameBytes(pcm), 28);
  header.writeUInt16LE(frameBytes(pcm), 32);
  header.writeUInt16LE(pcm.bitDepth, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(Math.min(MAX_RIFF_SIZE, dataBytes), 40);
  return header;
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
export function parseWavHeader(bytes: Buffer): WavHeader | undefined {
  if (bytes.length >= 4 && bytes.toString('ascii', 0, 4) !== 'RIFF') throw invalid('missing RIFF');
  if (bytes.length >= 12 && bytes.toString('ascii', 8, 12) !== 'WAVE') throw invalid('missing WAVE');
  let pcm: PcmInfo | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'data') {
      if (!pcm) throw invalid('data chunk before fmt chunk');
      // Streaming writers put 0xFFFFFFFF (voxpipe) or 0 (others) while the length is unknown.
      const unknown = size === WAV_UNKNOWN_SIZE || size === 0;
      return { pcm, dataOffset: body, dataBytes: unknown ? undefined : size };
    }
    if (id === 'fmt ') {
      if (size < 16) throw invalid(`fmt chunk of ${size} bytes`);
      if (bytes.length < body + size) return undefined;
      pcm = parseFmt(bytes, body, size);
    }
    // Chunks are word-aligned: an odd size is followed by a pad byte.
    offset = body + size + (size % 2);
  }
  if (bytes.length > WAV_MAX_HEADER_BYTES) throw invalid(`no data chunk in the first ${WAV_MAX_HEADER_BYTES} bytes`);
  return undefined;
}

function parseFmt(bytes: Buffer, body: number, size: number): PcmInfo {
  let format = bytes.readUInt16LE(body);
  const channels = bytes.readUInt16LE(body + 2);
  const sampleRate = bytes.readUInt32LE(body + 4);
  const bitDepth = bytes.readUInt16LE(body + 14);
  // WAVE_FORMAT_EXTENSIBLE carries the real format in the first two bytes of its sub-format GUID.
  if (format === FORMAT_EXTENSIBLE && size >= 26) format = bytes.readUInt16LE(body + 24);
  if (format !== FORMAT_PCM) throw invalid(`format tag ${format} is not integer PCM`);
  if (bitDepth !== 16) throw invalid(`${bitDepth}-bit samples are not supported (16-bit only)`);
  if (channels < 1 || sampleRate < 1) throw invalid(`${channels} channels at ${sampleRate} Hz`);
  return { sampleRate, channels, bitDepth };
}
