/**
 * The one JSON document of `voxpipe bench --json`: how it was measured, on
 * what, and per case the distributions (p50, p90, p95, p99, IQR...) with
 * every raw sample kept, so anyone can plot or test the figures again.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import type { BenchCase, SkippedCase } from './cases.js';
import type { CaseSamples } from './runner.js';
import { DEVICE_BUFFER_MS } from './playback.js';
import { round, roundDistribution, summarize, type Distribution } from './stats.js';
import { BENCH_TEXTS } from './texts.js';

export const REPORT_SCHEMA_VERSION = 1;

export interface CaseReport extends BenchCase {
  textChars: number;
  /** Streams measured (runs x concurrency). */
  samples: number;
  /** Streams that failed. */
  errors: number;
  /** Failures by error code. */
  errorCodes: Record<string, number>;
  /** Reconnects and HTTP retries, summed over the streams. */
  retries: number;
  /** Text written to first decodable audio. */
  ttfaMs: Distribution | null;
  /** Realtime open to `ready` (null for HTTP transports). */
  connectMs: Distribution | null;
  /** Text written to the last decoded audio. */
  generationMs: Distribution | null;
  /** Real-time factor: audio duration / generation time (higher is faster). */
  rtf: Distribution | null;
  audioMs: Distribution | null;
  underruns: { total: number; streamsWithUnderruns: number; silenceMs: number };
  /** Seams between segments (pcm cases with more than one segment; else null): silence on each side, the pause heard, the sample jump. */
  seams: SeamReport | null;
  /** Wall time of the measured runs, ms. */
  wallMs: number;
  /** Every measured value, in run order (failed streams left out), rounded to µs. */
  raw: { ttfaMs: number[]; connectMs: number[] };
}

export interface SeamReport {
  count: number;
  silenceBeforeMs: Distribution | null;
  silenceAfterMs: Distribution | null;
  gapMs: Distribution | null;
  /** |sample after - sample before| at the join, full scale 32768. */
  jump: Distribution | null;
  /** Seams whose jump is a click (above 656: 2% of full scale). */
  clicks: number;
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemoryMiB: number;
  node: string;
  platform: string;
  arch: string;
  /** 1-minute load average at start and at end: how busy the machine was. */
  loadAverage: { start: number; end: number };
}

export interface BenchReport {
  tool: 'voxpipe bench';
  schemaVersion: number;
  startedAt: string;
  durationMs: number;
  machine: MachineInfo;
  service: {
    /** The embedded reference server (nothing configured) or a configured service. */
    embedded: boolean;
    /** Engine of the embedded server. */
    engine?: string;
    /** `{base_url}` of a configured service (never the key). */
    baseUrl?: string;
    capabilities: 'capabilities' | 'fallback';
  };
  method: {
    runs: number;
    warmup: number;
    interleaved: boolean;
    timer: string;
    cold: string;
    warm: string;
    percentiles: string;
    playback: string;
  };
  cases: CaseReport[];
  skipped: SkippedCase[];
}

export interface ReportMeta {
  startedAt: Date;
  startLoad: number;
  runs: number;
  warmup: number;
  service: BenchReport['service'];
  skipped: SkippedCase[];
}

const dist = (values: number[]): Distribution | null => {
  const d = summarize(values);
  return d ? roundDistribution(d) : null;
};

function seamReport(seams: readonly NonNullable<CaseSamples['samples'][number]['seams']>[number][]): SeamReport | null {
  if (seams.length === 0) return null;
  return {
    count: seams.length,
    silenceBeforeMs: dist(seams.map((s) => s.silenceBeforeMs)),
    silenceAfterMs: dist(seams.map((s) => s.silenceAfterMs)),
    gapMs: dist(seams.map((s) => s.gapMs)),
    jump: dist(seams.map((s) => s.jump)),
    clicks: seams.filter((s) => s.click).length,
  };
}

/** Summarize one case's samples. */
export function caseReport(result: CaseSamples): CaseReport {
  const ok = result.samples.filter((s) => s.error === undefined);
  const errorCodes: Record<string, number> = {};
  for (const s of result.samples) if (s.error !== undefined) errorCodes[s.error] = (errorCodes[s.error] ?? 0) + 1;
  const ttfa = ok.flatMap((s) => (s.ttfaMs === undefined ? [] : [s.ttfaMs]));
  const connect = result.samples.flatMap((s) => (s.connectMs === undefined || s.error !== undefined ? [] : [s.connectMs]));
  const generation = ok.flatMap((s) => (s.generationMs === undefined ? [] : [s.generationMs]));
  const rtf = ok.flatMap((s) => (s.generationMs !== undefined && s.generationMs > 0 && s.audioMs > 0 ? [s.audioMs / s.generationMs] : []));
  return {
    ...result.case,
    textChars: BENCH_TEXTS[result.case.text].length,
    samples: result.samples.length,
    errors: result.samples.length - ok.length,
    errorCodes,
    retries: result.samples.reduce((n, s) => n + s.retries, 0),
    ttfaMs: dist(ttfa),
    connectMs: dist(connect),
    generationMs: dist(generation),
    rtf: dist(rtf),
    audioMs: dist(ok.map((s) => s.audioMs)),
    underruns: {
      total: ok.reduce((n, s) => n + s.underruns, 0),
      streamsWithUnderruns: ok.filter((s) => s.underruns > 0).length,
      silenceMs: round(ok.reduce((n, s) => n + s.underrunMs, 0), 1),
    },
    seams: seamReport(ok.flatMap((s) => s.seams ?? [])),
    wallMs: round(result.wallMs, 1),
    raw: { ttfaMs: ttfa.map((v) => round(v)), connectMs: connect.map((v) => round(v)) },
  };
}

export function machineInfo(startLoad: number): MachineInfo {
  const cpuList = cpus();
  return {
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    totalMemoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    loadAverage: { start: round(startLoad, 2), end: round(loadavg()[0] ?? 0, 2) },
  };
}

/** The whole document. */
export function buildReport(results: readonly CaseSamples[], meta: ReportMeta): BenchReport {
  return {
    tool: 'voxpipe bench',
    schemaVersion: REPORT_SCHEMA_VERSION,
    startedAt: meta.startedAt.toISOString(),
    durationMs: round(Date.now() - meta.startedAt.getTime(), 0),
    machine: machineInfo(meta.startLoad),
    service: meta.service,
    method: {
      runs: meta.runs,
      warmup: meta.warmup,
      interleaved: true,
      timer: 'starts when the text is written to the SpeechStream; stops at the first output of the format decoder (pcm: first whole sample frame; wav: first sample after the header; mp3/opus: first decoded frame)',
      cold: 'no connection before the timer: the time to first audio includes connecting (realtime connect-to-ready is also reported alone as connectMs); HTTP requests use new TCP connections',
      warm: 'realtime stream open and ready, HTTP keep-alive connection open, decoder loaded, before the timer starts',
      percentiles: 'exact, from the sorted samples, linear interpolation between ranks (type 7)',
      playback: `decoded audio replayed at its arrival times through a clock-paced NullClockSink (${DEVICE_BUFFER_MS} ms device buffer, playback from the first audio)`,
    },
    cases: results.map(caseReport),
    skipped: meta.skipped,
  };
}
