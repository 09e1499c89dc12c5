/**
 * From whole audio files (what the HTTP routes return, one per segment) to
 * the stream's audio, as the realtime wire conventions of
 * `protocol/audio.ts` define it:
 * - `pcm`: raw samples, signed 16-bit little-endian; a WAV response loses
 *   its header, a raw response is taken as its parameters say (layout from
 *   `x-svc-*` headers or Content-Type parameters under the names media
 *   stacks use, e.g. `audio/L16;rate=…` or GStreamer's `audio/x-raw,
 *   format=S16LE, rate=…`; other sample formats converted), else the
 *   configured default;
 * - what a file is comes from its first bytes (RIFF, ID3 or MPEG, Ogg)
 *   before its label: a label the client does not know on bytes that are
 *   what was asked for is a warning (`warning`), never a refusal, so no
 *   charged audio is thrown away for a label;
 * - `wav`: ONE streaming header (sizes 0xFFFFFFFF) before the first audio of
 *   the stream, then raw PCM: every file's own header, with its real sizes,
 *   is stripped;
 * - `mp3`: frames; ID3 tags of later segments are dropped (they would sit in
 *   the middle of the stream);
 * - `opus`: each file is passed through (a chained Ogg stream).
 * Pure: no I/O.
 */
import { VoxpipeError } from '../../errors.js';
import { frameBytes, type AudioFormat, type PcmInfo } from '../../protocol/audio.js';
import { buildWavHeader, readWavHeader, scanWav } from '../../protocol/wav.js';
import { id3v2Length, mp3Layout, OPUS_DECODE_RATE, opusLayout, sniffContainer, type EncodedLayout } from '../../protocol/audio-probe.js';
import { isRawPcmType, parseMediaType, rawPcmTypeOf, S16LE, toS16LE, type RawSampleFormat } from '../../protocol/media-type.js';

export { HttpAudioErrorCode } from '../../protocol/codes.js';
import { HttpAudioErrorCode } from '../../protocol/codes.js';
import { HEADERS } from '../../protocol/rest.js';

/** One whole file as a route returned it. */
export interface AudioFile {
  data: Buffer;
  contentType: string;
  headers?: Headers | undefined;
}

/** The stream bytes of one segment and their layout. */
export interface ConvertedAudio {
  data: Buffer;
  pcm: PcmInfo;
  /** Bytes of `data` that are the stream's header (the first segment of a `wav` stream), not the segment's audio. */
  headerBytes: number;
  /** Audio bytes the file says it carries (a WAV `data` chunk's size, whole sample frames), when it says. */
  declaredBytes?: number;
  /** Said once per kind by the transport: the file's label is one the client does not know, its bytes were taken as asked. */
  warning?: string;
}

function mime(contentType: string): string {
  return parseMediaType(contentType).type;
}

const WAV_TYPES: ReadonlySet<string> = new Set(['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave']);
const MP3_TYPES: ReadonlySet<string> = new Set(['audio/mpeg', 'audio/mp3', 'audio/x-mpeg', 'audio/mpeg3', 'audio/x-mp3', 'audio/mpa']);
const OGG_TYPES: ReadonlySet<string> = new Set(['audio/ogg', 'audio/opus', 'application/ogg', 'audio/x-opus', 'audio/x-ogg']);
/** Labels that say "bytes" and nothing of what they are: no warning, the bytes decide. */
const OPAQUE_TYPES: ReadonlySet<string> = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/binary']);

/** What a file is: its signature first (RIFF, Ogg, ID3, an MPEG frame unless labelled raw PCM), then its label. */
function kindOf(file: AudioFile): 'wav' | 'mp3' | 'ogg' | 'raw' | 'unknown' {
  const type = parseMediaType(file.contentType);
  const sniffed = sniffContainer(file.data, !isRawPcmType(type));
  if (sniffed !== undefined) return sniffed;
  if (WAV_TYPES.has(type.type)) return 'wav';
  if (MP3_TYPES.has(type.type)) return 'mp3';
  if (OGG_TYPES.has(type.type)) return 'ogg';
  if (isRawPcmType(type) || OPAQUE_TYPES.has(type.type)) return 'raw';
  return 'unknown';
}

function isWavFile(file: AudioFile): boolean {
  return kindOf(file) === 'wav';
}

/** The warning of a label the client does not know on bytes that are what was asked for. */
function unknownLabel(file: AudioFile, taken: string): string | undefined {
  const type = mime(file.contentType);
  if (OPAQUE_TYPES.has(type) || isRawPcmType(parseMediaType(file.contentType)) || WAV_TYPES.has(type) || MP3_TYPES.has(type) || OGG_TYPES.has(type)) return undefined;
  return `audio labelled ${JSON.stringify(file.contentType.slice(0, 80))}, a type the client does not know; its bytes are ${taken}, as asked`;
}

