/**
 * The error taxonomy. Every error voxpipe throws is a `VoxpipeError` with a
 * stable `code` users can match on; subclasses say where it came from.
 * Codes are the spec's codes where the spec has one (realtime `error.code`,
 * REST `error.code`), else voxpipe's own (`connection_failed`, `aborted`, ...).
 *
 * The API key must never reach a message or a property: `redact()` is applied
 * to the message, code, request id, stage, path and details of every error.
 *
 * Every code is in one catalogue (`protocol/codes.ts`) with its kind, which
 * `error.kind` reads.
 */
import { codeKind, type AnyCode, type CodeKind, type ConnectionErrorCode, type ProtocolErrorCode, type ResumeErrorCode } from './protocol/codes.js';

export interface VoxpipeErrorOptions {
  cause?: unknown;
  /** Server request id, kept for support. */
  requestId?: string | undefined;
  /** Whether the spec marks the failure retryable. */
  retryable?: boolean;
  /** Extra properties from the server's error body, kept as given. */
  details?: Record<string, unknown>;
}

export class VoxpipeError extends Error {
  override name = 'VoxpipeError';
  /** A code of the catalogue (`protocol/codes.ts`); each subclass narrows it to its own. */
  readonly code: AnyCode;
  readonly requestId: string | undefined;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  /** What kind of failure `code` is (`protocol/codes.ts`): what failover and retries decide on. */
  get kind(): CodeKind {
    return codeKind(this.code);
  }

  constructor(code: AnyCode, message: string, options: VoxpipeErrorOptions = {}) {
    super(redact(message), options.cause === undefined ? undefined : { cause: options.cause });
    // Every string here may come from the wire: a server or proxy that echoes
    // the Authorization value back must not get it into a property either.
    this.code = redact(code);
    this.requestId = options.requestId === undefined ? undefined : redact(options.requestId);
    this.retryable = options.retryable ?? false;
    this.details = redactDeep(options.details ?? {}) as Record<string, unknown>;
  }
}

/** A frame that breaks the realtime protocol (decode or validation failure). */
export class ProtocolError extends VoxpipeError {
  override name = 'ProtocolError';
  /** Dotted path of the offending field, when known (e.g. `request.speed`). */
  readonly path: string | undefined;
  declare readonly code: ProtocolErrorCode;
  constructor(code: ProtocolErrorCode, message: string, path?: string, options: VoxpipeErrorOptions = {}) {
    super(code, message, options);
    this.path = path === undefined ? undefined : redact(path);
  }
}

/** The server sent a realtime `error` event. */
export class RealtimeServerError extends VoxpipeError {
  override name = 'RealtimeServerError';
  readonly terminal: boolean;
  readonly stage: string | undefined;
  constructor(code: string, message: string, terminal: boolean, options: VoxpipeErrorOptions & { stage?: string | undefined } = {}) {
    super(code, message, options);
    this.terminal = terminal;
    this.stage = options.stage === undefined ? undefined : redact(options.stage);
  }
}

/** Could not connect, the handshake failed, or the transport dropped. */
export class ConnectionError extends VoxpipeError {
  override name = 'ConnectionError';
  /** HTTP status of a failed handshake, or the WebSocket close code. */
  readonly status: number | undefined;
  readonly closeCode: number | undefined;
  declare readonly code: ConnectionErrorCode;
  constructor(code: ConnectionErrorCode, message: string, options: VoxpipeErrorOptions & { status?: number; closeCode?: number } = {}) {
    super(code, message, options);
    this.status = options.status;
    this.closeCode = options.closeCode;
  }
}

/** A timer ran out (connect, authentication, idle, request). */
export class TimeoutError extends VoxpipeError {
  override name = 'TimeoutError';
  declare readonly code: 'timeout';
  constructor(message: string, options: VoxpipeErrorOptions = {}) {
    super('timeout', message, options);
  }
}

