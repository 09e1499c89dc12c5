/**
 * Every realtime v2 event of the spec (4.10, 6, 7.6) as a zod schema, with
 * the TypeScript type inferred from it.
 *
 * Client events are strict: unknown fields are rejected, as the spec says.
 * Server events are parsed loosely (unknown fields are kept), because the spec
 * makes response fields additive: a newer server must not break an older client.
 */
import { z } from 'zod';
import { AUDIO_FORMATS } from './audio.js';
import { ErrorCode, FinishReason, Mode, RequestState } from './constants.js';
import { countChars, LIMITS } from './limits.js';

/**
 * A string of `min`..`max` Unicode code points. Too long is `tooLongCode`
 * (`segment_too_large` for text); too short is always `invalid_message`, since
 * an empty text is a malformed frame, not an oversized segment.
 */
function chars(min: number, max: number, tooLongCode: ErrorCode = ErrorCode.invalidMessage) {
  const message = `must be ${min} to ${max} characters`;
  return z.string().superRefine((s, ctx) => {
    const n = countChars(s);
    if (n < min) ctx.addIssue({ code: 'custom', message, params: { code: ErrorCode.invalidMessage } });
    else if (n > max) ctx.addIssue({ code: 'custom', message, params: { code: tooLongCode } });
  });
}

const id = () => chars(LIMITS.idMinChars, LIMITS.idMaxChars);
const eventId = id;

// ---------------------------------------------------------------- client events

/** `start.request`: the generation parameters. */
export const StartRequestSchema = z.strictObject({
  voice_id: id(),
  model: id(),
  format: z.enum(AUDIO_FORMATS as [string, ...string[]]).optional(),
  speed: z.number().min(LIMITS.speedMin).max(LIMITS.speedMax).optional(),
  volume: z.number().min(LIMITS.volumeMin).max(LIMITS.volumeMax).optional(),
  language: chars(LIMITS.languageMinChars, LIMITS.languageMaxChars).optional(),
  chunk_length: z.int().min(LIMITS.chunkLengthMin).max(LIMITS.chunkLengthMax).optional(),
  latency: z.enum(['normal', 'balanced', 'low']).optional(),
  emotion: chars(1, 64).optional(),
  instructions: chars(1, 1000).optional(),
  optimize_instructions: z.boolean().optional(),
});
export type StartRequest = z.infer<typeof StartRequestSchema>;

export const AuthEventSchema = z.strictObject({
  event: z.literal('auth'),
  token: chars(1, 512),
  event_id: eventId().optional(),
});

export const StartEventSchema = z
  .strictObject({
    event: z.literal('start'),
    request: StartRequestSchema,
    mode: z.enum([Mode.simple, Mode.reliable]).optional(),
    event_id: eventId().optional(),
    request_id: id().optional(),
    retry_failed: z.boolean().optional(),
  })
  .superRefine((v, ctx) => {
    if (v.mode === Mode.reliable) {
      if (v.event_id === undefined) ctx.addIssue({ code: 'custom', path: ['event_id'], message: 'reliable start requires event_id' });
      if (v.request_id === undefined) ctx.addIssue({ code: 'custom', path: ['request_id'], message: 'reliable start requires request_id' });
    } else if (v.retry_failed === true) {
      // Spec 4.10: "`retry_failed: true` reliable only"; an explicit false asks for nothing.
      ctx.addIssue({ code: 'custom', path: ['retry_failed'], message: 'retry_failed is for reliable mode only' });
    }
  });

export const InputEventSchema = z.strictObject({
  event: z.literal('input'),
  text: chars(1, LIMITS.simpleRequestMaxChars, ErrorCode.segmentTooLarge),
  event_id: eventId().optional(),
  commit: z.boolean().optional(),
});

export const TextEventSchema = z.strictObject({
  event: z.literal('text'),
  event_id: eventId(),
  sequence: z.int().min(1),
  text: chars(1, LIMITS.textFrameMaxChars, ErrorCode.segmentTooLarge),
});

export const FlushEventSchema = z.strictObject({
  event: z.literal('flush'),
  event_id: eventId(),
  segment_id: id(),
});

export const StopEventSchema = z.strictObject({
  event: z.literal('stop'),
  event_id: eventId(),
});

export const PingEventSchema = z.strictObject({
  event: z.literal('ping'),
  event_id: eventId().optional(),
  timestamp: z.number().optional(),
});

