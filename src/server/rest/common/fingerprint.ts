/** Stable fingerprints of request payloads and texts. */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal payloads give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }
    return v;
  });
}

/** SHA-256 hex of the canonical JSON of `payload` (undefined fields dropped). */
export function payloadFingerprint(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload) ?? 'null').digest('hex');
}

/** `sha256:<hex>` of the UTF-8 bytes of `text` (spec 2.4 `textFingerprint`). */
export function textFingerprint(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
