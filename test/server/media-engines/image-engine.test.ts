import { describe, expect, it } from 'vitest';
import { decodePicture, generateImage, parseSize, renderPicture, sizeForAspect } from '../../../src/server/media-engines/image-engine.js';
import { patternParams, renderPattern, PROMPT_COLORS } from '../../../src/server/media-engines/pattern.js';
import { decodePng, encodePng } from '../../../src/server/media-engines/png.js';
import { UnprocessableMediaError } from '../../../src/server/audio/decode.js';
import { HAS_FFMPEG, TOOLS } from './helpers.js';

describe('sizes', () => {
  it('maps an aspect ratio to even sides with the asked long side', () => {
    expect(sizeForAspect('1:1', 512)).toEqual({ width: 512, height: 512 });
    expect(sizeForAspect('16:9', 1024)).toEqual({ width: 1024, height: 576 });
    expect(sizeForAspect('9:16', 1024)).toEqual({ width: 576, height: 1024 });
    expect(sizeForAspect('21:9', 512)).toEqual({ width: 512, height: 220 });
    expect(parseSize('1280x720')).toEqual({ width: 1280, height: 720 });
    expect(parseSize('1280*720')).toBeUndefined();
  });
});

describe('the prompt pattern', () => {
  it('is deterministic per prompt and differs between prompts', () => {
    const a = renderPattern('a lighthouse at dawn', 40, 30);
    const b = renderPattern('a lighthouse at dawn', 40, 30);
    const c = renderPattern('a lighthouse at dusk', 40, 30);
    expect(Buffer.from(a.pixels).equals(Buffer.from(b.pixels))).toBe(true);
    expect(Buffer.from(a.pixels).equals(Buffer.from(c.pixels))).toBe(false);
  });

  it('takes its palette from colour words, else from the hash', () => {
    expect(patternParams('red and blue stripes').palette).toEqual([PROMPT_COLORS['red'], PROMPT_COLORS['blue']]);
    const one = patternParams('a green field').palette;
    expect(one).toHaveLength(3);
    expect(one[1]).toEqual(PROMPT_COLORS['green']);
    expect(patternParams('abstract shapes').palette).toHaveLength(3);
  });

  it('renders in bands (yielding between them) exactly as in one piece, blended over a base picture', async () => {
    const whole = renderPattern('banded', 50, 150);
    const banded = await renderPicture({ prompt: 'banded', width: 50, height: 150 });
    expect(Buffer.from(banded.pixels).equals(Buffer.from(whole.pixels))).toBe(true);
    const base = { width: 50, height: 150, channels: 3 as const, pixels: new Uint8Array(50 * 150 * 3) };
    const over = await renderPicture({ prompt: 'banded', width: 50, height: 150, base });
    // A black base darkens every pixel.
    let darker = 0;
    for (let i = 0; i < whole.pixels.length; i++) if (over.pixels[i]! <= whole.pixels[i]!) darker++;
    expect(darker).toBe(whole.pixels.length);
    expect(Buffer.from(over.pixels).equals(Buffer.from(whole.pixels))).toBe(false);
  });

  it('moves with time (videos)', () => {
    const t0 = renderPattern('waves', 20, 20, { timeSeconds: 0 });
    const t1 = renderPattern('waves', 20, 20, { timeSeconds: 1 });
    expect(Buffer.from(t0.pixels).equals(Buffer.from(t1.pixels))).toBe(false);
  });
});

describe('generateImage and decodePicture', () => {
  it('generates a decodable PNG of the asked size', async () => {
    const png = await generateImage({ prompt: 'test', width: 64, height: 48 });
    const image = decodePng(png);
    expect([image.width, image.height, image.channels]).toEqual([64, 48, 3]);
  });

  it('decodes and resizes a PNG without ffmpeg; refuses other bytes without ffmpeg', async () => {
    const source = encodePng({ width: 2, height: 1, channels: 3, pixels: new Uint8Array([255, 0, 0, 0, 0, 255]) });
    const image = await decodePicture(source, 4, 2, undefined);
    expect(Array.from(image.pixels.subarray(0, 3))).toEqual([255, 0, 0]);
    expect(Array.from(image.pixels.subarray(9, 12))).toEqual([0, 0, 255]);
    await expect(decodePicture(Buffer.from('no picture here'), 4, 2, undefined)).rejects.toBeInstanceOf(UnprocessableMediaError);
  });

  it.skipIf(!HAS_FFMPEG)('decodes other formats with ffmpeg and refuses non-pictures (needs ffmpeg)', async () => {
    await expect(decodePicture(Buffer.from('no picture here'), 4, 2, TOOLS.ffmpeg)).rejects.toBeInstanceOf(UnprocessableMediaError);
    const { execFileSync } = await import('node:child_process');
    const jpeg = execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:size=16x16', '-frames:v', '1', '-f', 'mjpeg', 'pipe:1']);
    const image = await decodePicture(jpeg, 8, 8, TOOLS.ffmpeg);
    expect(image.pixels.length).toBe(8 * 8 * 3);
    expect(image.pixels[0]).toBeGreaterThan(200);
    expect(image.pixels[1]).toBeLessThan(60);
  });
});
