/**
 * `voxpipe/otel`: voxpipe's diagnostics channels (`telemetry/channels.ts`)
 * as OpenTelemetry spans and metrics.
 *
 *   import { instrumentVoxpipe } from 'voxpipe/otel';
 *   const otel = instrumentVoxpipe();          // the global tracer and meter providers
 *   ...
 *   otel.disable();
 *
 * Spans: `voxpipe.request` (a speech stream, from its open to its end) >
 * `voxpipe.segment` (cut from the text, until all of its audio is in) >
 * `voxpipe.attempt` (the segment on one realtime connection: a resumed
 * segment has two). A resume and a failover are events of the request span
 * and of each segment they move, a rollover to a next request one of the
 * request span; a failure sets the span's status and
 * `error.type` (the error's code). Each REST request is a client span of its
 * own (`http.request.method`, `http.response.status_code`, `url.full`
 * without the query).
 *
 * Metrics: `voxpipe.client.time_to_first_audio` and
 * `voxpipe.client.segment.duration` (histograms, seconds), counters of
 * resumes, failovers, audio bytes and billing units, and
 * `http.client.request.duration`.
 *
 * Attributes follow OpenTelemetry's semantic conventions where one exists
 * (`server.address`, `server.port`, `error.type`, `http.*`, `url.full`,
 * `gen_ai.request.model`), ours under `voxpipe.`. No attribute carries the
 * API key (the channels never do), nor any text unless `recordText` asks.
 *
 * `@opentelemetry/api` is an optional peer dependency: only this module
 * imports it, and `import 'voxpipe'` loads nothing of OpenTelemetry.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { context, metrics, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Counter, type Histogram, type MeterProvider, type Span, type TracerProvider } from '@opentelemetry/api';
import type { VoxpipeError } from '../errors.js';
import {
  ChannelName,
  RequestOutcome,
  type AttemptEndMessage,
  type AttemptStartMessage,
  type ChannelMessages,
  type HttpRequestEndMessage,
  type HttpRequestInfo,
  type HttpRequestStartMessage,
  type RequestEndMessage,
  type RequestErrorMessage,
  type RequestFailoverMessage,
  type RequestFirstAudioMessage,
  type RequestReadyMessage,
  type RequestResumeMessage,
  type RequestRetryMessage,
  type RequestRolloverMessage,
  type RequestStartMessage,
  type SegmentCompleteMessage,
  type SegmentFirstAudioMessage,
  type SegmentSentMessage,
  type SegmentStartMessage,
} from '../telemetry/channels.js';

/** The instrumentation scope's name (tracer and meter). */
export const INSTRUMENTATION_NAME = 'voxpipe';

export interface InstrumentVoxpipeOptions {
  /** Default the global one (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Default the global one (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /** Put each segment's text on its span (`voxpipe.segment.text`); default false: no text in any attribute. */
  recordText?: boolean;
}

export interface VoxpipeInstrumentation {
  /** Stop listening: no span or metric is made after this (spans still open stay unended). */
  disable(): void;
}

/** Attribute names of our own (OpenTelemetry's are written where they are used). */
const Attr = {
  requestId: 'voxpipe.request.id',
  transport: 'voxpipe.transport',
  mode: 'voxpipe.mode',
  format: 'voxpipe.audio.format',
  sampleRate: 'voxpipe.audio.sample_rate',
  voiceId: 'voxpipe.voice.id',
  outcome: 'voxpipe.outcome',
  segmentId: 'voxpipe.segment.id',
  characters: 'voxpipe.segment.characters',
  text: 'voxpipe.segment.text',
  units: 'voxpipe.units',
  rechargedUnits: 'voxpipe.units.recharged',
  bytes: 'voxpipe.audio.bytes',
  segments: 'voxpipe.segments',
  retries: 'voxpipe.retries',
  resumed: 'voxpipe.resumed',
  failovers: 'voxpipe.failovers',
  ttfaMs: 'voxpipe.ttfa_ms',
  firstAudioMs: 'voxpipe.segment.first_audio_ms',
  attempt: 'voxpipe.attempt',
  closeCode: 'voxpipe.close.code',
  pendingSegments: 'voxpipe.pending_segments',
  from: 'voxpipe.failover.from',
  to: 'voxpipe.failover.to',
  delayMs: 'voxpipe.retry.delay_ms',
} as const;

