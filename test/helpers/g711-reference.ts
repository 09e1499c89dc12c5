/**
 * An independent G.711 reference for tests, written from the standard's
 * decision levels rather than from bit manipulation (src/telephony/g711.ts
 * does that): each law's 128 magnitude codes cover intervals of the 14-bit
 * (mu-law) or 13-bit (A-law) magnitude, whose lower ends are listed here and
 * searched. The 16-bit sample is reduced by an arithmetic shift, as the Sun
 * reference code and CPython's audioop do.
 */

/** Lower end of each mu-law magnitude code's interval (14-bit), code n = segment * 16 + step. */
const MULAW_LOWER: number[] = [];
for (let seg = 0; seg < 8; seg++) for (let step = 0; step < 16; step++) MULAW_LOWER.push(Math.max(0, ((16 + step) << (seg + 1)) - 33));

/** Lower end of each A-law magnitude code's interval (13-bit). */
const ALAW_LOWER: number[] = [];
for (let seg = 0; seg < 8; seg++) for (let step = 0; step < 16; step++) ALAW_LOWER.push(seg === 0 ? 2 * step : (16 + step) << seg);

/** Index of the last interval whose lower end is <= magnitude. */
function search(lower: readonly number[], magnitude: number): number {
  let lo = 0;
  let hi = lower.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lower[mid]! <= magnitude) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function referenceMulaw(sample: number): number {
  const v = Math.floor(sample / 4);
  const negative = v < 0;
  const magnitude = Math.min(negative ? -v : v, 8159);
  const code = search(MULAW_LOWER, magnitude);
  // Codes are sent inverted; the sign bit is 1 for positive values.
  return (negative ? 0x00 : 0x80) | (~code & 0x7f);
}

export function referenceAlaw(sample: number): number {
  const v = Math.floor(sample / 8);
  const negative = v < 0;
  const magnitude = negative ? -v - 1 : v;
  const code = search(ALAW_LOWER, magnitude);
  // Even bits inverted (XOR 0x55); the sign bit is 1 for positive values.
  return ((negative ? 0x00 : 0x80) | code) ^ 0x55;
}

export function referenceEncode(samples: Int16Array, law: 'mulaw' | 'alaw'): Buffer {
  const f = law === 'alaw' ? referenceAlaw : referenceMulaw;
  return Buffer.from(Array.from(samples, f));
}

/** Reconstruction levels (16-bit) from the same intervals: the midpoint of each interval, as G.711's decoder tables give. */
export function referenceMulawDecode(code: number): number {
  const negative = (code & 0x80) === 0;
  const n = ~code & 0x7f;
  const seg = n >> 4;
  const step = n & 0x0f;
  // 14-bit level: ((2 * step + 33) << seg) - 33, scaled to 16 bits.
  const level = (((2 * step + 33) << seg) - 33) * 4;
  return negative ? -level : level;
}
