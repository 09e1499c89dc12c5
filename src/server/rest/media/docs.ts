/** Documentation pieces of the media routes (they feed openapi.json). */
import { errorResponsesWith, idempotencyHeaderDoc, type HeaderDoc } from '../common/docs.js';

/** Error responses with the spec's error body, by status. */
export const errorResponses = errorResponsesWith({
  400: 'Invalid body, query, URL (not public, unreachable, credentials in it), model or parameter; missing Idempotency-Key where required',
  401: 'API key missing, malformed, invalid, revoked, or sent in the URL',
  402: 'Insufficient credits (ASR) or API quota (image, video, lip-sync)',
  403: 'No access to the capability, or invalid signature',
  404: 'Not found or owned by another account',
  409: 'A request with this Idempotency-Key is still in progress',
  422: 'Media reachable but not processable, or Idempotency-Key reused with a different body',
  503: 'Capability unavailable on this server (a required tool such as ffmpeg or the recognizer is not installed)',
});

/** `Idempotency-Key` header doc; `required` on the media job routes. */
export function idempotencyHeader(required: boolean): HeaderDoc {
  return idempotencyHeaderDoc(required, `${required ? 'Required. ' : ''}Replays the first result of this key for the same body (no second task or charge); 422 for a different body.`);
}