/** Span and event names. */
const Name = {
  request: 'voxpipe.request',
  segment: 'voxpipe.segment',
  attempt: 'voxpipe.attempt',
  resume: 'voxpipe.resume',
  rollover: 'voxpipe.rollover',
  failover: 'voxpipe.failover',
  retry: 'voxpipe.retry',
  firstAudio: 'voxpipe.first_audio',
} as const;

interface SegmentSpan {
  span: Span;
  context: Context;
  /** The transport the segment was handed to last (`segment:sent`). */
  session: object | undefined;
  /** The segment on its session's live connection, while it is pending. */
  attempt: Span | undefined;
}

/** A live realtime connection: the attempt spans of the segments it carries share its attributes. */
interface Connection {
  attempt: number;
  attributes: Attributes;
}

interface RequestSpan {
  span: Span;
  context: Context;
  /** Segments not yet completed. */
  segments: Map<string, SegmentSpan>;
  /** Low-cardinality attributes of the request's metrics. */
  metricAttributes: Attributes;
}

interface Instruments {
  ttfa: Histogram;
  segmentDuration: Histogram;
  resumes: Counter;
  failovers: Counter;
  bytes: Counter;
  units: Counter;
  httpDuration: Histogram;
}

/** `error.type`: the error's stable code, else its class. */
function errorType(error: VoxpipeError | Error): string {
  return (error as { code?: unknown }).code ? String((error as VoxpipeError).code) : error.name;
}

function fail(span: Span, error: VoxpipeError | Error | undefined, message?: string): void {
  if (!error) return;
  span.setAttribute('error.type', errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: message ?? errorType(error) });
}

/**
 * Listen to voxpipe's channels and turn them into spans and metrics. Returns
 * `disable()`. Calling it twice makes two independent instrumentations.
 */