export const CLIENT_EVENT_SCHEMAS = {
  auth: AuthEventSchema,
  start: StartEventSchema,
  input: InputEventSchema,
  text: TextEventSchema,
  flush: FlushEventSchema,
  stop: StopEventSchema,
  ping: PingEventSchema,
} as const;

export type AuthEvent = z.infer<typeof AuthEventSchema>;
export type StartEvent = z.infer<typeof StartEventSchema>;
export type InputEvent = z.infer<typeof InputEventSchema>;
export type TextEvent = z.infer<typeof TextEventSchema>;
export type FlushEvent = z.infer<typeof FlushEventSchema>;
export type StopEvent = z.infer<typeof StopEventSchema>;
export type PingEvent = z.infer<typeof PingEventSchema>;
export type ClientEvent = AuthEvent | StartEvent | InputEvent | TextEvent | FlushEvent | StopEvent | PingEvent;
export type ClientEventName = keyof typeof CLIENT_EVENT_SCHEMAS;

// ---------------------------------------------------------------- server events

const common = {
  event_id: z.string(),
  trace_id: z.string(),
  timestamp: z.number(),
  in_reply_to: z.string().optional(),
};
const pcmMeta = {
  sample_rate: z.number().optional(),
  channels: z.number().optional(),
  bit_depth: z.number().optional(),
};

export const AuthenticatedEventSchema = z.looseObject({
  event: z.literal('authenticated'),
  ...common,
  session_id: z.string(),
  site: z.string(),
  protocol_version: z.number(),
  quota: z.number(),
});

export const ReadyEventSchema = z.looseObject({
  event: z.literal('ready'),
  ...common,
  mode: z.enum([Mode.simple, Mode.reliable]),
  request_id: z.string(),
  session_id: z.string(),
  provider: z.string(),
  model: z.string(),
  voice_id: z.string(),
  format: z.enum(AUDIO_FORMATS as [string, ...string[]]),
  ...pcmMeta,
});

export const InputAckEventSchema = z.looseObject({
  event: z.literal('input_ack'),
  ...common,
  request_id: z.string(),
  /**
   * The acknowledged `text` sequence. Our server always sends it; the
   * client's reader leaves it out when a deployment names it in a way no
   * reader knows, and the ack then answers the oldest text frame not yet
   * acknowledged (acks come in order).
   */
  sequence: z.number().optional(),
  characters: z.number(),
  buffered_characters: z.number(),
  remaining_capacity: z.number(),
});

export const SegmentAcceptedEventSchema = z.looseObject({
  event: z.literal('segment_accepted'),
  ...common,
  request_id: z.string(),
  segment_id: z.string(),
  characters: z.number(),
  reserved_units: z.number(),
});

export const AudioEventSchema = z.looseObject({
  event: z.literal('audio'),
  ...common,
  request_id: z.string(),
  session_id: z.string(),
  segment_id: z.string(),
  sequence: z.number(),
  audio: z.instanceof(Uint8Array),
  format: z.enum(AUDIO_FORMATS as [string, ...string[]]),
  ...pcmMeta,
});

export const UsageEventSchema = z.looseObject({
  event: z.literal('usage'),
  ...common,
  request_id: z.string(),
  segment_id: z.string(),
  segment_units: z.number(),
  session_units: z.number(),
  quota_remaining: z.number(),
  /** Audio bytes of the segment; absent when the deployment does not say (unknown is not 0). */
  audio_bytes: z.number().optional(),
});

export const SegmentCompletedEventSchema = z.looseObject({
  event: z.literal('segment_completed'),
  ...common,
  request_id: z.string(),
  segment_id: z.string(),
  units: z.number(),
  /** Audio bytes of the segment; absent when the deployment does not say (unknown is not 0). */
  audio_bytes: z.number().optional(),
});

export const RequestStatusEventSchema = z.looseObject({
  event: z.literal('request_status'),
  ...common,
  request_id: z.string(),
  state: z.enum(Object.values(RequestState) as [string, ...string[]]),
  retryable: z.boolean(),
  units: z.number(),
  result_available: z.boolean(),
});

export const WarningEventSchema = z.looseObject({
  event: z.literal('warning'),
  ...common,
  request_id: z.string().optional(),
  code: z.string(),
  message: z.string(),
});

