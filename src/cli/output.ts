/**
 * What commands print on standard output: short human lines and tables by
 * default, one JSON document with `--json`. The JSON vocabulary is the same
 * for every command: a list is `{ "items": [...] }` (with `hasMore` where the
 * service pages it), one thing is its object, keys in camelCase as the
 * client reads them.
 */
import type { Io } from './io.js';

/** `value` as one JSON line with `json`, else what `human` makes of it (one trailing newline). */
export function emit<T>(io: Io, json: boolean | undefined, value: T, human: (value: T) => string): void {
  io.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human(value).replace(/\n+$/, '')}\n`);
}

/** Rows of cells, each column as wide as its widest cell (the last one not padded); a header row first when given. */
export function table(rows: readonly (readonly unknown[])[], header?: readonly string[]): string {
  const all = (header ? [header, ...rows] : rows).map((r) => r.map((c) => cell(c)));
  if (all.length === 0) return '';
  const columns = Math.max(...all.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ').trimEnd()).join('\n');
}

function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `a few words` from a camelCase or snake_case key. */
function words(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

/**
 * An object as `key: value` lines: scalars as they are, a nested object's
 * scalars as `object key: value`; lists are left to the caller; `skip` keys
 * are left out.
 */
export function fields(object: Record<string, unknown>, skip: readonly string[] = []): string {
  const lines: [string, unknown][] = [];
  for (const [key, value] of Object.entries(object)) {
    if (skip.includes(key) || Array.isArray(value)) continue;
    if (value !== null && typeof value === 'object') {
      for (const [inner, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === null || typeof v !== 'object') lines.push([`${words(key)} ${words(inner)}`, v]);
      }
    } else lines.push([words(key), value]);
  }
  const width = Math.max(0, ...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cell(v)}`).join('\n');
}
