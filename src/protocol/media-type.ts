/**
 * Content-Types as types with parameters, and raw PCM as its parameters
 * describe it. Media stacks label raw PCM in several ways, none of which the
 * spec fixes (4.2: "Content-Type for wav and pcm: not shown"):
 *
 * - RFC 2586 / RFC 3551: `audio/L16;rate=24000;channels=1` (16-bit signed,
 *   network byte order: big-endian), also `audio/L8`, `audio/L24`;
 * - GStreamer caps: `audio/x-raw, format=S16LE, rate=24000, channels=1,
 *   layout=interleaved` (parameters after commas, values possibly typed as
 *   `rate=(int)24000`); its older `audio/x-raw-int, width=16, depth=16,
 *   endianness=1234, signed=true`;
 * - others: `audio/pcm`, `audio/raw` with `rate`, `sample_rate`,
 *   `channels`, `bits`, `bit_depth`, `encoding=signed-integer`,
 *   `endianness=little`.
 *
 * Pure; the HTTP transports (`stream/transports/http-audio.ts`) use it.
 */

/** A parsed Content-Type: the lower-case `type/subtype` and its parameters by lower-case name. */
export interface MediaType {
  type: string;
  params: ReadonlyMap<string, string>;
}

/** Parse a Content-Type; parameters may follow `;` or `,` (GStreamer caps), values may be quoted or typed (`(int)24000`). */
export function parseMediaType(value: string | null | undefined): MediaType {
  const parts = (value ?? '').split(/[;,]/);
  const type = (parts.shift() ?? '').trim().toLowerCase();
  const params = new Map<string, string>();
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let v = part.slice(eq + 1).trim();
    v = v.replace(/^\([a-z0-9]+\)\s*/i, ''); // GStreamer's typed value
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    if (name !== '' && !params.has(name)) params.set(name, v);
  }
  return { type, params };
}

/** How raw samples are stored. */
export interface RawSampleFormat {
  /** Bits per sample: 8, 16, 24 or 32. */
  bits: number;
  kind: 'signed' | 'unsigned' | 'float';
  bigEndian: boolean;
}

/** What a raw PCM type states; parts it does not state are absent. */
export interface RawPcmType {
  sampleRate?: number;
  channels?: number;
  sample?: RawSampleFormat;
}

/** Types that name raw PCM samples. */
const RAW_TYPES: ReadonlySet<string> = new Set(['audio/pcm', 'audio/raw', 'audio/x-raw', 'audio/x-raw-int', 'audio/x-raw-float', 'audio/l8', 'audio/l16', 'audio/l24', 'audio/x-pcm', 'audio/basic-pcm', 'audio/s16le']);

/** Whether `type` names raw PCM samples. */
export function isRawPcmType(type: MediaType): boolean {
  return RAW_TYPES.has(type.type);
}

const PARAM = {
  rate: ['rate', 'sample_rate', 'samplerate', 'sample-rate', 'sampling_rate', 'sampling-rate'],
  channels: ['channels', 'channel_count', 'channel-count', 'nchannels', 'ch'],
  bits: ['width', 'bits', 'bit_depth', 'bitdepth', 'bit-depth', 'bits_per_sample', 'sample_bits', 'sample-size', 'samplesize', 'depth'],
  encoding: ['encoding', 'sample_format', 'sample-format'],
  endianness: ['endianness', 'endian', 'byte_order', 'byte-order', 'byteorder'],
} as const;

