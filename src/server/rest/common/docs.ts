/**
 * Documentation builders shared by the REST modules (they feed
 * openapi.json): the spec's error body, error responses from a module's own
 * table of status meanings, and the `Idempotency-Key` header doc. Each
 * module keeps its own wording; only the shapes live here.
 */
import { z } from 'zod';
import type { ResponseDoc } from '../../http/router.js';

/** The error body of spec 7.1; extra properties (e.g. `field`, `supportedModels`) may appear. */
export const errorBody = z.object({
  error: z.looseObject({ code: z.string(), message: z.string(), requestId: z.string() }),
});

/** A documented request header. */
export interface HeaderDoc {
  name: string;
  required: boolean;
  description: string;
}

/**
 * An error-responses builder over `meaning` (status -> description;
 * `Error` for a status it lacks): `(...statuses)` gives each status the
 * spec's error body.
 */
export function errorResponsesWith(meaning: Readonly<Record<number, string>>): (...statuses: number[]) => Record<number, ResponseDoc> {
  return (...statuses) => {
    const out: Record<number, ResponseDoc> = {};
    for (const s of statuses) out[s] = { description: meaning[s] ?? 'Error', schema: errorBody };
    return out;
  };
}

/** The `Idempotency-Key` header doc of a creating POST, `description` in the module's words. */
export function idempotencyHeaderDoc(required: boolean, description: string): HeaderDoc {
  return { name: 'Idempotency-Key', required, description };
}