function headerInt(headers: Headers | undefined, name: string): number | undefined {
  const v = headers?.get(name);
  return v && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}

/** How the samples of a raw PCM response are stored: its Content-Type's word, else the `x-svc-bit-depth` header's, else ours (S16LE). */
function rawSampleOf(file: AudioFile): RawSampleFormat {
  const stated = rawPcmTypeOf(parseMediaType(file.contentType)).sample;
  if (stated) return stated;
  const bits = headerInt(file.headers, HEADERS.bitDepth);
  if (bits === 8) return { bits, kind: 'unsigned', bigEndian: false };
  if (bits === 24 || bits === 32) return { bits, kind: 'signed', bigEndian: false };
  return S16LE;
}

/**
 * Layout of a raw PCM response as the stream carries it (16-bit): rate and
 * channels from the `x-svc-*` headers, else the Content-Type's parameters
 * (under the names common media stacks use: `protocol/media-type.ts`), else
 * `fallback`.
 */
export function rawPcmLayout(file: AudioFile, fallback: PcmInfo): PcmInfo {
  const stated = rawPcmTypeOf(parseMediaType(file.contentType));
  return {
    sampleRate: headerInt(file.headers, HEADERS.sampleRate) ?? stated.sampleRate ?? fallback.sampleRate,
    channels: headerInt(file.headers, HEADERS.channels) ?? stated.channels ?? fallback.channels,
    bitDepth: 16,
  };
}

/**
 * What a whole file says it carries and what of it came, when it says and
 * came short: a WAV `data` chunk's size against the bytes after it, else
 * the Content-Length of an identity body (a compressed one states the
 * compressed size) against the body. Undefined when the file is whole or
 * states nothing.
 */
export function fileShortfall(file: AudioFile): { stated: number; received: number } | undefined {
  if (isWavFile(file)) {
    const header = scanWav(file.data);
    if (header.status === 'header' && header.dataBytes !== undefined) {
      const received = file.data.length - header.dataOffset;
      if (received < header.dataBytes) return { stated: header.dataBytes, received };
    }
  }
  const encoding = file.headers?.get('content-encoding')?.trim().toLowerCase();
  const length = encoding === undefined || encoding === '' || encoding === 'identity' ? headerInt(file.headers, 'content-length') : undefined;
  if (length !== undefined && file.data.length < length) return { stated: length, received: file.data.length };
  return undefined;
}

/** A layout the file's own header announces (`protocol/audio-probe.ts`), as 16-bit PCM. */
function decodedAs(layout: EncodedLayout | undefined): PcmInfo | undefined {
  return layout && { ...layout, bitDepth: 16 };
}

function samePcm(a: PcmInfo, b: PcmInfo): boolean {
  return a.sampleRate === b.sampleRate && a.channels === b.channels && a.bitDepth === b.bitDepth;
}

export interface AssemblerOptions {
  /** Put the streaming WAV header before the first audio (format `wav`); false when continuing a stream that has one (failover). Default true. */
  wavHeader?: boolean;
  /** Layout assumed for raw PCM without metadata, and for compressed audio without a readable header. */
  fallbackPcm: PcmInfo;
}

/**
 * Converts the files of consecutive segments of one stream. Keeps the state
 * the conventions need: whether the WAV header went out, the stream's PCM
 * layout, whether a segment came before (ID3 tags).
 */
export class SegmentAudioAssembler {
  readonly format: AudioFormat;
  #headerPending: boolean;
  #pcm: PcmInfo | undefined;
  #segments = 0;
  readonly #fallback: PcmInfo;

  constructor(format: AudioFormat, options: AssemblerOptions) {
    this.format = format;
    this.#headerPending = format === 'wav' && (options.wavHeader ?? true);
    this.#fallback = options.fallbackPcm;
  }

  /** PCM layout of the stream, once a segment was converted. */
  get pcm(): PcmInfo | undefined {
    return this.#pcm;
  }

  /** Whether converting `file` states the audio bytes it carries (`declaredBytes`: a WAV file with a `data` size, for a pcm or wav stream). */
  declares(file: AudioFile): boolean {
    if ((this.format !== 'pcm' && this.format !== 'wav') || !isWavFile(file)) return false;
    const header = scanWav(file.data);
    return header.status === 'header' && header.dataBytes !== undefined;
  }

  /** The stream bytes of the next segment. */
  convert(file: AudioFile): ConvertedAudio {
    const first = this.#segments++ === 0;
    switch (this.format) {
      case 'pcm':
      case 'wav':
        return this.#toPcmStream(file);
      case 'mp3':
        return this.#toMp3Stream(file, first);
      case 'opus':
        return this.#toOpusStream(file);
    }
  }

