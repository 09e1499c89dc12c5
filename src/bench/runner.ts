/**
 * Runs the cases: warm-up runs first (discarded), then the measured runs,
 * interleaved: round r runs every case once, starting at case r mod n, so
 * slow drift of a shared machine (other processes, thermal state, GC) falls
 * on every case alike instead of on whichever case ran last. Runs are
 * sequential: one run (of `concurrency` streams) at a time.
 */
import type { ServiceConfig } from '../config.js';
import type { BenchCase } from './cases.js';
import { runCase, type RunSample } from './probe.js';
import { DEFAULT_RUN_TIMEOUT_MS, DEFAULT_RUNS, DEFAULT_WARMUP } from './cases.js';

export interface RunnerOptions {
  /** Measured runs per case; default 20. */
  runs?: number;
  /** Discarded runs per case before measuring; default 3. */
  warmup?: number;
  /** Longest a run may take before its streams are aborted; default 120_000 ms. */
  runTimeoutMs?: number;
  /** Called after every run (warm-up ones included). */
  onProgress?: (progress: RunnerProgress) => void;
}

export interface RunnerProgress {
  /** Runs done so far, warm-up included. */
  done: number;
  total: number;
  /** The case just run. */
  caseId: string;
  warmup: boolean;
}

/** Every measured sample of one case (runs x concurrency of them). */
export interface CaseSamples {
  case: BenchCase;
  samples: RunSample[];
  /** Wall time of the measured runs, ms. */
  wallMs: number;
}


/** The order of one round: every case once, rotated by `round`. */
export function roundOrder(n: number, round: number): number[] {
  return Array.from({ length: n }, (_, i) => (i + round) % n);
}

export async function runBench(config: ServiceConfig, cases: readonly BenchCase[], options: RunnerOptions = {}): Promise<CaseSamples[]> {
  const runs = options.runs ?? DEFAULT_RUNS;
  const warmup = options.warmup ?? DEFAULT_WARMUP;
  const runTimeoutMs = options.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
  const total = cases.length * (runs + warmup);
  const results: CaseSamples[] = cases.map((c) => ({ case: c, samples: [], wallMs: 0 }));
  let done = 0;
  const step = (c: BenchCase, isWarmup: boolean): void => {
    done++;
    options.onProgress?.({ done, total, caseId: c.id, warmup: isWarmup });
  };
  for (let round = 0; round < warmup; round++) {
    for (const i of roundOrder(cases.length, round)) {
      const c = cases[i]!;
      await runCase(config, c, runTimeoutMs);
      step(c, true);
    }
  }
  for (let round = 0; round < runs; round++) {
    for (const i of roundOrder(cases.length, round)) {
      const result = results[i]!;
      const t0 = performance.now();
      result.samples.push(...(await runCase(config, result.case, runTimeoutMs)));
      result.wallMs += performance.now() - t0;
      step(result.case, false);
    }
  }
  return results;
}
