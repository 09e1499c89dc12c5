/**
 * The error catalogue: every `code` a voxpipe error can carry, in one place,
 * each with its kind. The realtime codes are the spec's (7.6), the REST codes
 * the spec's (7.3), the rest voxpipe's own. Decisions about a failure
 * (fail over to another transport? retry?) read the kind, not lists of
 * strings, so one rule holds whichever transport raised it.
 *
 * The named maps (`ErrorCode`, `ApiErrorCode`, `ClientErrorCode`, ...) are
 * re-exported where they always were.
 */

/** How a failure with this code is treated, whatever transport raised it. */
export const CodeKind = {
  /** The request itself is refused (voice, model, parameters, text, state): another transport would refuse it too. */
  request: 'request',
  /** The account may not (key, permission, credits, quota, limits): the same on every transport. */
  account: 'account',
  /** The path failed (network, provider, server, deadline): another attempt or transport may succeed. */
  transient: 'transient',
  /** A frame or response one side cannot use. */
  protocol: 'protocol',
  /** On this machine: arguments, configuration, output files, devices, decoding. */
  local: 'local',
  /** The caller stopped it. */
  aborted: 'aborted',
} as const;
export type CodeKind = (typeof CodeKind)[keyof typeof CodeKind];

/** Realtime `error.code` values (spec 7.6). The set may grow: treat unknown codes by `retryable`/`terminal`. */
export const ErrorCode = {
  // authentication
  authenticationFailed: 'authentication_failed',
  authenticationRequired: 'authentication_required',
  alreadyAuthenticated: 'already_authenticated',
  permissionDenied: 'permission_denied',
  // message state
  invalidMessage: 'invalid_message',
  invalidMessagepack: 'invalid_messagepack',
  invalidState: 'invalid_state',
  idempotencyConflict: 'idempotency_conflict',
  emptySegment: 'empty_segment',
  segmentTooLarge: 'segment_too_large',
  // limits
  sessionLimitExceeded: 'session_limit_exceeded',
  quotaExceeded: 'quota_exceeded',
  clientBackpressure: 'client_backpressure',
  // capability
  unsupportedParameter: 'unsupported_parameter',
  voiceNotFound: 'voice_not_found',
  modelNotFound: 'model_not_found',
  // provider
  providerUnavailable: 'provider_unavailable',
  providerTimeout: 'provider_timeout',
  generationFailed: 'generation_failed',
  // lifecycle
  billingFailed: 'billing_failed',
  connectionClosed: 'connection_closed',
  internalError: 'internal_error',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** REST `error.code` values (spec 7.3). The set may grow. */
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
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** Codes of errors the REST client raises itself (the server's come from its bodies). */
export const ClientErrorCode = {
  invalidOptions: 'invalid_options',
  connectionFailed: 'connection_failed',
  invalidResponse: 'invalid_response',
  unexpectedResponse: 'unexpected_response',
  tooManyRedirects: 'too_many_redirects',
} as const;

/** `ResumeError.code` values. */
export const ResumeErrorCode = {
  /**
   * Recovery failed `maxRetries` times with no progress in between, or took
   * longer than `maxResumeMs`; `cause` is the last failure, `details.attempts`
   * the attempts made. (When the last failure was a timeout, the machine
   * fails with a `TimeoutError` carrying the same cause and details.)
   */
  retriesExhausted: 'retries_exhausted',
  /** The status route says `failed_terminal`. */
  requestFailedTerminal: 'request_failed_terminal',
  /** The status route kept saying `running`. */
  requestStillRunning: 'request_still_running',
  /** The service completed the request before a queued segment was sent. */
  requestCompleted: 'request_completed',
  /** `start` with `retry_failed` was answered by a state that cannot be retried now. */
  requestNotResumable: 'request_not_resumable',
  /** The resumed request does not match the first one (format changed). */
  resumeMismatch: 'resume_mismatch',
} as const;
export type ResumeErrorCode = (typeof ResumeErrorCode)[keyof typeof ResumeErrorCode];

/**
 * Codes of the errors raised by sinks and decoders, besides `unavailable`
 * (`UnavailableError`: no device, player or ffmpeg) and `aborted`
 * (`AbortError`: destroyed before `end()`).
 */
export const SinkErrorCode = {
  /** The input bytes are not valid audio of the announced format. */
  decodeFailed: 'decode_failed',
  /** Writing a file, or a child process, failed. */
  sinkFailed: 'sink_failed',
} as const;
export type SinkErrorCode = (typeof SinkErrorCode)[keyof typeof SinkErrorCode];

/** Codes of the HTTP transports' audio handling. */
export const HttpAudioErrorCode = {
  /** The route answered a format the stream cannot be built from. */
  unexpectedFormat: 'unexpected_audio_format',
  /** A segment's PCM layout differs from the stream's first one. */
  layoutChanged: 'pcm_layout_changed',
} as const;

/** Everything else voxpipe raises, by where. */
export const LocalErrorCode = {
  aborted: 'aborted',
  timeout: 'timeout',
  connectTimeout: 'connect_timeout',
  keepaliveTimeout: 'keepalive_timeout',
  ticketFailed: 'ticket_failed',
  invalidServerFrame: 'invalid_server_frame',
  serverError: 'server_error',
  transportClosed: 'transport_closed',
  segmenterEnded: 'segmenter_ended',
  unavailable: 'unavailable',
  /** A service URL or option of the configuration is unusable (every entry point: client, SpeechStream, CLI). */
  invalidConfig: 'invalid_config',
  /** No API key was configured (every entry point: client, SpeechStream, CLI). */
  missingApiKey: 'missing_api_key',
  invalidArguments: 'invalid_arguments',
  outputUnwritable: 'output_unwritable',
  addressInUse: 'address_in_use',
  /** Another process has the reference server's data directory open (one process per directory). */
  dataDirInUse: 'data_dir_in_use',
  /** The reference server's database (`serve --database`) cannot be reached or refused the credentials. */
  databaseUnavailable: 'database_unavailable',
  /** The base URL answers, but not as a deployment of the service (404 on every route). */
  notADeployment: 'not_a_deployment',
  /** A `finish` with reason error or timeout mid-request: the status route decides what comes next. */
  requestInterrupted: 'request_interrupted',
  /** A job lost to a lost response cannot be told apart on this deployment's list (`jobs.createOrRecover`). */
  recoveryUnavailable: 'recovery_unavailable',
  /** A task with nothing to download, or a kind of task that has no download. */
  noResult: 'no_result',
  unsupported: 'unsupported',
  /** A segment ended with less audio than the server said it carries, and no recovery could supply the rest. */
  audioIncomplete: 'audio_incomplete',
  /** No slot of the deployment's concurrency budget came within the caller's `queueTimeoutMs` (`budget.ts`). */
  queueTimeout: 'queue_timeout',
} as const;
export type LocalErrorCode = (typeof LocalErrorCode)[keyof typeof LocalErrorCode];

/** `ConnectionError.code` values: could not connect, or the connection ended mid-request. */
export type ConnectionErrorCode =
  | typeof ClientErrorCode.connectionFailed
  | typeof ErrorCode.connectionClosed
  | typeof LocalErrorCode.connectTimeout
  | typeof LocalErrorCode.keepaliveTimeout
  | typeof LocalErrorCode.ticketFailed
  | typeof LocalErrorCode.requestInterrupted;

/** `ProtocolError.code` values: a realtime frame that breaks the protocol, either way. */
export type ProtocolErrorCode = ErrorCode | typeof LocalErrorCode.invalidServerFrame;

const KINDS = {
  // realtime (spec 7.6)
  authentication_failed: 'account',
  authentication_required: 'account',
  already_authenticated: 'protocol',
  permission_denied: 'account',
  invalid_message: 'request',
  invalid_messagepack: 'protocol',
  invalid_state: 'request',
  idempotency_conflict: 'request',
  empty_segment: 'request',
  segment_too_large: 'request',
  session_limit_exceeded: 'account',
  quota_exceeded: 'account',
  client_backpressure: 'transient',
  unsupported_parameter: 'request',
  voice_not_found: 'request',
  model_not_found: 'request',
  provider_unavailable: 'transient',
  provider_timeout: 'transient',
  generation_failed: 'transient',
  billing_failed: 'account',
  connection_closed: 'transient',
  internal_error: 'transient',
  // REST (spec 7.3)
  unauthorized: 'account',
  forbidden: 'account',
  invalid_request: 'request',
  insufficient_credits: 'account',
  not_found: 'request',
  unprocessable_media: 'request',
  rate_limited: 'transient',
  capability_unavailable: 'transient',
  ERR_REQUEST_IN_PROGRESS: 'transient',
  ERR_REQUEST_ID_CONFLICT: 'request',
  ERR_REQUEST_ALREADY_COMPLETED: 'request',
  ERR_REQUEST_PREVIOUSLY_REFUNDED: 'request',
  idempotency_key_required: 'request',
  idempotency_key_reused: 'request',
  // the REST client
  invalid_options: 'local',
  connection_failed: 'transient',
  invalid_response: 'protocol',
  unexpected_response: 'protocol',
  too_many_redirects: 'protocol',
  // resume
  retries_exhausted: 'transient',
  request_failed_terminal: 'transient',
  request_still_running: 'transient',
  // The unsent segments can still be spoken by another transport.
  request_completed: 'transient',
  request_not_resumable: 'transient',
  resume_mismatch: 'protocol',
  // sinks and HTTP audio
  decode_failed: 'local',
  sink_failed: 'local',
  unexpected_audio_format: 'protocol',
  pcm_layout_changed: 'protocol',
  // the rest
  aborted: 'aborted',
  timeout: 'transient',
  connect_timeout: 'transient',
  keepalive_timeout: 'transient',
  ticket_failed: 'transient',
  invalid_server_frame: 'protocol',
  server_error: 'transient',
  transport_closed: 'transient',
  segmenter_ended: 'local',
  unavailable: 'local',
  invalid_config: 'local',
  missing_api_key: 'local',
  invalid_arguments: 'local',
  output_unwritable: 'local',
  address_in_use: 'local',
  data_dir_in_use: 'local',
  database_unavailable: 'local',
  not_a_deployment: 'local',
  request_interrupted: 'transient',
  recovery_unavailable: 'request',
  no_result: 'request',
  unsupported: 'request',
  // Another attempt or transport may deliver the whole segment.
  audio_incomplete: 'transient',
  // Every transport of the deployment waits in the same budget: failing over would only queue again.
  queue_timeout: 'local',
} as const satisfies Readonly<Record<string, CodeKind>>;

/** Every code of the catalogue. */
export type KnownCode = keyof typeof KINDS;

/**
 * What `error.code` holds: a code of the catalogue, or a code a deployment
 * sent that the catalogue does not know (kept as given; its kind is `transient`).
 */
export type AnyCode = KnownCode | (string & {});

/** Every code of the catalogue. */
export const ALL_CODES: readonly KnownCode[] = /* @__PURE__ */ Object.keys(KINDS) as KnownCode[];

/** The kind of `code`; a code the catalogue does not know (a deployment's own) is `transient`. */
export function codeKind(code: string): CodeKind {
  return (KINDS as Readonly<Record<string, CodeKind>>)[code] ?? CodeKind.transient;
}

/** Whether `code` is in the catalogue. */
export function isKnownCode(code: string): boolean {
  return Object.hasOwn(KINDS, code);
}

/** `warning` codes the client raises itself (realtime sessions), beside the ones a server sends. */
export const WarningCode = {
  /** A completed request's manifest has no audio for a segment whose audio was not all emitted. */
  audioUnavailable: 'audio_unavailable',
  /** Audio for a segment this request never queued, or already completed: dropped. */
  unexpectedAudio: 'unexpected_audio',
  /** `audio` sequences skipped over within the reorder window (legal numbering may skip; the segment's byte count says whether audio is missing). */
  audioSequenceGap: 'audio_sequence_gap',
  /** A repeated `audio` frame (same segment, same sequence on one connection): dropped. */
  audioRepeat: 'audio_repeat',
  /** An `audio` frame that came after a later one of its segment was emitted: left out. */
  audioLate: 'audio_late',
} as const;
export type WarningCode = (typeof WarningCode)[keyof typeof WarningCode];