  #toPcmStream(file: AudioFile): ConvertedAudio {
    let pcm: PcmInfo;
    let samples: Buffer;
    let declared: number | undefined;
    let warning: string | undefined;
    const kind = kindOf(file);
    if (kind === 'wav') {
      const read = readWavHeader(file.data);
      if (read.status === 'incomplete') throw new VoxpipeError(HttpAudioErrorCode.unexpectedFormat, 'WAV response ends inside its header');
      if (read.status === 'invalid') throw new VoxpipeError(HttpAudioErrorCode.unexpectedFormat, `WAV response is not 16-bit PCM: ${read.reason}`);
      const header = read.header;
      pcm = header.pcm;
      if (header.dataBytes !== undefined) declared = header.dataBytes - (header.dataBytes % frameBytes(pcm));
      const end = header.dataBytes === undefined ? file.data.length : Math.min(file.data.length, header.dataOffset + header.dataBytes);
      samples = file.data.subarray(header.dataOffset, end);
      warning = unknownLabel(file, 'a WAV file');
    } else if (kind === 'raw' || kind === 'unknown') {
      // No signature of a container: the raw samples asked for, whatever the label says.
      pcm = rawPcmLayout(file, this.#fallback);
      samples = toS16LE(file.data, rawSampleOf(file));
      if (kind === 'unknown') warning = unknownLabel(file, 'taken as raw PCM');
    } else {
      throw new VoxpipeError(HttpAudioErrorCode.unexpectedFormat, `expected WAV or raw PCM for a ${this.format} stream, got ${kind} (${file.contentType || 'no Content-Type'})`);
    }
    // Whole sample frames only: a trailing odd byte would shift every later sample.
    samples = samples.subarray(0, samples.length - (samples.length % frameBytes(pcm)));
    this.#checkLayout(pcm);
    let headerBytes = 0;
    if (this.#headerPending) {
      this.#headerPending = false;
      const header = buildWavHeader(pcm);
      headerBytes = header.length;
      samples = Buffer.concat([header, samples]);
    }
    return { data: samples, pcm, headerBytes, ...(declared !== undefined && { declaredBytes: declared }), ...(warning !== undefined && { warning }) };
  }

  #toMp3Stream(file: AudioFile, first: boolean): ConvertedAudio {
    const kind = kindOf(file);
    if (kind !== 'mp3' && mp3Layout(file.data) === undefined) {
      throw new VoxpipeError(HttpAudioErrorCode.unexpectedFormat, `expected mp3, got ${kind === 'unknown' || kind === 'raw' ? (file.contentType || 'no Content-Type') : kind}`);
    }
    let data = first ? file.data : file.data.subarray(id3v2Length(file.data));
    // An ID3v1 tag (last 128 bytes, "TAG") would also land mid-stream.
    if (data.length >= 128 && data.toString('latin1', data.length - 128, data.length - 125) === 'TAG') data = data.subarray(0, data.length - 128);
    const pcm = decodedAs(mp3Layout(file.data)) ?? this.#pcm ?? this.#fallback;
    this.#pcm ??= pcm;
    const warning = unknownLabel(file, 'mp3');
    return { data, pcm, headerBytes: 0, ...(warning !== undefined && { warning }) };
  }

  #toOpusStream(file: AudioFile): ConvertedAudio {
    if (file.data.length >= 4 && file.data.toString('latin1', 0, 4) !== 'OggS') {
      throw new VoxpipeError(HttpAudioErrorCode.unexpectedFormat, `expected Ogg Opus, got ${file.contentType || 'no Content-Type'}`);
    }
    const pcm = decodedAs(opusLayout(file.data)) ?? this.#pcm ?? { ...this.#fallback, sampleRate: OPUS_DECODE_RATE };
    this.#pcm ??= pcm;
    const warning = unknownLabel(file, 'Ogg');
    return { data: file.data, pcm, headerBytes: 0, ...(warning !== undefined && { warning }) };
  }

  #checkLayout(pcm: PcmInfo): void {
    if (this.#pcm === undefined) {
      this.#pcm = pcm;
      return;
    }
    if (!samePcm(this.#pcm, pcm)) {
      throw new VoxpipeError(HttpAudioErrorCode.layoutChanged, `segment audio is ${pcm.sampleRate} Hz x${pcm.channels}, the stream is ${this.#pcm.sampleRate} Hz x${this.#pcm.channels}`);
    }
  }
}

/** Split `data` into chunks of at most `maxBytes`, cut on whole sample frames for PCM. */
export function splitChunks(data: Buffer, maxBytes: number, frame: number): Buffer[] {
  const step = Math.max(frame, maxBytes - (maxBytes % frame));
  const out: Buffer[] = [];
  for (let off = 0; off < data.length; off += step) out.push(data.subarray(off, off + step));
  return out;
}
