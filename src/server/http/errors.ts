/**
 * REST errors of the reference server: `{ error: { code, message, requestId, ...extra } }`
 * (spec 7.1) with the status of spec 7.2.
 */

export { ApiErrorCode } from '../../protocol/codes.js';
import { ApiErrorCode } from '../../protocol/codes.js';

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
