/**
 * Helpers for the protocol tests: hand-built MessagePack bytes (for frames the
 * encoder refuses to produce: invalid UTF-8, duplicate keys, `__proto__`
 * keys, lying lengths) and a catcher that returns the ProtocolError a decode threw.
 */
import { ProtocolError } from '../../src/errors.js';

/** Concatenate byte parts (numbers are single bytes). */
export function bytes(...parts: (number | Uint8Array | readonly number[])[]): Uint8Array {
  const chunks = parts.map((p) => (typeof p === 'number' ? Uint8Array.of(p) : Uint8Array.from(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** A MessagePack str header plus raw payload bytes (which need not be valid UTF-8). */
export function rawStr(payload: Uint8Array | readonly number[]): Uint8Array {
  const body = Uint8Array.from(payload);
  const n = body.length;
  if (n < 32) return bytes(0xa0 | n, body);
  if (n < 0x100) return bytes(0xd9, n, body);
  if (n < 0x10000) return bytes(0xda, n >> 8, n & 0xff, body);
  throw new RangeError('rawStr: payload too long for this helper');
}

/** A MessagePack str of `text` encoded as UTF-8. */
export function str(text: string): Uint8Array {
  return rawStr(new TextEncoder().encode(text));
}

/** A fixmap header for `entries` key/value pairs (at most 15). */
export function fixmap(entries: number): number {
  if (entries > 15) throw new RangeError('fixmap holds at most 15 entries');
  return 0x80 | entries;
}

/** Run `decode` and return the ProtocolError it threw; fail if it returned or threw anything else. */
export function protocolErrorOf(decode: () => unknown): ProtocolError {
  try {
    decode();
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error('expected a ProtocolError, but the frame was accepted');
}

/** Deterministic PRNG (mulberry32) so random-frame tests replay exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
