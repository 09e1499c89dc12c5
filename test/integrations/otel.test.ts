/**
 * `voxpipe/otel` with OpenTelemetry's SDK and its in-memory exporter, over
 * real sockets to the reference server on port 0: a resumed realtime
 * request is one request span > segment spans > attempt spans (the resumed
 * segment has two: the dropped connection and the one that completed it),
 * with a resume event, the time-to-first-audio histogram and the counters,
 * and no key or text in any attribute.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import type { ReferenceServer } from '../../src/server/index.js';
import { SpeechStream } from '../../src/stream/speech-stream.js';
import { instrumentVoxpipe, type VoxpipeInstrumentation } from '../../src/integrations/otel.js';
import { createSpeechStream } from '../../src/speech.js';
import { serviceConfigOf } from '../../src/service.js';
import { API_KEY, session, startTestServer } from '../realtime/fixtures.js';

const TEXT = 'The quick brown fox jumps over the lazy dog near the river bank. Pack my box with five dozen liquor jugs, said the sailor, twice.';

/** Collects on demand: the test reads the metrics when the stream ended. */
class TestReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

let server: ReferenceServer;
let exporter: InMemorySpanExporter;
let reader: TestReader;
let otel: VoxpipeInstrumentation | undefined;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
afterEach(() => {
  otel?.disable();
  server.faults.clear();
});

function instrument(recordText = false): void {
  exporter = new InMemorySpanExporter();
  reader = new TestReader();
  otel = instrumentVoxpipe({
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    meterProvider: new MeterProvider({ readers: [reader] }),
    recordText,
  });
}

async function speak(prefix: string): Promise<SpeechStream> {
  const speech = new SpeechStream({ transport: session(server), segmentIdPrefix: prefix, segmenter: { targetChars: 40, firstMinChars: 20 } });
  speech.end(TEXT);
  for await (const _ of speech) void _;
  return speech;
}

async function metric(name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
}

