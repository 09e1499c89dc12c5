/**
 * `voxpipe bench`: time to first audio of the configured service, or of the
 * embedded reference server when none is configured, per transport, format,
 * model, voice, text length, concurrency, cold and warm.
 *
 * Standard error gets the progress bar (TTY or --progress) and the table;
 * standard output only the JSON document with --json.
 */
import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/audio.js';
import { BENCH_TRANSPORTS, DEFAULT_BENCH_TRANSPORTS, DEFAULT_RUN_TIMEOUT_MS, DEFAULT_RUNS, DEFAULT_WARMUP, Variant, type BenchTransport, type CaseAxes } from '../bench/cases.js';
import { BENCH_TEXT_NAMES, type BenchTextName } from '../bench/texts.js';
import { choice, numberOption, UsageError } from './args.js';
import { Option, type CliCommand } from './command.js';
import { ENGINE_CHOICES, type EngineChoice } from '../server/engines/choices.js';
import { ExitCode, note, type Io } from './io.js';
import { openService } from '../service.js';

interface Options extends AxesArgs {
  runs: string;
  warmup: string;
  json?: boolean;
  plot?: string;
  out?: string;
  progress?: boolean;
  engine?: EngineChoice;
  timeoutMs?: string;
}

export const command: CliCommand<Options> = {
  name: 'bench',
  summary: 'time to first audio per transport, format, model, voice, text, concurrency, cold and warm (see BENCHMARKS.md)',
  examples: [
    "voxpipe bench",
    "voxpipe bench --transports realtime-reliable,sync --runs 5 --plot ttfa.svg",
    "voxpipe bench --concurrency 1,10 --warm --json",
  ],
  declare(cmd) {
    cmd
      .addOption(new Option('--runs <N>', 'measured runs per case').default(String(DEFAULT_RUNS)))
      .addOption(new Option('--warmup <N>', 'unmeasured runs first, per case').default(String(DEFAULT_WARMUP)))
      .addOption(new Option('--transports <LIST>', `comma-separated, of ${BENCH_TRANSPORTS.join(', ')}, or all; default ${DEFAULT_BENCH_TRANSPORTS.join(',')}`))
      .addOption(new Option('--formats <LIST>', `comma-separated, of ${AUDIO_FORMATS.join(', ')}, or all; default pcm`))
      .addOption(new Option('--models <LIST>', "model ids, or all; default the deployment's default model"))
      .addOption(new Option('--voices <LIST>', "voice ids, or all; default the model's first voice"))
      .addOption(new Option('--texts <LIST>', `comma-separated, of ${BENCH_TEXT_NAMES.join(', ')}, or all; default short`))
      .addOption(new Option('--concurrency <LIST>', 'streams at once, e.g. 1,10,100; default 1'))
      .addOption(new Option('--cold', 'only runs on a new connection; default cold and warm'))
      .addOption(new Option('--warm', 'only runs on a connection already open; default cold and warm'))
      .addOption(new Option('--both', 'cold and warm (the default)'))
      .addOption(new Option('--json', 'the report as one JSON line on standard output'))
      .addOption(new Option('--plot <FILE.svg>', 'an SVG chart of the report (the name must end in .svg); default none'))
      .addOption(new Option('-o, --out <FILE.json>', 'the report as a JSON file; default none'))
      .addOption(new Option('--progress', 'a progress bar on standard error; default only on a terminal'))
      .addOption(new Option('--engine <E>', "the embedded server's speech engine; default auto: espeak when installed, else tone").choices(ENGINE_CHOICES))
      .addOption(new Option('--timeout-ms <N>', `the longest a run may take; default ${DEFAULT_RUN_TIMEOUT_MS}`));
  },
  run: (_args, values, io) => bench(values, io),
};

/** Most streams a run may open at once. */
const MAX_CONCURRENCY = 10_000;

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return items.length > 0 ? items : undefined;
}

function listOf<T extends string>(value: string | undefined, name: string, allowed: readonly T[]): T[] | 'all' | undefined {
  const items = list(value);
  if (!items) return undefined;
  if (items.length === 1 && items[0] === 'all') return 'all';
  return items.map((item) => choice(item, name, allowed)!);
}

function integers(value: string | undefined, name: string, min: number, max: number): number[] | undefined {
  const items = list(value);
  if (!items) return undefined;
  return items.map((item) => {
    const n = numberOption(item, name, min, max)!;
    if (!Number.isInteger(n)) throw new UsageError(`--${name} takes whole numbers, got ${item}`);
    return n;
  });
}

/** The parsed options that choose the cases. */
export interface AxesArgs {
  transports?: string | undefined;
  formats?: string | undefined;
  models?: string | undefined;
  voices?: string | undefined;
  texts?: string | undefined;
  concurrency?: string | undefined;
  cold?: boolean | undefined;
  warm?: boolean | undefined;
  both?: boolean | undefined;
}

