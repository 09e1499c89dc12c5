/**
 * REST errors of the reference server: `{ error: { code, message, requestId, ...extra } }`
 * (spec 7.1) with the status of spec 7.2.
 */

/** REST error codes (spec 7.3). The set may grow. */
export const ApiErrorCode = {
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  invalidRequest: 'invalid_request',
  insufficientCredits: 'insufficient_credits',
  notFound: 'not_found',
  generationFailed: 'generation_failed',
  unprocessable: 'unprocessable_media',
  rateLimited: 'rate_limited',
  unavailable: 'capability_unavailable',
  requestInProgress: 'ERR_REQUEST_IN_PROGRESS',
  requestIdConflict: 'ERR_REQUEST_ID_CONFLICT',
  requestAlreadyCompleted: 'ERR_REQUEST_ALREADY_COMPLETED',
  requestPreviouslyRefunded: 'ERR_REQUEST_PREVIOUSLY_REFUNDED',
  idempotencyKeyRequired: 'idempotency_key_required',
  idempotencyKeyReused: 'idempotency_key_reused',
  internalError: 'internal_error',
} as const;

/** Thrown by handlers; the router turns it into the spec's error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra properties of the error object (kept by clients, e.g. `supportedModels`). */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new HttpError(400, ApiErrorCode.invalidRequest, message, extra);
export const notFound = (what = 'resource') => new HttpError(404, ApiErrorCode.notFound, `${what} not found`);
export const forbidden = (message: string) => new HttpError(403, ApiErrorCode.forbidden, message);
export const unauthorized = (message: string) => new HttpError(401, ApiErrorCode.unauthorized, message);
export const insufficient = (message: string) => new HttpError(402, ApiErrorCode.insufficientCredits, message);
