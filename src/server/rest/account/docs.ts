/** Error responses and headers documented by the account routes (they feed openapi.json). */
import { errorResponsesWith, idempotencyHeaderDoc, type HeaderDoc } from '../common/docs.js';

/** Error responses with the spec's error body, by status. */
export const accountErrors = errorResponsesWith({
  400: 'Invalid body, query, URL, provider, language or Idempotency-Key (idempotency_key_required when missing)',
  401: 'API key missing, malformed, invalid, revoked, or sent in the URL',
  402: 'Insufficient credits',
  403: 'No access (public voices cannot be deleted)',
  404: 'Not found or owned by another account',
  409: 'Idempotency-Key still in progress, or the candidate was already saved (candidate_already_saved)',
  410: 'The voice design expired (design_expired)',
  422: 'Reference audio unprocessable (unprocessable_media), or Idempotency-Key reused with a different body (idempotency_key_reused)',
  500: 'Generation failed (the charge is refunded)',
});

/** The `Idempotency-Key` header of a creating POST. */
export function idempotencyHeader(required: boolean): HeaderDoc {
  return idempotencyHeaderDoc(required, 'Replays the first result for the same body without a second charge; a changed body needs a new key (422 idempotency_key_reused).');
}