export const ErrorEventSchema = z.looseObject({
  event: z.literal('error'),
  ...common,
  request_id: z.string().optional(),
  session_id: z.string().optional(),
  code: z.string(),
  message: z.string(),
  retryable: z.boolean(),
  terminal: z.boolean(),
  stage: z.string().optional(),
  path: z.string().optional(),
});

export const FinishEventSchema = z.looseObject({
  event: z.literal('finish'),
  ...common,
  request_id: z.string(),
  session_id: z.string(),
  reason: z.enum(Object.values(FinishReason) as [string, ...string[]]),
  units: z.number(),
});

export const PongEventSchema = z.looseObject({
  event: z.literal('pong'),
  ...common,
  session_id: z.string(),
  request_id: z.string().optional(),
});

export const SERVER_EVENT_SCHEMAS = {
  authenticated: AuthenticatedEventSchema,
  ready: ReadyEventSchema,
  input_ack: InputAckEventSchema,
  segment_accepted: SegmentAcceptedEventSchema,
  audio: AudioEventSchema,
  usage: UsageEventSchema,
  segment_completed: SegmentCompletedEventSchema,
  request_status: RequestStatusEventSchema,
  warning: WarningEventSchema,
  error: ErrorEventSchema,
  finish: FinishEventSchema,
  pong: PongEventSchema,
} as const;

export type AuthenticatedEvent = z.infer<typeof AuthenticatedEventSchema>;
export type ReadyEvent = z.infer<typeof ReadyEventSchema>;
export type InputAckEvent = z.infer<typeof InputAckEventSchema>;
export type SegmentAcceptedEvent = z.infer<typeof SegmentAcceptedEventSchema>;
export type AudioEvent = z.infer<typeof AudioEventSchema>;
export type UsageEvent = z.infer<typeof UsageEventSchema>;
export type SegmentCompletedEvent = z.infer<typeof SegmentCompletedEventSchema>;
export type RequestStatusEvent = z.infer<typeof RequestStatusEventSchema>;
export type WarningEvent = z.infer<typeof WarningEventSchema>;
export type ErrorEvent = z.infer<typeof ErrorEventSchema>;
export type FinishEvent = z.infer<typeof FinishEventSchema>;
export type PongEvent = z.infer<typeof PongEventSchema>;
export type ServerEvent =
  | AuthenticatedEvent | ReadyEvent | InputAckEvent | SegmentAcceptedEvent | AudioEvent | UsageEvent
  | SegmentCompletedEvent | RequestStatusEvent | WarningEvent | ErrorEvent | FinishEvent | PongEvent;
export type ServerEventName = keyof typeof SERVER_EVENT_SCHEMAS;
/** The server event named `N`. */
export type ServerEventOf<N extends ServerEventName> = z.infer<(typeof SERVER_EVENT_SCHEMAS)[N]>;
/** Fields a server builds for an event (the common envelope is added by the sender). */
export type ServerEventBody<N extends ServerEventName> = Omit<ServerEventOf<N>, 'event_id' | 'trace_id' | 'timestamp' | 'in_reply_to'> & { in_reply_to?: string };

// ---------------------------------------------------------------- request-status route

/** One segment of the manifest returned by `GET /v2/tts/requests/{request_id}`. */
export const SegmentManifestEntrySchema = z.looseObject({
  segment_id: z.string(),
  /** Order of the segment within the request, from 0. */
  index: z.number(),
  state: z.enum(['accepted', 'completed', 'failed']),
  characters: z.number(),
  units: z.number(),
  /** Absent when the deployment does not say (unknown is not 0). */
  audio_bytes: z.number().optional(),
  /** Route of the segment's complete audio in the request's format (needs the Bearer key), when stored. */
  audio_url: z.string().optional(),
});
export type SegmentManifestEntry = z.infer<typeof SegmentManifestEntrySchema>;

/** Body of `GET {rt_http_url}/v2/tts/requests/{request_id}`. */
export const RequestStatusSchema = z.looseObject({
  request_id: z.string(),
  state: z.enum(Object.values(RequestState) as [string, ...string[]]),
  retryable: z.boolean(),
  units: z.number(),
  result_available: z.boolean(),
  format: z.string().optional(),
  segments: z.array(SegmentManifestEntrySchema).optional(),
});
export type RequestStatus = z.infer<typeof RequestStatusSchema>;
