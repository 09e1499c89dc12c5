/**
 * Tolerant readers of received fields (REST bodies and realtime events). The
 * spec leaves many shapes open and says unknown fields are additive (9.7), so
 * normalisers read what they know from any of its spellings and keep the rest.
 */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` when it is an object, else an empty one. */
export function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

/** The first of `keys` whose value is a non-empty string (numbers are stringified: some ids are numeric). */
export function str(obj: JsonObject | undefined, ...keys: string[]): string | undefined {
  if (!obj) return undefined;
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

/** The first of `keys` whose value is a finite number (numeric strings accepted: headers and some bodies). */
export function num(obj: JsonObject | undefined, ...keys: string[]): number | undefined {
  if (!obj) return undefined;
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  }
  return undefined;
}

export function bool(obj: JsonObject | undefined, ...keys: string[]): boolean | undefined {
  if (!obj) return undefined;
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === 'boolean') return v;
  }
  return undefined;
}

/** The first of `keys` whose value is an array. */
export function arr(obj: JsonObject | undefined, ...keys: string[]): unknown[] | undefined {
  if (!obj) return undefined;
  for (const k of keys) {
    const v = obj[k];
    if (Array.isArray(v)) return v;
  }
  return undefined;
}

/** An integer header value, or undefined. */
export function intHeader(headers: Headers, name: string): number | undefined {
  const v = headers.get(name);
  if (v === null || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}
