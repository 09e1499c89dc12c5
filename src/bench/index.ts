/**
 * The latency benchmark behind `voxpipe bench`, usable from code and from
 * the `bench/` scripts: read the capabilities, expand the case matrix, run
 * it (warm-up, interleaved measured runs), and build the report.
 */
import { loadavg } from 'node:os';
import type { ServiceConfig } from '../config.js';
import { VoxpipeError } from '../errors.js';
import { fetchCapabilities } from './capabilities.js';
import { expandCases, type CaseAxes } from './cases.js';
import { buildReport, type BenchReport } from './report.js';
import { DEFAULT_RUNS, DEFAULT_WARMUP } from './cases.js';
import { runBench, type RunnerOptions } from './runner.js';

export { BENCH_TRANSPORTS, BenchTransport, DEFAULT_BENCH_TRANSPORTS, expandCases, Variant } from './cases.js';
export type { BenchCase, CaseAxes, SkippedCase } from './cases.js';
export { defaultModel, fetchCapabilities, parseCapabilities } from './capabilities.js';
export type { BenchCapabilities, BenchModel } from './capabilities.js';
export { runCase } from './probe.js';
export type { RunSample } from './probe.js';
export { replayPlayback, DEVICE_BUFFER_MS } from './playback.js';
export type { Arrival, PlaybackResult } from './playback.js';
export { DEFAULT_RUN_TIMEOUT_MS, DEFAULT_RUNS, DEFAULT_WARMUP } from './cases.js';
export { roundOrder, runBench } from './runner.js';
export type { CaseSamples, RunnerOptions, RunnerProgress } from './runner.js';
export { buildReport, caseReport, machineInfo, REPORT_SCHEMA_VERSION } from './report.js';
export type { BenchReport, CaseReport, MachineInfo, ReportMeta } from './report.js';
export { median, percentileSorted, round, summarize } from './stats.js';
export type { Distribution } from './stats.js';
export { formatMs, formatTable } from './table.js';
export { renderPlot } from './plot.js';
export { ProgressBar, renderBar } from './progress.js';
export { BENCH_TEXT_NAMES, BENCH_TEXTS } from './texts.js';
export type { BenchTextName } from './texts.js';

export interface BenchmarkOptions extends RunnerOptions {
  /** What the report says about the service (embedded engine, configured URL). */
  service?: { embedded: boolean; engine?: string; baseUrl?: string };
}

/**
 * Run the whole benchmark against `config`. Resolves with the report; a
 * stream that fails is counted in its case's `errors`, it does not reject.
 * @throws VoxpipeError `invalid_arguments` when no case is left to run
 */
export async function runBenchmark(config: ServiceConfig, axes: CaseAxes, options: BenchmarkOptions = {}): Promise<BenchReport> {
  const startedAt = new Date();
  const startLoad = loadavg()[0] ?? 0;
  const caps = await fetchCapabilities(config);
  const { cases, skipped } = expandCases(axes, caps);
  if (cases.length === 0) {
    throw new VoxpipeError('invalid_arguments', `no case to run${skipped.length ? `: ${skipped.map((s) => `${s.id} (${s.reason})`).join('; ')}` : ''}`);
  }
  const results = await runBench(config, cases, options);
  return buildReport(results, {
    startedAt,
    startLoad,
    runs: options.runs ?? DEFAULT_RUNS,
    warmup: options.warmup ?? DEFAULT_WARMUP,
    service: { ...(options.service ?? { embedded: false }), capabilities: caps.source },
    skipped,
  });
}
