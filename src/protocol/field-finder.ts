/**
 * Finding a received field by its name when a deployment spells it its own
 * way. The spec names many fields only in prose and says responses are
 * additive (6, 9.7), so a name is a hint: the reader looks for a field
 * under the spellings it knows, then under the same words in another case
 * or with other separators (`SEGMENT_ID`, `segment-id`, `SegmentId`), then
 * after a prefix word (`x_segment_id`, `svcSequence`), then inside a nested
 * map (`{ ack: { sequence } }`, `{ accepted: { seq } }`). What cannot be found
 * this way the reader gets by meaning, or goes on without (server-reader.ts).
 *
 * Pure, and off the hot path: a frame in our own spelling is read by name
 * directly; only a miss walks the keys.
 */
import { isObject, type JsonObject } from './fields.js';

/** The words of a key, lower case: `segmentId`, `SEGMENT_ID`, `segment-id` are all `segment id`. */
export function wordsOf(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** A key's words run together: the form in which two spellings of one name are equal. */
export function squash(key: string): string {
  return wordsOf(key).join('');
}

/** Deepest nesting looked into (the top map is 0). */
const MAX_NESTING = 2;

/**
 * The names one field is known by, and every name the reader knows for any
 * field (`claimed`): a key that is another field's name is never taken for
 * this one after a prefix (`buffered_characters` is not `characters`).
 */
export interface FieldNames {
  names: readonly string[];
  /** `names` squashed. */
  squashed: ReadonlySet<string>;
  /** Every known name of every field, squashed. */
  claimed: ReadonlySet<string>;
}

/** Build the `FieldNames` of each field of `table`, each claiming against all of them. */
export function fieldNames<K extends string>(table: Record<K, readonly string[]>): Record<K, FieldNames> {
  const claimed = new Set<string>();
  for (const names of Object.values<readonly string[]>(table)) for (const n of names) claimed.add(squash(n));
  const out = {} as Record<K, FieldNames>;
  for (const [field, names] of Object.entries<readonly string[]>(table)) {
    out[field as K] = { names, squashed: new Set(names.map(squash)), claimed };
  }
  return out;
}

function endsWithWords(words: readonly string[], tail: readonly string[]): boolean {
  if (tail.length === 0 || words.length <= tail.length) return false;
  for (let i = 1; i <= tail.length; i++) if (words[words.length - i] !== tail[tail.length - i]) return false;
  return true;
}

/** Names shorter than this are too generic to be found after a prefix (`id`: `speaker_id` is no segment id). */
const MIN_PREFIXED_NAME = 4;

/** Whether `key` names the field by prefix: its last words are one of the field's names, and it is no other known name. */
function prefixed(key: string, field: FieldNames): boolean {
  const words = wordsOf(key);
  if (field.claimed.has(words.join(''))) return false;
  for (const name of field.names) if (name.length >= MIN_PREFIXED_NAME && endsWithWords(words, wordsOf(name))) return true;
  return false;
}

/**
 * The first value that `accept` takes of the field `field` names in `map`,
 * looked for in the order the module's comment gives; undefined when none.
 */
export function findField<T>(map: JsonObject, field: FieldNames, accept: (value: unknown) => T | undefined, depth = 0): T | undefined {
  for (const name of field.names) {
    if (Object.hasOwn(map, name)) {
      const v = accept(map[name]);
      if (v !== undefined) return v;
    }
  }
  const keys = Object.keys(map);
  for (const key of keys) {
    if (!field.squashed.has(squash(key))) continue;
    const v = accept(map[key]);
    if (v !== undefined) return v;
  }
  for (const key of keys) {
    if (!prefixed(key, field)) continue;
    const v = accept(map[key]);
    if (v !== undefined) return v;
  }
  if (depth >= MAX_NESTING) return undefined;
  for (const key of keys) {
    const inner = map[key];
    if (!isObject(inner) || Object.getPrototypeOf(inner) !== Object.prototype) continue;
    // The parent's words and the child's together (`accepted` + `seq`), then the child alone.
    for (const child of Object.keys(inner)) {
      if (!field.squashed.has(squash(key) + squash(child))) continue;
      const v = accept(inner[child]);
      if (v !== undefined) return v;
    }
    const v = findField(inner, field, accept, depth + 1);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** Acceptors: a value of the type a field needs, or undefined. */
export const as = {
  /** A non-empty string; a finite number as its decimal string (some ids are numeric). */
  str: (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined),
  /** A finite number; a numeric string as its number. */
  num: (v: unknown): number | undefined => {
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'bigint') return Number(v);
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
    return undefined;
  },
  /** A whole number in any encoding (a MessagePack float 3.0, an int64 as bigint, a numeric string). */
  int: (v: unknown): number | undefined => {
    const n = as.num(v);
    return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
  },
  bool: (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined),
  bytes: (v: unknown): Uint8Array | undefined => (v instanceof Uint8Array ? v : undefined),
};