export function instrumentVoxpipe(options: InstrumentVoxpipeOptions = {}): VoxpipeInstrumentation {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_NAME);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_NAME);
  const recordText = options.recordText ?? false;
  const m: Instruments = {
    ttfa: meter.createHistogram('voxpipe.client.time_to_first_audio', { unit: 's', description: 'Time from the first text written (or the open) to the first audio byte of a speech stream.' }),
    segmentDuration: meter.createHistogram('voxpipe.client.segment.duration', { unit: 's', description: 'Time from a segment cut from the text to all of its audio in.' }),
    resumes: meter.createCounter('voxpipe.client.resumes', { unit: '{resume}', description: 'Requests continued on a new connection.' }),
    failovers: meter.createCounter('voxpipe.client.failovers', { unit: '{failover}', description: 'Segments moved to another transport.' }),
    bytes: meter.createCounter('voxpipe.client.audio.bytes', { unit: 'By', description: 'Audio bytes the listener got.' }),
    units: meter.createCounter('voxpipe.client.units', { unit: '{unit}', description: 'Billing units of completed segments.' }),
    httpDuration: meter.createHistogram('http.client.request.duration', { unit: 's', description: 'Duration of voxpipe REST requests, retries included.' }),
  };
  const requests = new WeakMap<object, RequestSpan>();
  /** Which request a transport carries segments of (`segment:sent` said). */
  const sessions = new WeakMap<object, RequestSpan>();
  /** Each realtime session's live connection, from `attempt:start` to `attempt:end`. */
  const live = new WeakMap<object, Connection>();
  const https = new WeakMap<HttpRequestInfo, { span: Span; startMs: number }>();

  /** An attempt span for `s` on its session's live connection, if it has one. */
  function openAttempt(s: SegmentSpan): void {
    const c = s.session && live.get(s.session);
    if (c) s.attempt = tracer.startSpan(Name.attempt, { kind: SpanKind.CLIENT, attributes: c.attributes }, s.context);
  }

  const handlers: { [N in keyof ChannelMessages]: (message: ChannelMessages[N]) => void } = {
    [ChannelName.requestStart](msg: RequestStartMessage) {
      const span = tracer.startSpan(Name.request, { kind: SpanKind.CLIENT, attributes: { [Attr.transport]: msg.transportName } });
      const r: RequestSpan = { span, context: trace.setSpan(context.active(), span), segments: new Map(), metricAttributes: { [Attr.transport]: msg.transportName } };
      requests.set(msg.stream, r);
    },
    [ChannelName.requestReady](msg: RequestReadyMessage) {
      const r = requests.get(msg.stream);
      if (!r) return;
      const { ready } = msg;
      r.span.setAttributes({ [Attr.requestId]: msg.requestId, [Attr.transport]: ready.transport, [Attr.mode]: ready.mode, 'gen_ai.request.model': ready.model, [Attr.voiceId]: ready.voiceId, [Attr.format]: ready.format, [Attr.sampleRate]: ready.sampleRate });
      r.metricAttributes = { [Attr.transport]: ready.transport, [Attr.mode]: ready.mode, 'gen_ai.request.model': ready.model, [Attr.format]: ready.format };
    },
    [ChannelName.requestFirstAudio](msg: RequestFirstAudioMessage) {
      const r = requests.get(msg.stream);
      if (!r) return;
      r.span.setAttribute(Attr.ttfaMs, msg.ttfaMs);
      r.span.addEvent(Name.firstAudio, { [Attr.ttfaMs]: msg.ttfaMs });
      m.ttfa.record(msg.ttfaMs / 1000, r.metricAttributes);
    },
    [ChannelName.requestRetry](msg: RequestRetryMessage) {
      const r = requests.get(msg.stream);
      r?.span.addEvent(Name.retry, { [Attr.attempt]: msg.attempt, [Attr.delayMs]: msg.delayMs, 'error.type': errorType(msg.error) });
    },
    [ChannelName.requestResume](msg: RequestResumeMessage) {
      const r = requests.get(msg.stream);
      if (!r) return;
      const attributes = { [Attr.attempt]: msg.attempt, [Attr.requestId]: msg.requestId, [Attr.pendingSegments]: [...msg.pendingSegments] };
      r.span.addEvent(Name.resume, attributes);
      for (const id of msg.pendingSegments) r.segments.get(id)?.span.addEvent(Name.resume, attributes);
      m.resumes.add(1, r.metricAttributes);
    },
    [ChannelName.requestFailover](msg: RequestFailoverMessage) {
      const r = requests.get(msg.stream);
      if (!r) return;
      const attributes = { [Attr.from]: msg.from, [Attr.to]: msg.to, [Attr.pendingSegments]: [...msg.pendingSegments], 'error.type': errorType(msg.error) };
      r.span.addEvent(Name.failover, attributes);
      for (const id of msg.pendingSegments) {
        const seg = r.segments.get(id);
        if (!seg) continue;
        seg.span.addEvent(Name.failover, attributes);
        // The failed transport did not complete the segment: its attempt ends here, the next transport's begins.
        if (seg.attempt) {
          fail(seg.attempt, msg.error);
          seg.attempt.end();
          seg.attempt = undefined;
        }
      }
      m.failovers.add(1, r.metricAttributes);
    },
    [ChannelName.requestRollover](msg: RequestRolloverMessage) {
      const r = requests.get(msg.stream);
      r?.span.addEvent(Name.rollover, { [Attr.requestId]: msg.requestId });
    },
    [ChannelName.requestError](msg: RequestErrorMessage) {
      const r = requests.get(msg.stream);
      if (r) fail(r.span, msg.error, msg.error.message);
    },
    [ChannelName.requestEnd](msg: RequestEndMessage) {
      const r = requests.get(msg.stream);
      if (!r) return;
      requests.delete(msg.stream);
      // Segments and attempts still open end with the request (a failure or a barge-in cut them short).
      for (const s of r.segments.values()) {
        if (s.attempt) {
          fail(s.attempt, msg.error);
          s.attempt.end();
        }
        fail(s.span, msg.error);
        s.span.setAttribute(Attr.outcome, msg.outcome);
        s.span.end();
      }
      r.segments.clear();
      r.span.setAttributes({ [Attr.outcome]: msg.outcome, [Attr.bytes]: msg.bytes, [Attr.units]: msg.units, [Attr.segments]: msg.segments, [Attr.retries]: msg.retries, [Attr.resumed]: msg.resumed, [Attr.failovers]: msg.failovers });
      if (msg.requestId !== undefined) r.span.setAttribute(Attr.requestId, msg.requestId);
      if (msg.outcome === RequestOutcome.failed || msg.outcome === RequestOutcome.aborted) fail(r.span, msg.error);
      m.bytes.add(msg.bytes, r.metricAttributes);
      r.span.end();
    },
    [ChannelName.segmentStart](msg: SegmentStartMessage) {
      const r = requests.get(msg.stream);
      if (!r) return;
      const attributes: Attributes = { [Attr.segmentId]: msg.segmentId, [Attr.characters]: msg.characters };
      if (recordText) attributes[Attr.text] = msg.text;
      const span = tracer.startSpan(Name.segment, { attributes }, r.context);
      r.segments.set(msg.segmentId, { span, context: trace.setSpan(r.context, span), session: undefined, attempt: undefined });
    },
    [ChannelName.segmentSent](msg: SegmentSentMessage) {
      const r = requests.get(msg.stream);
      const s = r?.segments.get(msg.segmentId);
      if (!r || !s) return;
      sessions.set(msg.transport, r);
      s.session = msg.transport;
      openAttempt(s);
    },
    [ChannelName.segmentFirstAudio](msg: SegmentFirstAudioMessage) {
      const s = requests.get(msg.stream)?.segments.get(msg.segmentId);
      s?.span.addEvent(Name.firstAudio, { [Attr.firstAudioMs]: msg.latencyMs, [Attr.transport]: msg.transportName });
    },
    [ChannelName.segmentComplete](msg: SegmentCompleteMessage) {
      const r = requests.get(msg.stream);
      const s = r?.segments.get(msg.segmentId);
      if (!r || !s) return;
      r.segments.delete(msg.segmentId);
      s.attempt?.end();
      s.span.setAttributes({ [Attr.transport]: msg.transportName, [Attr.units]: msg.units, [Attr.bytes]: msg.bytes, [Attr.rechargedUnits]: msg.rechargedUnits });
      if (msg.firstAudioMs !== undefined) s.span.setAttribute(Attr.firstAudioMs, msg.firstAudioMs);
      s.span.end();
      const attributes = { ...r.metricAttributes, [Attr.transport]: msg.transportName };
      m.segmentDuration.record(msg.durationMs / 1000, attributes);
      m.units.add(msg.units, attributes);
    },
    [ChannelName.attemptStart](msg: AttemptStartMessage) {
      const attributes: Attributes = { [Attr.attempt]: msg.attempt };
      if (msg.requestId !== undefined) attributes[Attr.requestId] = msg.requestId;
      if (msg.server) Object.assign(attributes, { 'server.address': msg.server.address, 'server.port': msg.server.port });
      live.set(msg.session, { attempt: msg.attempt, attributes });
      // Segments handed to this session before its connection (a resume's) are carried by it from now.
      const r = sessions.get(msg.session);
      if (r) for (const s of r.segments.values()) if (s.session === msg.session && !s.attempt) openAttempt(s);
    },
    [ChannelName.attemptEnd](msg: AttemptEndMessage) {
      if (live.get(msg.session)?.attempt !== msg.attempt) return;
      live.delete(msg.session);
      const r = sessions.get(msg.session);
      if (!r) return;
      for (const s of r.segments.values()) {
        const a = s.attempt;
        if (!a || s.session !== msg.session) continue;
        s.attempt = undefined;
        a.setAttribute(Attr.outcome, msg.outcome);
        if (msg.code !== undefined) a.setAttribute(Attr.closeCode, msg.code);
        // The segment was still pending when its connection ended: this attempt did not complete it.
        a.setAttribute('error.type', msg.error ? errorType(msg.error) : `close_${msg.code ?? 'unknown'}`);
        a.setStatus({ code: SpanStatusCode.ERROR, message: msg.reason || msg.outcome });
        a.end();
      }
    },
    [ChannelName.httpRequestStart](msg: HttpRequestStartMessage) {
      const { request } = msg;
      const url = new URL(request.path, request.origin);
      const span = tracer.startSpan(request.method, {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': request.method, 'url.full': url.href, 'server.address': url.hostname, 'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80) },
      });
      https.set(request, { span, startMs: performance.now() });
    },
    [ChannelName.httpRequestEnd](msg: HttpRequestEndMessage) {
      const h = https.get(msg.request);
      if (!h) return;
      https.delete(msg.request);
      const attributes: Attributes = { 'http.request.method': msg.request.method };
      if (msg.status !== undefined) attributes['http.response.status_code'] = msg.status;
      if (msg.error) attributes['error.type'] = msg.status !== undefined ? String(msg.status) : errorType(msg.error);
      h.span.setAttributes(attributes);
      if (msg.retries > 0) h.span.setAttribute('http.request.resend_count', msg.retries);
      if (msg.error) h.span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(msg.error) });
      h.span.end();
      m.httpDuration.record((performance.now() - h.startMs) / 1000, attributes);
    },
  };

  const listeners = Object.entries(handlers).map(([name, handler]) => {
    const listener = (message: unknown): void => (handler as (m: unknown) => void)(message);
    subscribe(name, listener);
    return [name, listener] as const;
  });
  let enabled = true;
  return {
    disable() {
      if (!enabled) return;
      enabled = false;
      for (const [name, listener] of listeners) unsubscribe(name, listener);
    },
  };
}
