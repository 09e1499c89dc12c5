/** Documentation pieces shared by the TTS routes (they feed openapi.json). */
import { z } from 'zod';
import type { ResponseDoc } from '../../http/router.js';

/** The error body of spec 7.1; extra properties (e.g. `supportedModels`) may appear. */
export const errorBody = z.object({
  error: z.looseObject({ code: z.string(), message: z.string(), requestId: z.string() }),
});

const MEANING: Record<number, string> = {
  400: 'Invalid body, query, model, format, voice or speed',
  401: 'API key missing, malformed, invalid, revoked, or sent in the URL',
  402: 'Insufficient credits',
  403: 'No access to the capability or voice',
  404: 'Not found or owned by another account',
  409: 'Request-id conflict (ERR_REQUEST_IN_PROGRESS, ERR_REQUEST_ID_CONFLICT, ERR_REQUEST_ALREADY_COMPLETED, ERR_REQUEST_PREVIOUSLY_REFUNDED) or Idempotency-Key in progress',
  422: 'Idempotency-Key reused with a different body',
  500: 'Generation failed (the charge is refunded)',
};

/** Error responses with the spec's error body, by status. */
export function errorResponses(...statuses: number[]): Record<number, ResponseDoc> {
  const out: Record<number, ResponseDoc> = {};
  for (const s of statuses) out[s] = { description: MEANING[s] ?? 'Error', schema: errorBody };
  return out;
}
