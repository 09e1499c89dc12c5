/**
 * Telemetry: voxpipe's spans and metrics through OpenTelemetry, printed by
 * the SDK's console exporters. The embedded server is told to drop the
 * realtime connection once mid-audio, so the trace shows a resume: the
 * request span, its segment spans, and two attempt spans under the segment
 * the drop cut. Runs with no configuration:
 *
 *   npx tsx examples/otel-console.ts
 *
 * In production, hand `instrumentVoxpipe()` your own providers (or register
 * them globally and call it with no options) with an OTLP exporter instead.
 */
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { createSpeechStream, openService } from 'voxpipe';
import { instrumentVoxpipe } from 'voxpipe/otel';

const TEXT = 'Telemetry the ecosystem way. Every request is a span, every segment a child, and every connection attempt beneath it.';

const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 60_000 })] });
const otel = instrumentVoxpipe({ tracerProvider, meterProvider });

const service = await openService({ onNote: (n) => console.error(`note: ${n}`) });
try {
  // The embedded reference server drops the first connection after three audio frames (a configured service is left alone).
  service.embedded?.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1012 } });
  const speech = await createSpeechStream(service.config, { format: 'pcm', transport: 'realtime' });
  speech.once('resumed', () => service.embedded?.faults.clear());
  speech.end(TEXT);
  for await (const _ of speech) void _;
  const summary = speech.summary();
  console.log(`spoke ${summary.segments.length} segments, ${summary.bytes} bytes, resumed ${summary.resumed} time(s), first audio after ${Math.round(summary.waterfall.ttfaMs ?? 0)} ms`);
} finally {
  otel.disable();
  // Shutting down exports what is left: the spans are out already, the metrics go now.
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
  await service.close();
}
