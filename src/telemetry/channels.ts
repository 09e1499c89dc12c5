/**
 * What voxpipe publishes on Node's `diagnostics_channel`, as undici does:
 * every channel's name and the type of its message, in this one module.
 * Subscribe with `diagnostics_channel.subscribe(ChannelName.requestStart, fn)`;
 * `voxpipe/otel` turns these messages into spans and metrics.
 *
 * A publisher asks `hasSubscribers` first and builds its message only then,
 * so a process that subscribes to nothing pays one property read per event
 * and nothing per audio frame.
 *
 * Correlation is by object, as undici's `request`: every message of a
 * speech stream carries `stream` (the `SpeechStream`), every connection
 * attempt `session` (the realtime transport that made it; `segment:sent`
 * names the transport a segment went to), and both messages of an HTTP request the same `request`.
 * Messages never carry the API key. Only `segment:start` carries text (the
 * segment's, as the stream's `segment-start` event does).
 *
 * Times are milliseconds. Nothing here is in the browser bundle: the
 * platform-neutral driver and speech core publish nothing; the Node side
 * (SpeechStream, the Node realtime session, the HTTP client) does.
 */
import { channel } from 'node:diagnostics_channel';
import type { VoxpipeError } from '../errors.js';
import type { ReadyInfo, SegmentTransport, TransportName } from '../transport.js';

/** Every channel voxpipe publishes on. */
export const ChannelName = {
  /** A speech stream opens: its request starts (`RequestStartMessage`). */
  requestStart: 'voxpipe:request:start',
  /** The service confirmed the request: id, mode, model, format (`RequestReadyMessage`). */
  requestReady: 'voxpipe:request:ready',
  /** The stream's first audio byte (`RequestFirstAudioMessage`). */
  requestFirstAudio: 'voxpipe:request:first-audio',
  /** A retryable failure: the transport backs off and tries again (`RequestRetryMessage`). */
  requestRetry: 'voxpipe:request:retry',
  /** The request continues on a new connection (`RequestResumeMessage`). */
  requestResume: 'voxpipe:request:resume',
  /** The segments not yet completed move to another transport (`RequestFailoverMessage`). */
  requestFailover: 'voxpipe:request:failover',
  /** A long text moved on to a next request, opened ahead (`RequestRolloverMessage`). */
  requestRollover: 'voxpipe:request:rollover',
  /** The stream failed or was aborted; `request:end` follows (`RequestErrorMessage`). */
  requestError: 'voxpipe:request:error',
  /** The stream ended, once: completed, interrupted, failed or aborted (`RequestEndMessage`). */
  requestEnd: 'voxpipe:request:end',
  /** A segment was cut from the text written (`SegmentStartMessage`). */
  segmentStart: 'voxpipe:segment:start',
  /** A segment was handed to a transport: the first, or after a failover the next (`SegmentSentMessage`). */
  segmentSent: 'voxpipe:segment:sent',
  /** A segment's first audio byte reached the stream (`SegmentFirstAudioMessage`). */
  segmentFirstAudio: 'voxpipe:segment:first-audio',
  /** A segment completed: all of its audio is in (`SegmentCompleteMessage`). */
  segmentComplete: 'voxpipe:segment:complete',
  /** A realtime connection attempt starts (`AttemptStartMessage`). */
  attemptStart: 'voxpipe:attempt:start',
  /** A realtime connection attempt ended: could not connect, closed or dropped (`AttemptEndMessage`). */
  attemptEnd: 'voxpipe:attempt:end',
  /** A REST request starts, retries included until `http:request:end` (`HttpRequestStartMessage`). */
  httpRequestStart: 'voxpipe:http:request:start',
  /** A REST request ended with a status or an error (`HttpRequestEndMessage`). */
  httpRequestEnd: 'voxpipe:http:request:end',
} as const;
export type ChannelName = (typeof ChannelName)[keyof typeof ChannelName];

/** What every message of a speech stream carries. */
export interface StreamMessage {
  /** The `SpeechStream`: the key to correlate a stream's messages by. */
  stream: object;
  /** The current request's id, once the service confirmed it (`request:ready`). */
  requestId: string | undefined;
}

export interface RequestStartMessage extends StreamMessage {
  /** The transport that carries the stream's segments (the `session` of its connection attempts). */
  transport: SegmentTransport;
  transportName: TransportName;
}

export interface RequestReadyMessage extends StreamMessage {
  requestId: string;
  /** What the service confirmed: mode, model, voice, format, PCM layout. */
  ready: ReadyInfo;
}

export interface RequestFirstAudioMessage extends StreamMessage {
  /** Time to first audio: first audio minus first text written (or the open, whichever is later), ms. */
  ttfaMs: number;
  transportName: TransportName;
}

export interface RequestRetryMessage extends StreamMessage {
  /** 1 for the first retry. */
  attempt: number;
  error: VoxpipeError;
  delayMs: number;
}

export interface RequestResumeMessage extends StreamMessage {
  requestId: string;
  attempt: number;
  /** Segments the new connection generates again (or continues). */
  pendingSegments: readonly string[];
}

export interface RequestFailoverMessage extends StreamMessage {
  from: TransportName;
  to: TransportName;
  /** The transport taking over (the `session` of its connection attempts). */
  transport: SegmentTransport;
  pendingSegments: readonly string[];
  /** Pending segments whose audio had begun: the new transport generates and charges them again. */
  recharged: readonly string[];
  error: VoxpipeError;
}

export interface RequestRolloverMessage extends StreamMessage {
  /** The next request's id. */
  requestId: string;
  /** The next request's transport (the `session` of its connection attempts, which began when it was opened ahead). */
  transport: SegmentTransport;
}

export interface RequestErrorMessage extends StreamMessage {
  error: VoxpipeError;
}

