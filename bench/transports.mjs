// Time to first audio of every transport against the same reference server
// (tone engine, child process) in one run: realtime simple, realtime
// reliable, sync, compat and async, cold and warm, p50 and p99, through the
// `voxpipe bench` harness (interleaved runs, timer to the first decodable
// audio). The baseline is realtime reliable, warm.
// async polls each job every 3 s (spec 8, the client's default), so its runs
// take ~3 s each. Options: --runs N (20) --warmup N (2).
// Run `npm run build` first. Writes bench/out/transports.json (the full
// bench report is in its `report` field) and bench/out/transports.svg.
import { writeFileSync } from 'node:fs';
import { BENCH_TRANSPORTS, formatTable, renderPlot, runBenchmark } from '../dist/bench/index.js';
import { argInt, machine, r, resultPath, startChildServer, writeResults } from './_common.mjs';

const RUNS = argInt('runs', 20);
const WARMUP = argInt('warmup', 2);

const server = await startChildServer({ engine: 'tone' });
let report;
try {
  report = await runBenchmark(
    server.config,
    { transports: BENCH_TRANSPORTS, formats: ['pcm'], models: 'default', voices: 'first', texts: ['short'], concurrency: [1], variants: ['cold', 'warm'] },
    {
      runs: RUNS,
      warmup: WARMUP,
      service: { embedded: false, baseUrl: 'voxpipe serve --engine tone (child process, loopback)' },
      // A redrawn line only where someone watches; in a log it is noise.
      ...(process.stderr.isTTY && { onProgress: (p) => process.stderr.write(`\r${`${p.done}/${p.total} ${p.caseId}`.padEnd(60)}`) }),
    },
  );
} finally {
  if (process.stderr.isTTY) process.stderr.write('\n');
  await server.close();
}

const baseline = report.cases.find((c) => c.transport === 'realtime-reliable' && c.variant === 'warm');
const rows = report.cases.map((c) => ({
  transport: c.transport,
  variant: c.variant,
  ok: c.samples - c.errors,
  samples: c.samples,
  p50Ms: c.ttfaMs?.p50 ?? null,
  p99Ms: c.ttfaMs?.p99 ?? null,
  minMs: c.ttfaMs?.min ?? null,
  connectP50Ms: c.connectMs?.p50 ?? null,
  p50VsRealtimeReliableWarm: c.ttfaMs && baseline?.ttfaMs ? r(c.ttfaMs.p50 / baseline.ttfaMs.p50, 2) : null,
  errors: c.errorCodes,
}));
const svg = resultPath('transports.svg');
writeFileSync(svg, renderPlot(report));
const file = writeResults('transports', {
  bench: 'transports',
  date: new Date().toISOString(),
  machine: machine(),
  server: 'voxpipe serve --engine tone in a child process (loopback)',
  baseline: 'realtime reliable, warm',
  runs: RUNS,
  warmup: WARMUP,
  rows,
  report,
});

process.stdout.write(formatTable(report));
console.log('\ntime to first audio by transport (ms), ratio of p50 to realtime reliable warm:');
for (const x of rows) {
  console.log(`  ${`${x.transport} ${x.variant}`.padEnd(24)} p50 ${String(x.p50Ms).padStart(9)}  p99 ${String(x.p99Ms).padStart(9)}  x${x.p50VsRealtimeReliableWarm}`);
}
console.log(`wrote ${file} and ${svg}`);
