/**
 * WAV, once for the whole tree: the 44-byte canonical header voxpipe writes
 * (integer PCM; exact sizes for files, 0xFFFFFFFF for streams, the wire
 * convention of the `wav` format) and one walker over RIFF chunks that the
 * client's sinks, the reliable machine (dropping the header of a resumed
 * request's later frames) and the reference server (reading uploaded audio)
 * all use. Pure functions over `Uint8Array`: no Node APIs, so the machine
 * and the browser build can use it.
 */
import type { PcmInfo } from './audio.js';

/** Bytes in the canonical header `buildWavHeader` writes. */
export const WAV_HEADER_BYTES = 44;
/** RIFF and data size of a stream whose length is unknown. */
export const WAV_UNKNOWN_SIZE = 0xffff_ffff;
/** A header that needs more than this before its `data` chunk is not one we accept. */
export const WAV_MAX_HEADER_BYTES = 1024 * 1024;

export const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** RIFF id, size, WAVE id. */
const RIFF_PREAMBLE_BYTES = 12;
/** Chunk id and size. */
const CHUNK_HEADER_BYTES = 8;

function tag(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A 44-byte header for `dataBytes` of PCM; `undefined` or `WAV_UNKNOWN_SIZE`
 * gives a streaming header. The RIFF size counts the data chunk's pad byte
 * when its length is odd; sizes past 32 bits saturate.
 */
export function buildWavHeader(pcm: PcmInfo, dataBytes: number = WAV_UNKNOWN_SIZE): Uint8Array {
  const header = new Uint8Array(WAV_HEADER_BYTES);
  const v = view(header);
  const streaming = dataBytes === WAV_UNKNOWN_SIZE;
  const blockAlign = (pcm.bitDepth / 8) * pcm.channels;
  const ascii = (text: string, at: number) => {
    for (let i = 0; i < text.length; i++) header[at + i] = text.charCodeAt(i);
  };
  ascii('RIFF', 0);
  v.setUint32(4, streaming ? WAV_UNKNOWN_SIZE : Math.min(WAV_UNKNOWN_SIZE, 36 + dataBytes + (dataBytes % 2)), true);
  ascii('WAVE', 8);
  ascii('fmt ', 12);
  v.setUint32(16, 16, true); // fmt chunk of plain PCM
  v.setUint16(20, WAVE_FORMAT_PCM, true);
  v.setUint16(22, pcm.channels, true);
  v.setUint32(24, pcm.sampleRate, true);
  v.setUint32(28, pcm.sampleRate * blockAlign, true); // byte rate
  v.setUint16(32, blockAlign, true);
  v.setUint16(34, pcm.bitDepth, true);
  ascii('data', 36);
  v.setUint32(40, Math.min(WAV_UNKNOWN_SIZE, dataBytes), true);
  return header;
}

/** The `fmt ` chunk as written, before anyone judges it. */
export interface WavFmt {
  /** Format tag (1 integer PCM; the sub-format's for WAVE_FORMAT_EXTENSIBLE). */
  format: number;
  channels: number;
  sampleRate: number;
  bitDepth: number;
}

export type WavScan =
  /** `bytes` ends before the `data` chunk starts: read more. */
  | { status: 'incomplete' }
  /** Not a RIFF/WAVE stream, or one no reader should accept. */
  | { status: 'invalid'; reason: string }
  | {
      status: 'header';
      /** Offset of the first sample byte: the header's length. */
      dataOffset: number;
      /** The data chunk's size; undefined when the header says unknown (0xFFFFFFFF, or 0 as other streaming writers put). */
      dataBytes: number | undefined;
      /** The `fmt ` chunk; undefined when `data` came first. */
      fmt: WavFmt | undefined;
    };

/**
 * Walks the chunks of a WAV stream's first bytes up to `data` (so files with
 * LIST, fact or other chunks work as well as the 44-byte header).
 */
export function scanWav(bytes: Uint8Array): WavScan {
  if (bytes.byteLength >= 4 && tag(bytes, 0) !== 'RIFF') return { status: 'invalid', reason: 'missing RIFF' };
  if (bytes.byteLength >= 12 && tag(bytes, 8) !== 'WAVE') return { status: 'invalid', reason: 'missing WAVE' };
  const v = view(bytes);
  let fmt: WavFmt | undefined;
  let at = RIFF_PREAMBLE_BYTES;
  while (at + CHUNK_HEADER_BYTES <= bytes.byteLength) {
    const id = tag(bytes, at);
    const size = v.getUint32(at + 4, true);
    const body = at + CHUNK_HEADER_BYTES;
    if (id === 'data') {
      const unknown = size === WAV_UNKNOWN_SIZE || size === 0;
      return { status: 'header', dataOffset: body, dataBytes: unknown ? undefined : size, fmt };
    }
    if (id === 'fmt ') {
      if (size < 16) return { status: 'invalid', reason: `fmt chunk of ${size} bytes` };
      if (bytes.byteLength < body + size) return { status: 'incomplete' };
      let format = v.getUint16(body, true);
      // WAVE_FORMAT_EXTENSIBLE carries the real format in the first two bytes of its sub-format GUID.
      if (format === WAVE_FORMAT_EXTENSIBLE && size >= 26) format = v.getUint16(body + 24, true);
      fmt = { format, channels: v.getUint16(body + 2, true), sampleRate: v.getUint32(body + 4, true), bitDepth: v.getUint16(body + 14, true) };
    }
    // Chunks are word-aligned: an odd size is followed by a pad byte.
    at = body + size + (size % 2);
    if (at > WAV_MAX_HEADER_BYTES) return { status: 'invalid', reason: `no data chunk in the first ${WAV_MAX_HEADER_BYTES} bytes` };
  }
  if (bytes.byteLength > WAV_MAX_HEADER_BYTES) return { status: 'invalid', reason: `no data chunk in the first ${WAV_MAX_HEADER_BYTES} bytes` };
  return { status: 'incomplete' };
}

/**
 * Why `fmt` is not the 16-bit integer PCM voxpipe reads (integer PCM of any
 * depth with `anyBitDepth`), or undefined when it is.
 */
export function unsupportedFmt(fmt: WavFmt | undefined, anyBitDepth = false): string | undefined {
  if (!fmt) return 'data chunk before fmt chunk';
  if (fmt.format !== WAVE_FORMAT_PCM) return `format tag ${fmt.format} is not integer PCM`;
  if (!anyBitDepth && fmt.bitDepth !== 16) return `${fmt.bitDepth}-bit samples are not supported (16-bit only)`;
  if (fmt.channels < 1 || fmt.sampleRate < 1) return `${fmt.channels} channels at ${fmt.sampleRate} Hz`;
  return undefined;
}

/** A WAV header read up to its `data` chunk. */
export interface WavHeader {
  pcm: PcmInfo;
  /** Offset of the first sample byte. */
  dataOffset: number;
  /** Length of the data chunk, or undefined when the header says unknown (streaming). */
  dataBytes: number | undefined;
}

export type WavRead = { status: 'incomplete' } | { status: 'invalid'; reason: string } | { status: 'header'; header: WavHeader };

/**
 * The one reader of a WAV header into a layout: `scanWav`, judged. By
 * default only the 16-bit integer PCM voxpipe plays is a header;
 * `anyBitDepth` takes integer PCM of any depth (the reference server's voice
 * decoder reads 8 to 32 bits). Callers turn `invalid` into their own error.
 */
export function readWavHeader(bytes: Uint8Array, options: { anyBitDepth?: boolean } = {}): WavRead {
  const scan = scanWav(bytes);
  if (scan.status !== 'header') return scan;
  const fmt = scan.fmt;
  const problem = unsupportedFmt(fmt, options.anyBitDepth);
  if (problem !== undefined || !fmt) return { status: 'invalid', reason: problem ?? 'no fmt chunk' };
  const { sampleRate, channels, bitDepth } = fmt;
  return { status: 'header', header: { pcm: { sampleRate, channels, bitDepth }, dataOffset: scan.dataOffset, dataBytes: scan.dataBytes } };
}

/**
 * Length of the WAV header when `bytes` starts with a whole one, else
 * undefined: how many bytes a resumed request's later frame must drop.
 */
export function wavHeaderLength(bytes: Uint8Array): number | undefined {
  const scan = scanWav(bytes);
  return scan.status === 'header' ? scan.dataOffset : undefined;
}
