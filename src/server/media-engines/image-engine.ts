/**
 * The local image engine: a PNG of the prompt's pattern (see pattern.ts) at
 * the size the aspect ratio and resolution ask for; an edit or a reference
 * image is decoded and blended under the pattern. A stand-in for a
 * generative image model: real, valid files derived from the request.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { UnprocessableMediaError } from '../audio/decode.js';
import { patternParams, renderParams, resizeImage } from './pattern.js';
import { decodePng, encodePng, isPng, PngError, type RgbImage } from './png.js';
import { MEDIA_PROCESS_LIMITER, runProcess, withTempDir } from './process.js';

/** Default long side of a generated image, pixels. */
export const DEFAULT_LONG_SIDE = 1024;

/**
 * Width and height of an image of `aspectRatio` (`w:h`) whose long side is
 * `longSide`, both rounded to even numbers (video encoders need even sizes).
 */
export function sizeForAspect(aspectRatio: string, longSide = DEFAULT_LONG_SIDE): { width: number; height: number } {
  const m = /^(\d{1,4}):(\d{1,4})$/.exec(aspectRatio);
  const w = m ? Number(m[1]) : 1;
  const h = m ? Number(m[2]) : 1;
  if (!(w > 0 && h > 0)) return { width: longSide, height: longSide };
  const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));
  return w >= h ? { width: even(longSide), height: even((longSide * h) / w) } : { width: even((longSide * w) / h), height: even(longSide) };
}

/** Parse `<w>x<h>` (e.g. `1280x720`); undefined when malformed. */
export function parseSize(size: string): { width: number; height: number } | undefined {
  const m = /^(\d{1,5})x(\d{1,5})$/i.exec(size);
  if (!m) return undefined;
  return { width: Number(m[1]), height: Number(m[2]) };
}

/**
 * Decode a picture to RGB at `width` x `height`: PNG here, other formats
 * (JPEG, WebP...) through ffmpeg when installed. Throws UnprocessableMediaError.
 */
export async function decodePicture(data: Buffer, width: number, height: number, ffmpeg: string | undefined, signal?: AbortSignal): Promise<RgbImage> {
  if (isPng(data)) {
    try {
      return resizeImage(decodePng(data), width, height);
    } catch (err) {
      if (!(err instanceof PngError) || !ffmpeg) throw new UnprocessableMediaError(`is not a readable image (${(err as Error).message})`);
    }
  }
  if (!ffmpeg) throw new UnprocessableMediaError('is not a PNG image, and ffmpeg (needed for other image formats) is not installed');
  return MEDIA_PROCESS_LIMITER.run(() =>
    withTempDir(async (dir) => {
      const input = join(dir, 'input');
      await writeFile(input, data);
      try {
        const { stdout } = await runProcess(
          ffmpeg,
          ['-v', 'error', '-nostdin', '-i', input, '-frames:v', '1', '-vf', `scale=${width}:${height}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
          { timeoutMs: 60_000, signal, maxStdoutBytes: width * height * 3 }, // 1 min
        );
        if (stdout.length !== width * height * 3) throw new Error('no picture decoded');
        return { width, height, channels: 3, pixels: new Uint8Array(stdout.buffer, stdout.byteOffset, stdout.length) };
      } catch (err) {
        throw new UnprocessableMediaError(`is not a readable image (${(err as Error).message})`);
      }
    }),
  );
}

export interface GenerateImageOptions {
  prompt: string;
  width: number;
  height: number;
  /** Picture to blend under the pattern (edit source, first reference), already at the output size. */
  base?: RgbImage | undefined;
}

/** Rows rendered between two yields to the event loop (a 1024-wide band renders in a few ms). */
const ROWS_PER_SLICE = 64;

/** Render the prompt's pattern, yielding to the event loop between bands of rows. */
export async function renderPicture(options: GenerateImageOptions): Promise<RgbImage> {
  const { width, height } = options;
  const params = patternParams(options.prompt);
  const pixels = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y += ROWS_PER_SLICE) {
    const rows = Math.min(ROWS_PER_SLICE, height - y);
    const band = renderParams(params, width, rows, { rowOffset: y, fullHeight: height, ...(options.base ? { base: options.base } : {}) });
    pixels.set(band.pixels, y * width * 3);
    await yieldToLoop();
  }
  return { width, height, channels: 3, pixels };
}

/** Generate a PNG for the prompt. */
export async function generateImage(options: GenerateImageOptions): Promise<Buffer> {
  const image = await renderPicture(options);
  return encodePng(image, { Software: 'voxpipe reference server (local stand-in for an image model)' });
}