/** The sweep the arguments ask for (defaults: the realtime and sync/compat transports, pcm, default model, first voice, short text, 1 stream, cold and warm). */
export function axesFromArgs(values: AxesArgs): CaseAxes {
  const transports = listOf(values.transports, 'transports', BENCH_TRANSPORTS);
  const formats = listOf(values.formats, 'formats', AUDIO_FORMATS);
  const texts = listOf(values.texts, 'texts', BENCH_TEXT_NAMES);
  const models = list(values.models);
  const voices = list(values.voices);
  const picked = [values.cold && Variant.cold, values.warm && Variant.warm].filter((v): v is Variant => typeof v === 'string');
  if (values.both && picked.length === 1) throw new UsageError('--both cannot be combined with --cold or --warm');
  return {
    transports: transports === 'all' ? BENCH_TRANSPORTS : (transports ?? DEFAULT_BENCH_TRANSPORTS),
    formats: formats === 'all' ? 'all' : ((formats as AudioFormat[] | undefined) ?? ['pcm']),
    models: models === undefined ? 'default' : models.length === 1 && models[0] === 'all' ? 'all' : models,
    voices: voices === undefined ? 'first' : voices.length === 1 && voices[0] === 'all' ? 'all' : voices,
    texts: texts === 'all' ? BENCH_TEXT_NAMES : ((texts as BenchTextName[] | undefined) ?? ['short']),
    concurrency: integers(values.concurrency, 'concurrency', 1, MAX_CONCURRENCY) ?? [1],
    variants: picked.length === 1 ? picked : [Variant.cold, Variant.warm],
  };
}

async function bench(values: Options, io: Io): Promise<number> {
  const runs = integers(values.runs, 'runs', 1, 100_000)?.[0] ?? DEFAULT_RUNS;
  const warmup = integers(values.warmup, 'warmup', 0, 100_000)?.[0] ?? DEFAULT_WARMUP;
  const runTimeoutMs = numberOption(values.timeoutMs, 'timeout-ms', 1, 3_600_000);
  const engine = values.engine;
  const axes = axesFromArgs(values);
  // Before the run: the chart is SVG, and a file named otherwise would hold what its name does not say.
  if (values.plot !== undefined && !values.plot.toLowerCase().endsWith('.svg')) {
    throw new UsageError(`--plot writes an SVG chart; name the file .svg (got ${values.plot}); convert it afterwards if you need another format (e.g. rsvg-convert -o chart.png chart.svg)`);
  }
  const transports: readonly BenchTransport[] = axes.transports;

  // The embedded server's note (tone because espeak is missing) only when the engine was not chosen.
  const { formatTable, ProgressBar, renderPlot, runBenchmark } = await import('../bench/index.js');
  const service = await openService({ env: io.env, ...(engine ? { engine } : { onNote: (text: string) => note(io, text) }) });
  try {
    const showProgress = values.progress === true || (io.stderr as { isTTY?: boolean }).isTTY === true;
    const bar = new ProgressBar(io.stderr, { enabled: showProgress });
    const everyMs = numberOption(io.env['VOXPIPE_PROGRESS_MS'], 'VOXPIPE_PROGRESS_MS', 10) ?? 5_000;
    const started = performance.now();
    let lastLine = started;
    if (transports.includes('async')) note(io, 'async: each job is polled every 3 s (spec 8), so its time to first audio is about 3 s and its runs take a while');
    const report = await runBenchmark(service.config, axes, {
      runs,
      warmup,
      ...(runTimeoutMs !== undefined && { runTimeoutMs }),
      onProgress: (p) => {
        bar.update(p.done, p.total, `${p.warmup ? 'warm-up ' : ''}${p.caseId}`);
        // Off a terminal: a line every few seconds, so a long sweep shows it is alive.
        if (!showProgress && performance.now() - lastLine >= everyMs) {
          lastLine = performance.now();
          const elapsed = (lastLine - started) / 1000;
          const eta = p.done > 0 ? Math.ceil((elapsed * (p.total - p.done)) / p.done) : undefined;
          note(io, `bench: ${p.done}/${p.total} runs${eta !== undefined ? `, ETA ${eta} s` : ''} (${p.warmup ? 'warm-up ' : ''}${p.caseId})`);
        }
      },
      service: service.embedded ? { embedded: true, engine: service.embedded.ctx.engine.name } : { embedded: false, baseUrl: service.config.baseUrl },
    });
    bar.clear();
    io.stderr.write(formatTable(report));
    if (values.plot !== undefined) {
      await writeFile(values.plot, renderPlot(report));
      note(io, `wrote ${values.plot}`);
    }
    if (values.out !== undefined) {
      await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`);
      note(io, `wrote ${values.out}`);
    }
    if (values.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    const measured = report.cases.reduce((n, c) => n + c.samples - c.errors, 0);
    if (measured === 0) {
      const codes = report.cases.flatMap((c) => Object.keys(c.errorCodes));
      io.stderr.write(`voxpipe: error ${codes[0] ?? 'no_audio'}: every stream failed; nothing was measured\n`);
      return ExitCode.error;
    }
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}