/** How a stream ended. */
export const RequestOutcome = {
  completed: 'completed',
  /** Barge-in (`interrupt()`). */
  interrupted: 'interrupted',
  failed: 'failed',
  /** The stream's abort signal. */
  aborted: 'aborted',
} as const;
export type RequestOutcome = (typeof RequestOutcome)[keyof typeof RequestOutcome];

export interface RequestEndMessage extends StreamMessage {
  outcome: RequestOutcome;
  /** Set when `outcome` is `failed` or `aborted`. */
  error: VoxpipeError | undefined;
  transportName: TransportName;
  /** Time to first audio, ms; absent when no audio came. */
  ttfaMs: number | undefined;
  /** From the open to the end, ms. */
  durationMs: number;
  /** Audio bytes the listener got. */
  bytes: number;
  /** Billing units of the completed segments. */
  units: number;
  segments: number;
  retries: number;
  resumed: number;
  failovers: number;
}

export interface SegmentStartMessage extends StreamMessage {
  segmentId: string;
  characters: number;
  /** The segment's exact text (spaces kept). */
  text: string;
}

export interface SegmentSentMessage extends StreamMessage {
  segmentId: string;
  /** The transport that carries it now (the `session` of its connection attempts, when realtime). */
  transport: SegmentTransport;
  transportName: TransportName;
}

export interface SegmentFirstAudioMessage extends StreamMessage {
  segmentId: string;
  transportName: TransportName;
  /** From the segment's text received to its first audio byte, ms. */
  latencyMs: number;
}

export interface SegmentCompleteMessage extends StreamMessage {
  segmentId: string;
  transportName: TransportName;
  units: number;
  /** Audio bytes of the segment the listener got. */
  bytes: number;
  /** Units charged again after a failover; 0 when none. */
  rechargedUnits: number;
  /** From the segment's text received to its first audio byte, ms; absent when it had none. */
  firstAudioMs: number | undefined;
  /** From the segment's text received to its completion, ms. */
  durationMs: number;
}

/** Where a connection attempt goes: never its credentials. */
export interface ServerEndpoint {
  /** Host of the realtime URL. */
  address: string;
  port: number;
}

export interface AttemptStartMessage {
  /** The realtime transport (a `ReliableSession` or `SimpleSession`) making the attempt. */
  session: SegmentTransport;
  /** The request id the session chose, when it chose one. */
  requestId: string | undefined;
  /** 1 for the session's first connection. */
  attempt: number;
  server: ServerEndpoint | undefined;
}

/** How a connection attempt ended. */
export const AttemptOutcome = {
  /** It could not connect (refused, timed out, unauthorized). */
  failed: 'failed',
  /** It closed normally (1000). */
  closed: 'closed',
  /** It closed with any other code or dropped: the request resumes on a next attempt, or fails. */
  dropped: 'dropped',
} as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

export interface AttemptEndMessage extends AttemptStartMessage {
  outcome: AttemptOutcome;
  /** WebSocket close code (absent when it never connected). */
  code: number | undefined;
  reason: string | undefined;
  error: VoxpipeError | undefined;
}

/** One REST request, the same object in its start and end message. */
export interface HttpRequestInfo {
  method: string;
  /** Scheme, host and port. */
  origin: string;
  /** Path of the URL, no query. */
  path: string;
}

export interface HttpRequestStartMessage {
  request: HttpRequestInfo;
}

export interface HttpRequestEndMessage {
  request: HttpRequestInfo;
  /** HTTP status of the last response; absent when none came. */
  status: number | undefined;
  /** Retries made before the response that ended it (0 when it failed). */
  retries: number;
  error: VoxpipeError | undefined;
}

/** The message type of each channel. */
export interface ChannelMessages {
  [ChannelName.requestStart]: RequestStartMessage;
  [ChannelName.requestReady]: RequestReadyMessage;
  [ChannelName.requestFirstAudio]: RequestFirstAudioMessage;
  [ChannelName.requestRetry]: RequestRetryMessage;
  [ChannelName.requestResume]: RequestResumeMessage;
  [ChannelName.requestFailover]: RequestFailoverMessage;
  [ChannelName.requestRollover]: RequestRolloverMessage;
  [ChannelName.requestError]: RequestErrorMessage;
  [ChannelName.requestEnd]: RequestEndMessage;
  [ChannelName.segmentStart]: SegmentStartMessage;
  [ChannelName.segmentSent]: SegmentSentMessage;
  [ChannelName.segmentFirstAudio]: SegmentFirstAudioMessage;
  [ChannelName.segmentComplete]: SegmentCompleteMessage;
  [ChannelName.attemptStart]: AttemptStartMessage;
  [ChannelName.attemptEnd]: AttemptEndMessage;
  [ChannelName.httpRequestStart]: HttpRequestStartMessage;
  [ChannelName.httpRequestEnd]: HttpRequestEndMessage;
}

/** A channel as publishers use it: ask, then publish a typed message. */
export interface Publisher<M> {
  readonly hasSubscribers: boolean;
  publish(message: M): void;
}

type Publishers = { [K in keyof typeof ChannelName]: Publisher<ChannelMessages[(typeof ChannelName)[K]]> };

/** The publishers, one per channel, made once (a channel object is what keeps `hasSubscribers` cheap). */
export const publish = Object.fromEntries(Object.entries(ChannelName).map(([key, name]) => [key, channel(name)])) as unknown as Publishers;

/** Where a URL points (host and port, the scheme's default when absent), never its credentials; undefined for an unparsable one. */
export function endpointOf(url: string): ServerEndpoint | undefined {
  try {
    const u = new URL(url);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80;
    return { address: u.hostname, port };
  } catch {
    return undefined;
  }
}
