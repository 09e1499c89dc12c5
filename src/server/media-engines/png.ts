/**
 * A small PNG codec (node:zlib for deflate and CRC-32). The encoder writes
 * 8-bit RGB or RGBA, non-interlaced, choosing the "up" filter for every row
 * (smooth generated images compress well with it). The decoder reads what
 * generated and common images use: 8-bit greyscale, grey+alpha, RGB, RGBA
 * and palette, non-interlaced, all five row filters. Anything else is
 * refused with a `PngError` (callers fall back to ffmpeg when installed).
 */
import { crc32, deflateSync, inflateSync } from 'node:zlib';

/** The 8-byte PNG signature. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Largest width or height the codec accepts (keeps a hostile header from allocating gigabytes). */
export const PNG_MAX_SIDE = 8192;

/** A decoded or generated image: `channels` bytes per pixel, rows top to bottom. */
export interface RgbImage {
  width: number;
  height: number;
  /** 3 (RGB) or 4 (RGBA). */
  channels: 3 | 4;
  pixels: Uint8Array;
}

export class PngError extends Error {
  override name = 'PngError';
}

const COLOR_TYPE = { grey: 0, rgb: 2, palette: 3, greyAlpha: 4, rgba: 6 } as const;
const FILTER = { none: 0, sub: 1, up: 2, average: 3, paeth: 4 } as const;

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * Encode an image as PNG. `pixels` holds `width * height * channels` bytes.
 * @param textChunks optional `tEXt` entries (keyword to Latin-1 text), e.g. the prompt
 */
export function encodePng(image: RgbImage, textChunks: Record<string, string> = {}): Buffer {
  const { width, height, channels, pixels } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > PNG_MAX_SIDE || height > PNG_MAX_SIDE) {
    throw new PngError(`invalid size ${width}x${height}`);
  }
  const stride = width * channels;
  if (pixels.length !== stride * height) throw new PngError(`expected ${stride * height} bytes of pixels, got ${pixels.length}`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = channels === 4 ? COLOR_TYPE.rgba : COLOR_TYPE.rgb;
  // compression 0, filter method 0, interlace 0: already zero
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const out = y * (stride + 1);
    const row = y * stride;
    raw[out] = FILTER.up;
    for (let x = 0; x < stride; x++) {
      const above = y === 0 ? 0 : pixels[row - stride + x]!;
      raw[out + 1 + x] = (pixels[row + x]! - above) & 0xff;
    }
  }
  const texts = Object.entries(textChunks).map(([key, value]) => chunk('tEXt', Buffer.from(`${key}\u0000${value}`, 'latin1')));
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), ...texts, chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

/** Whether `data` starts with the PNG signature. */
export function isPng(data: Uint8Array): boolean {
  return data.length >= 8 && Buffer.from(data.buffer, data.byteOffset, 8).equals(PNG_SIGNATURE);
}

/**
 * Decode a PNG into RGB (or RGBA when it has alpha), verifying every chunk's
 * CRC. Throws PngError for damaged files and unsupported variants.
 */
export function decodePng(data: Buffer): RgbImage {
  if (!isPng(data)) throw new PngError('not a PNG file');
  let offset = 8;
  let width = 0;
  let height = 0;
  let colorType = -1;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const idat: Buffer[] = [];
  let ended = false;
  while (offset + 12 <= data.length && !ended) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('ascii', offset + 4, offset + 8);
    const end = offset + 12 + length;
    if (end > data.length) throw new PngError(`truncated ${type} chunk`);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (crc32(body, crc32(data.subarray(offset + 4, offset + 8))) !== data.readUInt32BE(offset + 8 + length)) throw new PngError(`bad CRC in ${type} chunk`);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const bitDepth = body[8];
      colorType = body[9]!;
      if (bitDepth !== 8) throw new PngError(`bit depth ${bitDepth} is not supported`);
      if (body[12] !== 0) throw new PngError('interlaced PNG is not supported');
      if (width < 1 || height < 1 || width > PNG_MAX_SIDE || height > PNG_MAX_SIDE) throw new PngError(`unsupported size ${width}x${height}`);
    } else if (type === 'PLTE') palette = body;
    else if (type === 'tRNS') transparency = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') ended = true;
    offset = end;
  }
  if (colorType < 0) throw new PngError('missing IHDR chunk');
  if (!ended || idat.length === 0) throw new PngError('missing image data');
  const inChannels = ({ [COLOR_TYPE.grey]: 1, [COLOR_TYPE.rgb]: 3, [COLOR_TYPE.palette]: 1, [COLOR_TYPE.greyAlpha]: 2, [COLOR_TYPE.rgba]: 4 } as Record<number, number>)[colorType];
  if (inChannels === undefined) throw new PngError(`color type ${colorType} is not supported`);
  if (colorType === COLOR_TYPE.palette && !palette) throw new PngError('palette image without PLTE');
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat));
  } catch (err) {
    throw new PngError(`image data does not inflate: ${(err as Error).message}`);
  }
  const stride = width * inChannels;
  if (raw.length < (stride + 1) * height) throw new PngError('image data is too short');
  const unfiltered = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= inChannels ? unfiltered[dst + x - inChannels]! : 0;
      const b = y > 0 ? unfiltered[dst - stride + x]! : 0;
      const c = x >= inChannels && y > 0 ? unfiltered[dst - stride + x - inChannels]! : 0;
      const v = raw[src + x]!;
      let out: number;
      switch (filter) {
        case FILTER.none: out = v; break;
        case FILTER.sub: out = v + a; break;
        case FILTER.up: out = v + b; break;
        case FILTER.average: out = v + ((a + b) >> 1); break;
        case FILTER.paeth: out = v + paeth(a, b, c); break;
        default: throw new PngError(`unknown row filter ${filter}`);
      }
      unfiltered[dst + x] = out & 0xff;
    }
  }
  const hasAlpha = colorType === COLOR_TYPE.rgba || colorType === COLOR_TYPE.greyAlpha || (colorType === COLOR_TYPE.palette && transparency !== undefined);
  const channels: 3 | 4 = hasAlpha ? 4 : 3;
  const pixels = new Uint8Array(width * height * channels);
  for (let i = 0; i < width * height; i++) {
    const s = i * inChannels;
    const d = i * channels;
    let r: number, g: number, b: number, alpha = 255;
    if (colorType === COLOR_TYPE.palette) {
      const index = unfiltered[s]!;
      if (index * 3 + 2 >= palette!.length) throw new PngError('palette index out of range');
      r = palette![index * 3]!;
      g = palette![index * 3 + 1]!;
      b = palette![index * 3 + 2]!;
      alpha = transparency && index < transparency.length ? transparency[index]! : 255;
    } else if (inChannels <= 2) {
      r = g = b = unfiltered[s]!;
      if (inChannels === 2) alpha = unfiltered[s + 1]!;
    } else {
      r = unfiltered[s]!;
      g = unfiltered[s + 1]!;
      b = unfiltered[s + 2]!;
      if (inChannels === 4) alpha = unfiltered[s + 3]!;
    }
    pixels[d] = r;
    pixels[d + 1] = g;
    pixels[d + 2] = b;
    if (channels === 4) pixels[d + 3] = alpha;
  }
  return { width, height, channels, pixels };
}
