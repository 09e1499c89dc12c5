/** Documentation pieces of the media routes (they feed openapi.json). */
import { z } from 'zod';
import type { ResponseDoc } from '../../http/router.js';

/** The error body of spec 7.1; extra properties (e.g. `field`, `capability`) may appear. */
export const errorBody = z.object({
  error: z.looseObject({ code: z.string(), message: z.string(), requestId: z.string() }),
});

const MEANING: Record<number, string> = {
  400: 'Invalid body, query, URL (not public, unreachable, credentials in it), model or parameter; missing Idempotency-Key where required',
  401: 'API key missing, malformed, invalid, revoked, or sent in the URL',
  402: 'Insufficient credits (ASR) or API quota (image, video, lip-sync)',
  403: 'No access to the capability, or invalid signature',
  404: 'Not found or owned by another account',
  409: 'A request with this Idempotency-Key is still in progress',
  422: 'Media reachable but not processable, or Idempotency-Key reused with a different body',
  503: 'Capability unavailable on this server (a required tool such as ffmpeg or the recognizer is not installed)',
};

/** Error responses with the spec's error body, by status. */
export function errorResponses(...statuses: number[]): Record<number, ResponseDoc> {
  const out: Record<number, ResponseDoc> = {};
  for (const s of statuses) out[s] = { description: MEANING[s] ?? 'Error', schema: errorBody };
  return out;
}

/** `Idempotency-Key` header doc; `required` on the media job routes. */
export function idempotencyHeader(required: boolean): { name: string; required: boolean; description: string } {
  return {
    name: 'Idempotency-Key',
    required,
    description: `${required ? 'Required. ' : ''}Replays the first result of this key for the same body (no second task or charge); 422 for a different body.`,
  };
}
