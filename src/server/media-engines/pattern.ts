/**
 * The picture behind the local image and video engines: a deterministic
 * pattern derived from the prompt. The SHA-256 of the prompt chooses the
 * wave directions, frequencies and ring centre; colour words in the prompt
 * ("red", "ocean", "sunset"...) choose the palette, else the hash does. The
 * same prompt gives the same picture; a video moves the pattern over time.
 * It is a stand-in for a generative model, not one.
 */
import { createHash } from 'node:crypto';
import type { RgbImage } from './png.js';

type Rgb = readonly [number, number, number];

/** Colour words understood in prompts, in the order they are looked for. */
export const PROMPT_COLORS: Readonly<Record<string, Rgb>> = {
  red: [220, 40, 40],
  orange: [245, 140, 30],
  yellow: [245, 215, 50],
  gold: [212, 175, 55],
  green: [50, 170, 70],
  forest: [30, 100, 45],
  teal: [30, 150, 150],
  blue: [40, 90, 220],
  ocean: [20, 80, 150],
  sky: [120, 180, 240],
  purple: [140, 60, 190],
  violet: [150, 90, 220],
  pink: [240, 120, 170],
  brown: [120, 80, 45],
  white: [245, 245, 245],
  snow: [235, 240, 250],
  gray: [128, 128, 128],
  grey: [128, 128, 128],
  black: [15, 15, 20],
  night: [15, 20, 60],
  sunset: [250, 110, 60],
  fire: [240, 80, 20],
};

/** The parameters a prompt maps to (exposed for tests and for the video engine). */
export interface PatternParams {
  /** Two or three palette colours. */
  palette: Rgb[];
  /** Linear wave: direction and frequency (cycles across the image). */
  waveAngle: number;
  waveCycles: number;
  /** Ring wave: centre (0..1) and frequency. */
  ringX: number;
  ringY: number;
  ringCycles: number;
  /** Phase speed in cycles per second (video). */
  speed: number;
}

function hueColor(byte: number, lightness: number): Rgb {
  // A cheap HSV-to-RGB with full saturation: enough for distinct palettes.
  const h = (byte / 256) * 6;
  const i = Math.floor(h);
  const f = h - i;
  const v = 255 * lightness;
  const q = v * (1 - f);
  const t = v * f;
  const table: Rgb[] = [[v, t, 0], [q, v, 0], [0, v, t], [0, q, v], [t, 0, v], [v, 0, q]];
  const [r, g, b] = table[i % 6]!;
  return [Math.round(r), Math.round(g), Math.round(b)];
}

/** Map a prompt to its pattern parameters. Deterministic. */
export function patternParams(prompt: string): PatternParams {
  const hash = createHash('sha256').update(prompt, 'utf8').digest();
  const byte = (i: number) => hash[i % hash.length]!;
  const words = prompt.toLowerCase().match(/\p{L}+/gu) ?? [];
  const named = words.map((w) => PROMPT_COLORS[w]).filter((c): c is Rgb => c !== undefined);
  let palette: Rgb[] = named.slice(0, 3);
  if (palette.length === 1) {
    // One colour word: shades of that colour, so the picture stays that colour.
    const [c] = palette as [Rgb];
    const shade = (f: number): Rgb => [Math.min(255, Math.round(c[0] * f)), Math.min(255, Math.round(c[1] * f)), Math.min(255, Math.round(c[2] * f))];
    palette = [shade(0.45), c, shade(1.25)];
  }
  for (let i = 0; palette.length < (named.length === 0 ? 3 : 2); i++) palette.push(hueColor(byte(i * 3), 0.45 + (byte(i * 3 + 1) / 255) * 0.5));
  return {
    palette,
    waveAngle: (byte(10) / 256) * Math.PI,
    waveCycles: 0.5 + (byte(11) / 255) * 3.5,
    ringX: byte(12) / 255,
    ringY: byte(13) / 255,
    ringCycles: 1 + (byte(14) / 255) * 5,
    speed: 0.15 + (byte(15) / 255) * 0.5,
  };
}

/** Linear interpolation along the palette, `v` in 0..1. */
function paletteAt(palette: Rgb[], v: number, out: Float64Array): void {
  const scaled = Math.min(0.999_999, Math.max(0, v)) * (palette.length - 1);
  const i = Math.floor(scaled);
  const f = scaled - i;
  const a = palette[i]!;
  const b = palette[i + 1] ?? a;
  out[0] = a[0] + (b[0] - a[0]) * f;
  out[1] = a[1] + (b[1] - a[1]) * f;
  out[2] = a[2] + (b[2] - a[2]) * f;
}

