/**
 * G.711 companding (ITU-T G.711): 16-bit linear PCM to and from 8-bit mu-law
 * (PCMU, North America and Japan; Twilio's `audio/x-mulaw`) and A-law (PCMA,
 * the rest of the world's telephone networks). Pure functions over typed
 * arrays; no state.
 *
 * G.711 is defined on 14-bit (mu-law) and 13-bit (A-law) linear samples. A
 * 16-bit sample is brought to that range by an arithmetic right shift (the
 * convention of the Sun reference `g711.c` and of CPython's `audioop`), so
 * every 16-bit value has one code and encoding is byte-exact across those
 * implementations.
 */

/** mu-law: bias added to the 14-bit magnitude before the segment search (0x84 >> 2). */
const ULAW_BIAS = 0x21;
/** mu-law: largest 14-bit magnitude that fits (8191 - 33 + 1 codes' worth). */
const ULAW_CLIP = 8159;

/** Segment of a biased magnitude: the position of its highest set bit above bit 5 (mu-law) or 4 (A-law). */
function segmentOf(magnitude: number, firstEnd: number): number {
  let seg = 0;
  let end = firstEnd;
  while (seg < 8 && magnitude > end) {
    seg++;
    end = (end << 1) | 1;
  }
  return seg;
}

/** One 16-bit linear sample to its mu-law code. */
export function linearToMulaw(sample: number): number {
  let v = sample >> 2; // 16-bit to 14-bit (arithmetic: toward minus infinity)
  let mask = 0xff;
  if (v < 0) {
    v = -v;
    mask = 0x7f;
  }
  if (v > ULAW_CLIP) v = ULAW_CLIP;
  v += ULAW_BIAS;
  const seg = segmentOf(v, 0x3f);
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << 4) | ((v >> (seg + 1)) & 0x0f)) ^ mask;
}

/** One mu-law code to its 16-bit linear value (the decision interval's reconstruction level). */
export function mulawToLinear(code: number): number {
  const u = ~code & 0xff;
  let t = ((u & 0x0f) << 3) + 0x84;
  t <<= (u & 0x70) >> 4;
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

/** One 16-bit linear sample to its A-law code. */
export function linearToAlaw(sample: number): number {
  let v = sample >> 3; // 16-bit to 13-bit
  let mask: number;
  if (v >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    v = -v - 1;
  }
  const seg = segmentOf(v, 0x1f);
  if (seg >= 8) return 0x7f ^ mask;
  const aval = (seg << 4) | ((seg < 2 ? v >> 1 : v >> seg) & 0x0f);
  return aval ^ mask;
}

/** One A-law code to its 16-bit linear value. */
export function alawToLinear(code: number): number {
  const a = code ^ 0x55;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

/** The two G.711 laws, by the names media-stream protocols use. */
export const G711Law = {
  mulaw: 'mulaw',
  alaw: 'alaw',
} as const;
export type G711Law = (typeof G711Law)[keyof typeof G711Law];

/** Encode 16-bit linear PCM samples with a G.711 law: one byte per sample. */
export function encodeG711(samples: Int16Array, law: G711Law): Uint8Array {
  const out = new Uint8Array(samples.length);
  const f = law === G711Law.alaw ? linearToAlaw : linearToMulaw;
  for (let i = 0; i < samples.length; i++) out[i] = f(samples[i]!);
  return out;
}

const MULAW_TABLE = Int16Array.from({ length: 256 }, (_, c) => mulawToLinear(c));
const ALAW_TABLE = Int16Array.from({ length: 256 }, (_, c) => alawToLinear(c));

/** Decode G.711 bytes to 16-bit linear PCM samples. */
export function decodeG711(bytes: Uint8Array, law: G711Law): Int16Array {
  const table = law === G711Law.alaw ? ALAW_TABLE : MULAW_TABLE;
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = table[bytes[i]!]!;
  return out;
}

/** The code of digital silence: what a frame is padded with (mu-law 0xFF, A-law 0xD5). */
export function g711Silence(law: G711Law): number {
  return law === G711Law.alaw ? 0xd5 : 0xff;
}
