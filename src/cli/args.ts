/** The CLI's usage error and the checks of option values commander leaves to us (numbers in a range, items of a list). */
import { VoxpipeError } from '../errors.js';

export class UsageError extends VoxpipeError {
  override name = 'UsageError';
  constructor(message: string) {
    super('invalid_arguments', message);
  }
}

export function numberOption(value: string | undefined, name: string, min?: number, max?: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got ${JSON.stringify(value)}`);
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) throw new UsageError(`--${name} must be between ${min} and ${max}`);
  return n;
}

export function choice<T extends string>(value: string | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}
