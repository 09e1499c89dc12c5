/**
 * Options pass through the layers in one expression. Under
 * `exactOptionalPropertyTypes` an optional field `x?: T` refuses an explicit
 * `x: undefined`, which used to mean one `...(x !== undefined && { x })`
 * spread per field at every layer; `defined({ a, b, c })` drops the
 * undefined ones and types the rest as optional.
 */
export type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** `object` without its undefined properties (a shallow copy; null and other falsy values stay). */
export function defined<T extends object>(object: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}