function param(type: MediaType, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = type.params.get(n);
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

function positiveInt(v: string | undefined): number | undefined {
  if (v === undefined || !/^\d+$/.test(v.trim())) return undefined;
  const n = Number(v);
  return n > 0 ? n : undefined;
}

/** GStreamer 1.x `format` (`S16LE`, `U8`, `F32BE`, `S24_32LE` is not taken). */
function gstFormat(v: string): RawSampleFormat | undefined {
  const m = /^([SUF])(8|16|24|32|64)(LE|BE)?$/i.exec(v.trim());
  if (!m) return undefined;
  const bits = Number(m[2]);
  const kind = m[1]!.toUpperCase() === 'S' ? 'signed' : m[1]!.toUpperCase() === 'U' ? 'unsigned' : 'float';
  if (kind === 'float' ? bits !== 32 : bits > 32) return undefined;
  return { bits, kind, bigEndian: (m[3] ?? 'LE').toUpperCase() === 'BE' };
}

/**
 * What a raw PCM Content-Type states of its layout. The RFC 2586 `L8`,
 * `L16`, `L24` types are big-endian signed (8-bit: signed too) unless a
 * parameter says otherwise; other types default to little-endian signed,
 * as `audio/pcm` of this service is.
 */
export function rawPcmTypeOf(type: MediaType): RawPcmType {
  const out: RawPcmType = {};
  const rate = positiveInt(param(type, PARAM.rate));
  const channels = positiveInt(param(type, PARAM.channels));
  if (rate !== undefined) out.sampleRate = rate;
  if (channels !== undefined) out.channels = channels;
  const rfc = /^audio\/l(8|16|24)$/.exec(type.type);
  let sample: RawSampleFormat | undefined = rfc ? { bits: Number(rfc[1]), kind: 'signed', bigEndian: true } : undefined;
  const format = type.params.get('format');
  const fromFormat = format === undefined ? undefined : gstFormat(format);
  if (fromFormat) sample = fromFormat;
  const bits = positiveInt(param(type, PARAM.bits));
  const encoding = param(type, PARAM.encoding)?.toLowerCase();
  const endianness = param(type, PARAM.endianness)?.toLowerCase();
  const signed = type.params.get('signed')?.toLowerCase();
  if (!fromFormat && (bits !== undefined || encoding !== undefined || endianness !== undefined || signed !== undefined || type.type === 'audio/x-raw-float')) {
    const base: RawSampleFormat = sample ?? { bits: 16, kind: 'signed', bigEndian: false };
    const kind: RawSampleFormat['kind'] =
      type.type === 'audio/x-raw-float' || (encoding !== undefined && /float/.test(encoding))
        ? 'float'
        : encoding !== undefined && /unsigned/.test(encoding)
          ? 'unsigned'
          : signed === 'false'
            ? 'unsigned'
            : base.kind;
    const bigEndian = endianness === undefined ? base.bigEndian : endianness === 'big' || endianness === 'be' || endianness === '4321' || endianness === 'big-endian';
    const encodingBits = encoding === undefined ? undefined : positiveInt(/(\d+)/.exec(encoding)?.[1]);
    sample = { bits: bits ?? encodingBits ?? base.bits, kind, bigEndian };
  }
  if (sample && isSupportedSample(sample)) out.sample = sample;
  return out;
}

function isSupportedSample(s: RawSampleFormat): boolean {
  return s.kind === 'float' ? s.bits === 32 : s.bits === 8 || s.bits === 16 || s.bits === 24 || s.bits === 32;
}

/** The layout of this service's pcm: signed 16-bit little-endian. */
export const S16LE: RawSampleFormat = { bits: 16, kind: 'signed', bigEndian: false };

export function isS16LE(s: RawSampleFormat): boolean {
  return s.bits === 16 && s.kind === 'signed' && !s.bigEndian;
}

/**
 * `data` as signed 16-bit little-endian samples (the stream's pcm): byte
 * order swapped, wider samples rounded to their top 16 bits, 8-bit and
 * float scaled. A trailing partial sample is left out.
 */
export function toS16LE(data: Uint8Array, from: RawSampleFormat): Buffer {
  const src = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (isS16LE(from)) return src;
  const width = from.bits / 8;
  const n = Math.floor(src.length / width);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const at = i * width;
    let v: number;
    if (from.kind === 'float') {
      const f = from.bigEndian ? src.readFloatBE(at) : src.readFloatLE(at);
      v = Math.round(Math.max(-1, Math.min(1, Number.isFinite(f) ? f : 0)) * 32767);
    } else if (from.bits === 8) {
      v = from.kind === 'unsigned' ? (src[at]! - 128) << 8 : (src.readInt8(at) << 8);
    } else {
      const raw = from.bigEndian ? src.readUIntBE(at, width) : src.readUIntLE(at, width);
      const signed = from.kind === 'unsigned' ? raw - 2 ** (from.bits - 1) : raw >= 2 ** (from.bits - 1) ? raw - 2 ** from.bits : raw;
      v = Math.floor(signed / 2 ** (from.bits - 16));
    }
    out.writeInt16LE(Math.max(-32768, Math.min(32767, v)), i * 2);
  }
  return out;
}
