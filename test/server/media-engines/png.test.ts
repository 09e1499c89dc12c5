import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodePng, encodePng, isPng, PngError, type RgbImage } from '../../../src/server/media-engines/png.js';
import { HAS_FFMPEG, TOOLS } from './helpers.js';

function noise(width: number, height: number, channels: 3 | 4, seed = 1): RgbImage {
  const pixels = new Uint8Array(width * height * channels);
  let x = seed;
  for (let i = 0; i < pixels.length; i++) {
    x = (x * 1_103_515_245 + 12_345) >>> 0;
    pixels[i] = x >>> 24;
  }
  return { width, height, channels, pixels };
}

function withDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-png-test-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('encodePng', () => {
  it('writes the signature, IHDR with the size and colour type, a tEXt entry, IDAT and IEND', () => {
    const png = encodePng(noise(5, 3, 3), { Comment: 'hello' });
    expect(isPng(png)).toBe(true);
    expect(png.toString('ascii', 12, 16)).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(5);
    expect(png.readUInt32BE(20)).toBe(3);
    expect(png[24]).toBe(8);
    expect(png[25]).toBe(2);
    expect(png.includes(Buffer.from('tEXtComment\u0000hello', 'latin1'))).toBe(true);
    expect(png.subarray(-12).toString('ascii', 4, 8)).toBe('IEND');
    expect(encodePng(noise(2, 2, 4))[25]).toBe(6);
  });

  it('round-trips RGB and RGBA pixels exactly through decodePng', () => {
    for (const channels of [3, 4] as const) {
      const image = noise(37, 23, channels, channels);
      const back = decodePng(encodePng(image));
      expect(back.width).toBe(37);
      expect(back.height).toBe(23);
      expect(back.channels).toBe(channels);
      expect(Buffer.from(back.pixels).equals(Buffer.from(image.pixels))).toBe(true);
    }
  });

  it('filters every row with "up" and deflates them (one filter byte per row)', () => {
    const png = encodePng(noise(4, 6, 3));
    const idat = png.indexOf('IDAT');
    const length = png.readUInt32BE(idat - 4);
    const raw = inflateSync(png.subarray(idat + 4, idat + 4 + length));
    expect(raw.length).toBe(6 * (4 * 3 + 1));
    for (let y = 0; y < 6; y++) expect(raw[y * 13]).toBe(2);
  });

  it('refuses inconsistent input', () => {
    expect(() => encodePng({ width: 2, height: 2, channels: 3, pixels: new Uint8Array(11) })).toThrow(PngError);
    expect(() => encodePng({ width: 0, height: 2, channels: 3, pixels: new Uint8Array(0) })).toThrow(PngError);
  });

  it.skipIf(!HAS_FFMPEG)('is decoded by ffmpeg to the same pixels (needs ffmpeg)', () => {
    const image = noise(19, 11, 3, 7);
    const raw = withDir((dir) => {
      writeFileSync(join(dir, 'in.png'), encodePng(image));
      return execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-i', join(dir, 'in.png'), '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
    });
    expect(raw.equals(Buffer.from(image.pixels))).toBe(true);
  });
});

describe('decodePng', () => {
  it('detects a damaged chunk by its CRC and refuses what is not a PNG', () => {
    const png = encodePng(noise(8, 8, 3));
    const damaged = Buffer.from(png);
    damaged[png.indexOf('IDAT') + 10]! ^= 0xff;
    expect(() => decodePng(damaged)).toThrow(/bad CRC in IDAT/);
    expect(() => decodePng(Buffer.from('GIF89a....'))).toThrow(/not a PNG/);
    expect(() => decodePng(png.subarray(0, png.length - 20))).toThrow(PngError);
  });

  it.skipIf(!HAS_FFMPEG)('reads the greyscale, grey+alpha, palette and RGBA files ffmpeg writes, with all row filters (needs ffmpeg)', () => {
    withDir((dir) => {
      const reference = execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=24x16', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
      for (const pixFmt of ['gray', 'ya8', 'pal8', 'rgba', 'rgb24']) {
        const path = join(dir, `${pixFmt}.png`);
        // -pred mixed makes ffmpeg choose a filter per row (sub, up, average, paeth).
        execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=24x16', '-frames:v', '1', '-pix_fmt', pixFmt, '-pred', 'mixed', path]);
        const image = decodePng(readFileSync(path));
        expect([image.width, image.height], pixFmt).toEqual([24, 16]);
        const expected = execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-i', path, '-f', 'rawvideo', '-pix_fmt', image.channels === 4 ? 'rgba' : 'rgb24', 'pipe:1']);
        expect(Buffer.from(image.pixels).equals(expected), pixFmt).toBe(true);
        if (pixFmt === 'rgb24') expect(Buffer.from(image.pixels).equals(reference)).toBe(true);
      }
    });
  });
});
