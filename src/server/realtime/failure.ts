/**
 * A realtime rule violation or failure, carrying what the `error` event needs
 * (spec 7.6): the code, whether the client may retry, and whether the session
 * ends. Handlers throw it; the session turns it into an `error` event.
 */
import { CloseCode, ErrorCode } from '../../protocol/constants.js';

/** What an `error` event says besides its envelope. */
export interface FailureOptions {
  /** Default false. */
  retryable?: boolean;
  /** Default false: the connection stays usable. */
  terminal?: boolean;
  /** Dotted path of the offending field. */
  path?: string | undefined;
  /** Where it happened (`auth`, `start`, `generation`, ...). */
  stage?: string;
}

/** A failure to report as a realtime `error` event. */
export class RealtimeFailure extends Error {
  override name = 'RealtimeFailure';
  readonly retryable: boolean;
  readonly terminal: boolean;
  readonly path: string | undefined;
  readonly stage: string | undefined;

  constructor(readonly code: ErrorCode, message: string, options: FailureOptions = {}) {
    super(message);
    this.retryable = options.retryable ?? false;
    this.terminal = options.terminal ?? false;
    this.path = options.path;
    this.stage = options.stage;
  }
}

const AUTH_CODES: readonly string[] = [ErrorCode.authenticationFailed, ErrorCode.authenticationRequired, ErrorCode.permissionDenied];
const SERVER_SIDE_CODES: readonly string[] = [
  ErrorCode.providerUnavailable,
  ErrorCode.providerTimeout,
  ErrorCode.generationFailed,
  ErrorCode.billingFailed,
  ErrorCode.internalError,
];

/**
 * WebSocket close code after a terminal error: 1013 (try again later) when the
 * error is retryable, so a client that only looks at close codes also resumes;
 * 1011 for a server or provider failure; 1008 (policy) for everything the
 * client caused, authentication included.
 */
export function closeCodeFor(code: string, retryable: boolean): number {
  if (retryable) return CloseCode.tryAgainLater;
  if (AUTH_CODES.includes(code)) return CloseCode.policyViolation;
  if (SERVER_SIDE_CODES.includes(code)) return CloseCode.internalError;
  return CloseCode.policyViolation;
}
