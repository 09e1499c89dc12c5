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
    .replace(/([a-z0-9])(?=[A-Z])|([A-Z])(?=[A-Z][a-z])/g, '$1$2 ')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** A key's words run together: the form in which two spellings of one name are equal. */
export const squash = (key: string): string => wordsOf(key).join('');

/** Names shorter than this are too generic to be found after a prefix (`id`: `speaker_id` is no segment id). */
const MIN_PREFIXED_NAME = 4;

/**
 * The names one field is known by, and every name the reader knows for any
 * field (`claimed`): a key that is another field's name is never taken for
 * this one after a prefix (`buffered_characters` is not `characters`).
 */
export interface FieldNames {
  names: readonly string[];
  /** `names` squashed. */
  squashed: ReadonlySet<string>;
  /** The words of the names long enough to be found after a prefix. */
  tails: readonly string[][];
  /** Every known name of every field, squashed. */
  claimed: ReadonlySet<string>;
}

/** Build the `FieldNames` of each field of `table`, each claiming against all of them. */
export function fieldNames<K extends string>(table: Record<K, readonly string[]>): Record<K, FieldNames> {
  const claimed = new Set(Object.values<readonly string[]>(table).flat().map(squash));
  const out = {} as Record<K, FieldNames>;
  for (const [field, names] of Object.entries<readonly string[]>(table)) {
    out[field as K] = { names, squashed: new Set(names.map(squash)), tails: names.filter((n) => n.length >= MIN_PREFIXED_NAME).map(wordsOf), claimed };
  }
  return out;
}

/** How well `key` names the field: its place among the names as written, then another case or separators, then after a prefix; -1 for not at all. */
function rankFor(key: string, field: FieldNames): number {
  const exact = field.names.indexOf(key);
  if (exact >= 0) return exact;
  const words = wordsOf(key);
  const joined = words.join('');
  if (field.squashed.has(joined)) return 100;
  if (field.claimed.has(joined)) return -1;
  return field.tails.some((t) => t.length < words.length && t.every((w, i) => words[words.length - t.length + i] === w)) ? 101 : -1;
}

/**
 * Ranks already worked out, by key then field: a deployment spells a field
 * the same way in every frame, so each key is analysed once. Bounded: a
 * server inventing keys empties it now and then, and only costs the work.
 */
const ranks = new Map<string, Map<FieldNames, number>>();
const RANK_CACHE_MAX_KEYS = 1_024;

function rankOf(key: string, field: FieldNames): number {
  let byField = ranks.get(key);
  if (byField === undefined) {
    if (ranks.size >= RANK_CACHE_MAX_KEYS) ranks.clear();
    byField = new Map();
    ranks.set(key, byField);
  }
  let rank = byField.get(field);
  if (rank === undefined) {
    rank = rankFor(key, field);
    byField.set(field, rank);
  }
  return rank;
}

const isPlainMap = (v: unknown): v is JsonObject => isObject(v) && Object.getPrototypeOf(v) === Object.prototype;

/**
 * The value that `accept` takes of the field `field` names in `map`, from
 * the key that names it best (the module's comment gives the order); then
 * inside nested maps, at most two levels down, where the parent's words and
 * the child's may name it together (`accepted` + `seq`). Undefined when none.
 */
export function findField<T>(map: JsonObject, field: FieldNames, accept: (value: unknown) => T | undefined, depth = 0): T | undefined {
  // Our own spelling: no walk.
  const own = accept(map[field.names[0]!]);
  if (own !== undefined) return own;
  let best: T | undefined;
  let rank = Infinity;
  for (const key in map) {
    const r = rankOf(key, field);
    if (r < 0 || r >= rank) continue;
    const v = accept(map[key]);
    if (v !== undefined) [best, rank] = [v, r];
  }
  if (best !== undefined || depth >= 2) return best;
  for (const key in map) {
    const inner = map[key];
    if (!isPlainMap(inner)) continue;
    for (const child in inner) {
      // The joined key is ranked like any other (and cached); only a match of the whole name counts here.
      const r = rankOf(`${key}_${child}`, field);
      const v = r >= 0 && r <= 100 ? accept(inner[child]) : undefined;
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