/** Reliable-mode resume could not recover the request. */
export class ResumeError extends VoxpipeError {
  override name = 'ResumeError';
  declare readonly code: ResumeErrorCode;
  constructor(code: ResumeErrorCode, message: string, options: VoxpipeErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * A segment's audio ended short of what the server said it carries (spec 6:
 * `segment_completed`/`usage` audio bytes, the status route's manifest), and
 * no recovery supplied the rest. Names the segment and the missing bytes, in
 * the segment's own byte space (no stream header).
 */
export class AudioIncompleteError extends VoxpipeError {
  override name = 'AudioIncompleteError';
  declare readonly code: 'audio_incomplete';
  readonly segmentId: string;
  /** Bytes the server said the segment carries. */
  readonly expectedBytes: number;
  /** Bytes of it received. */
  readonly receivedBytes: number;
  /** The missing byte range of the segment, `from` included, `to` excluded. */
  readonly missing: { from: number; to: number };
  constructor(segmentId: string, expectedBytes: number, receivedBytes: number, options: VoxpipeErrorOptions & { why?: string } = {}) {
    super('audio_incomplete', `segment ${segmentId}: ${expectedBytes - receivedBytes} of its ${expectedBytes} audio bytes never arrived (bytes ${receivedBytes} to ${expectedBytes})${options.why ? `; ${options.why}` : ''}`, {
      ...options,
      details: { ...options.details, segmentId, expectedBytes, receivedBytes, missingFrom: receivedBytes, missingTo: expectedBytes },
    });
    this.segmentId = redact(segmentId);
    this.expectedBytes = expectedBytes;
    this.receivedBytes = receivedBytes;
    this.missing = { from: receivedBytes, to: expectedBytes };
  }
}

/** The caller aborted (AbortSignal or `interrupt()`). */
export class AbortError extends VoxpipeError {
  override name = 'AbortError';
  declare readonly code: 'aborted';
  constructor(message = 'aborted', options: VoxpipeErrorOptions = {}) {
    super('aborted', message, options);
  }
}

/**
 * No slot of the deployment's concurrency budget (`budget.ts`) came within
 * the caller's `queueTimeoutMs`: the generation was never started, so
 * nothing was charged. Retryable: slots free up as other generations end.
 */
export class QueueTimeoutError extends VoxpipeError {
  override name = 'QueueTimeoutError';
  declare readonly code: 'queue_timeout';
  /** How long it waited, ms. */
  readonly waitedMs: number;
  constructor(waitedMs: number, state: { running: number; queued: number; limit: number | null }, options: VoxpipeErrorOptions = {}) {
    super(
      'queue_timeout',
      `no slot of the deployment's concurrency budget within ${waitedMs} ms of waiting (${state.running} generations running, cap ${state.limit ?? 'unlimited'}, ${state.queued} waiting)`,
      { retryable: true, ...options },
    );
    this.waitedMs = waitedMs;
  }
}

/** A capability that needs something missing here (ffmpeg, a recognizer, an audio device). */
export class UnavailableError extends VoxpipeError {
  override name = 'UnavailableError';
  declare readonly code: 'unavailable';
  constructor(message: string, options: VoxpipeErrorOptions = {}) {
    super('unavailable', message, options);
  }
}

/** A non-2xx REST response. Subclass chosen from the status by `ApiError.fromResponse`. */
export class ApiError extends VoxpipeError {
  override name = 'ApiError';
  readonly status: number;
  constructor(status: number, code: string, message: string, options: VoxpipeErrorOptions = {}) {
    super(code, message, options);
    this.status = status;
  }
}
export class BadRequestError extends ApiError { override name = 'BadRequestError'; }
export class AuthenticationError extends ApiError { override name = 'AuthenticationError'; }
export class InsufficientCreditsError extends ApiError { override name = 'InsufficientCreditsError'; }
export class PermissionDeniedError extends ApiError { override name = 'PermissionDeniedError'; }
export class NotFoundError extends ApiError { override name = 'NotFoundError'; }
export class ConflictError extends ApiError { override name = 'ConflictError'; }
export class UnprocessableError extends ApiError { override name = 'UnprocessableError'; }
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  /** Milliseconds from `Retry-After`, when the server sent it. */
  retryAfterMs: number | undefined;
}
export class InternalServerError extends ApiError { override name = 'InternalServerError'; }

/** Choose the ApiError subclass from the HTTP status (as openai-node's `APIError.generate`). */
export function apiErrorFromStatus(status: number, code: string, message: string, options: VoxpipeErrorOptions = {}): ApiError {
  const retryable = status === 429 || status >= 500;
  const opts = { ...options, retryable };
  switch (status) {
    case 400: return new BadRequestError(status, code, message, opts);
    case 401: return new AuthenticationError(status, code, message, opts);
    case 402: return new InsufficientCreditsError(status, code, message, opts);
    case 403: return new PermissionDeniedError(status, code, message, opts);
    case 404: return new NotFoundError(status, code, message, opts);
    case 409: return new ConflictError(status, code, message, opts);
    case 422: return new UnprocessableError(status, code, message, opts);
    case 429: return new RateLimitError(status, code, message, opts);
    default:
      return status >= 500 ? new InternalServerError(status, code, message, opts) : new ApiError(status, code, message, opts);
  }
}

const SECRET_PATTERNS: RegExp[] = [
  /(Bearer\s+)[^\s"',]+/gi,
  /((?:api[_-]?key|token|authorization)["']?\s*[:=]\s*["']?)[^\s"'&,]+/gi,
  /\bsk-[A-Za-z0-9._-]{4,}/g,
];
const registeredSecrets = new Set<string>();

/** Register a secret (the API key) so `redact()` removes it wherever it appears. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 4) registeredSecrets.add(secret);
}

/**
 * What every one of `SECRET_PATTERNS` needs somewhere in the text: a text
 * without any of these words matches none of them, so the patterns are not
 * run (the reader redacts every string of every event, so this is on the receive path).
 */
const MAYBE_SECRET = /bearer|api[_-]?key|token|authorization|sk-/i;

/** Remove API keys and bearer tokens from text meant for messages and logs. */
export function redact(text: string): string {
  if (text.length < 4) return text;
  let out = text;
  for (const secret of registeredSecrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  if (!MAYBE_SECRET.test(out)) return out;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (match, prefix: string | undefined) => (typeof prefix === 'string' && match.startsWith(prefix) ? `${prefix}[redacted]` : '[redacted]'));
  }
  return out;
}

/** Levels `redactDeep` walks; what lies deeper is dropped, never passed on unredacted. */
const REDACT_DEPTH = 8;

/**
 * `value` with `redact()` applied to every string inside it (plain objects
 * and arrays). The one redaction of structured data: `VoxpipeError` applies
 * it to every error's `details`, so no error builder needs to. Copy on
 * write: an object or array in which nothing changed is returned as it is
 * (most events carry no secret; no copy of each on the receive path).
 */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= REDACT_DEPTH) return '[too deep]';
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const r = redactDeep(v, depth + 1);
      if (r !== v) (out ??= value.slice())[i] = r;
    }
    return out ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  let out: Record<string, unknown> | undefined;
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    const v = (value as Record<string, unknown>)[k];
    const r = redactDeep(v, depth + 1);
    if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
  }
  return out ?? value;
}