export interface RenderOptions {
  /** Time in seconds (videos animate the pattern); default 0. */
  timeSeconds?: number;
  /** An image of the same size to blend under the pattern (edits, reference frames). */
  base?: RgbImage;
  /** Weight of `base` in the blend, 0 to 1; default 0.65. */
  baseWeight?: number;
  /** Render only a band: its first row within the full picture; default 0. */
  rowOffset?: number;
  /** Height of the full picture when rendering a band; default the height asked for. */
  fullHeight?: number;
}

/** Render the prompt's pattern as RGB pixels of `width` x `height`. */
export function renderPattern(prompt: string, width: number, height: number, options: RenderOptions = {}): RgbImage {
  return renderParams(patternParams(prompt), width, height, options);
}

/**
 * Render given parameters (lets the video engine compute them once): `height`
 * rows starting at `rowOffset` of a picture `fullHeight` rows high.
 */
export function renderParams(p: PatternParams, width: number, height: number, options: RenderOptions = {}): RgbImage {
  const t = options.timeSeconds ?? 0;
  const base = options.base;
  const rowOffset = options.rowOffset ?? 0;
  const fullHeight = options.fullHeight ?? height;
  if (base && (base.width !== width || base.height !== fullHeight)) throw new Error('base image size differs from the output size');
  const baseWeight = base ? (options.baseWeight ?? 0.65) : 0;
  const pixels = new Uint8Array(width * height * 3);
  const k = 2 * Math.PI * p.waveCycles;
  const kx = k * Math.cos(p.waveAngle);
  const ky = k * Math.sin(p.waveAngle);
  const ringK = 2 * Math.PI * p.ringCycles;
  const phase = 2 * Math.PI * p.speed * t;
  // sin(kx*u + ky*v + phase) = sin(kx*u)cos(ky*v + phase) + cos(kx*u)sin(ky*v + phase): one table per column, two values per row.
  const colSin = new Float64Array(width);
  const colCos = new Float64Array(width);
  const colDx2 = new Float64Array(width);
  for (let x = 0; x < width; x++) {
    const u = x / width;
    colSin[x] = Math.sin(kx * u);
    colCos[x] = Math.cos(kx * u);
    colDx2[x] = (u - p.ringX) ** 2;
  }
  const color = new Float64Array(3);
  for (let y = 0; y < height; y++) {
    const v = (y + rowOffset) / fullHeight;
    const rowCos = Math.cos(ky * v + phase);
    const rowSin = Math.sin(ky * v + phase);
    const dy2 = (v - p.ringY) ** 2;
    for (let x = 0; x < width; x++) {
      const linear = colSin[x]! * rowCos + colCos[x]! * rowSin;
      const ring = Math.sin(ringK * Math.sqrt(colDx2[x]! + dy2) - phase * 1.5);
      paletteAt(p.palette, 0.5 + 0.3 * linear + 0.2 * ring, color);
      const o = (y * width + x) * 3;
      if (base) {
        const b = ((y + rowOffset) * width + x) * base.channels;
        pixels[o] = Math.round(base.pixels[b]! * baseWeight + color[0]! * (1 - baseWeight));
        pixels[o + 1] = Math.round(base.pixels[b + 1]! * baseWeight + color[1]! * (1 - baseWeight));
        pixels[o + 2] = Math.round(base.pixels[b + 2]! * baseWeight + color[2]! * (1 - baseWeight));
      } else {
        pixels[o] = Math.round(color[0]!);
        pixels[o + 1] = Math.round(color[1]!);
        pixels[o + 2] = Math.round(color[2]!);
      }
    }
  }
  return { width, height, channels: 3, pixels };
}

/** Nearest-neighbour resize (reference images to the output size); drops alpha. */
export function resizeImage(image: RgbImage, width: number, height: number): RgbImage {
  const pixels = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(image.height - 1, Math.floor((y * image.height) / height));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(image.width - 1, Math.floor((x * image.width) / width));
      const s = (sy * image.width + sx) * image.channels;
      const o = (y * width + x) * 3;
      pixels[o] = image.pixels[s]!;
      pixels[o + 1] = image.pixels[s + 1]!;
      pixels[o + 2] = image.pixels[s + 2]!;
    }
  }
  return { width, height, channels: 3, pixels };
}