/** Every attribute value of a span and of its events, as strings. */
function values(span: ReadableSpan): string[] {
  const all: Attributes[] = [span.attributes, ...span.events.map((e) => e.attributes ?? {})];
  return all.flatMap((a) => Object.values(a).flatMap((v) => (Array.isArray(v) ? v.map(String) : [String(v)])));
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('voxpipe/otel', () => {
  it('a resumed request: request > segment > attempt, two attempts for the resumed segment, a resume event, first-audio metric, no key or text', async () => {
    instrument();
    server.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1012 } });
    const speech = await speak('otel');
    expect(speech.summary().resumed).toBe(1);

    const spans = exporter.getFinishedSpans();
    const requests = spans.filter((s) => s.name === 'voxpipe.request');
    expect(requests).toHaveLength(1);
    const request = requests[0]!;
    expect(request.attributes).toMatchObject({ 'voxpipe.request.id': speech.summary().requestId, 'voxpipe.transport': 'realtime', 'voxpipe.mode': 'reliable', 'voxpipe.outcome': 'completed', 'voxpipe.resumed': 1, 'voxpipe.audio.format': 'pcm' });
    expect(request.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(request.events.map((e) => e.name)).toContain('voxpipe.resume');

    const segments = spans.filter((s) => s.name === 'voxpipe.segment');
    expect(segments.length).toBe(speech.summary().segments.length);
    for (const s of segments) expect(parentOf(s)).toBe(request.spanContext().spanId);

    // The fault closes the first connection after 3 audio frames, in the first segment.
    const first = segments.find((s) => s.attributes['voxpipe.segment.id'] === 'otel-0')!;
    expect(first.events.map((e) => e.name)).toContain('voxpipe.resume');
    const attempts = spans.filter((s) => s.name === 'voxpipe.attempt' && parentOf(s) === first.spanContext().spanId).sort((a, b) => Number(a.attributes['voxpipe.attempt']) - Number(b.attributes['voxpipe.attempt']));
    expect(attempts).toHaveLength(2);
    const [dropped, completed] = attempts as [ReadableSpan, ReadableSpan];
    expect(dropped.attributes).toMatchObject({ 'voxpipe.attempt': 1, 'voxpipe.outcome': 'dropped', 'voxpipe.close.code': 1012, 'error.type': 'close_1012' });
    expect(dropped.status.code).toBe(SpanStatusCode.ERROR);
    expect(completed.attributes['voxpipe.attempt']).toBe(2);
    expect(completed.status.code).not.toBe(SpanStatusCode.ERROR);
    const ws = new URL(server.wsUrl);
    for (const a of attempts) expect(a.attributes).toMatchObject({ 'server.address': ws.hostname, 'server.port': Number(ws.port) });
    // Every attempt span hangs under a segment of this request.
    const segmentIds = new Set(segments.map((s) => s.spanContext().spanId));
    for (const a of spans.filter((s) => s.name === 'voxpipe.attempt')) expect(segmentIds.has(parentOf(a)!)).toBe(true);

    // Neither the key nor the text (any word run of it) in any attribute.
    const leaked = spans.flatMap(values).filter((v) => v.includes(API_KEY) || (v.length > 8 && TEXT.includes(v)));
    expect(leaked).toEqual([]);

    const ttfa = await metric('voxpipe.client.time_to_first_audio');
    const point = ttfa?.dataPoints[0]?.value as { count: number; sum: number } | undefined;
    expect(point?.count).toBe(1);
    expect(point!.sum).toBeCloseTo(speech.summary().waterfall.ttfaMs! / 1000, 6);
    const resumes = await metric('voxpipe.client.resumes');
    expect(resumes?.dataPoints[0]?.value).toBe(1);
    const bytes = await metric('voxpipe.client.audio.bytes');
    expect(bytes?.dataPoints[0]?.value).toBe(speech.summary().bytes);
    const units = await metric('voxpipe.client.units');
    expect(units?.dataPoints.reduce((n, p) => n + Number(p.value), 0)).toBe(speech.summary().units);
    const perSegment = await metric('voxpipe.client.segment.duration');
    expect(perSegment?.dataPoints.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBe(segments.length);
  });

  it('a text rolled over to next requests: the segments of each request get attempt spans of the connection that carried them', async () => {
    instrument();
    const speech = await createSpeechStream(serviceConfigOf(server, API_KEY), { format: 'pcm', transport: 'realtime', requestUnits: 80, segmenter: { targetChars: 40, firstMinChars: 20 } });
    speech.end(TEXT);
    for await (const _ of speech) void _;
    const { requestIds } = speech.summary();
    expect(requestIds.length).toBeGreaterThanOrEqual(2);
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'voxpipe.request')!;
    expect(request.events.filter((e) => e.name === 'voxpipe.rollover').map((e) => e.attributes?.['voxpipe.request.id'])).toEqual(requestIds.slice(1));
    const segments = spans.filter((s) => s.name === 'voxpipe.segment');
    const attempts = spans.filter((s) => s.name === 'voxpipe.attempt');
    // Every segment was carried by one connection, of one of the stream's requests, and no attempt failed.
    for (const segment of segments) {
      const mine = attempts.filter((a) => parentOf(a) === segment.spanContext().spanId);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.status.code).not.toBe(SpanStatusCode.ERROR);
    }
    expect(new Set(attempts.map((a) => a.attributes['voxpipe.request.id']))).toEqual(new Set(requestIds));
  });

  it('a failover to HTTP: failover events, the realtime attempt of the moved segment fails, the failover counted, sync requests as client spans', async () => {
    instrument();
    server.faults.set({ realtimeError: { afterAudioFrames: 3, code: 'provider_unavailable', retryable: false } });
    const speech = await createSpeechStream(serviceConfigOf(server, API_KEY), { format: 'pcm', transport: 'auto', segmenter: { targetChars: 40, firstMinChars: 20 } });
    speech.end(TEXT);
    for await (const _ of speech) void _;
    expect(speech.summary().failovers).toBe(1);
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'voxpipe.request')!;
    const failover = request.events.find((e) => e.name === 'voxpipe.failover');
    expect(failover?.attributes).toMatchObject({ 'voxpipe.failover.from': 'realtime', 'voxpipe.failover.to': 'sync', 'error.type': 'provider_unavailable' });
    expect(request.status.code).not.toBe(SpanStatusCode.ERROR);
    const moved = spans.filter((s) => s.name === 'voxpipe.segment' && s.events.some((e) => e.name === 'voxpipe.failover'));
    expect(moved.length).toBeGreaterThanOrEqual(1);
    for (const segment of moved) {
      const attempts = spans.filter((a) => a.name === 'voxpipe.attempt' && parentOf(a) === segment.spanContext().spanId);
      expect(attempts.map((a) => a.status.code)).toEqual([SpanStatusCode.ERROR]);
      expect(segment.attributes['voxpipe.transport']).toBe('sync');
    }
    expect((await metric('voxpipe.client.failovers'))?.dataPoints[0]?.value).toBe(1);
    const posts = spans.filter((s) => s.name === 'POST' && s.attributes['http.response.status_code'] === 200);
    expect(posts.length).toBeGreaterThanOrEqual(moved.length);
    for (const p of posts) expect(String(p.attributes['url.full'])).not.toContain('?');
  });

  it('recordText puts each segment text on its span; disable() stops the spans', async () => {
    instrument(true);
    const speech = await speak('text');
    const segments = exporter.getFinishedSpans().filter((s) => s.name === 'voxpipe.segment');
    expect(segments.map((s) => s.attributes['voxpipe.segment.text']).join('')).toBe(TEXT);
    expect(speech.summary().segments.length).toBe(segments.length);
    otel!.disable();
    exporter.reset();
    await speak('off');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
