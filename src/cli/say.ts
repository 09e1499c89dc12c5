/**
 * `voxpipe say [TEXT] [--out FILE|-] [--format pcm|wav|mp3|opus] [--voice ID] [--model ID]
 *   [--speed N] [--transport auto|realtime|sync|async|compat] [--mode simple|reliable] [--json]`
 * and `voxpipe speak` (the same, reading standard input incrementally and
 * speaking each segment as soon as it is complete).
 *
 * Without --out the audio plays on the speakers; where no audio device can
 * be opened it goes to a WAV file and a note says where.
 */
import { rm, stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UnavailableError } from '../errors.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/audio.js';
import { DEFAULT_MODEL } from '../protocol/constants.js';
import type { Writable } from 'node:stream';
import type { Sink } from '../sinks/index.js';
import type { SpeechOptions } from '../speech.js';
import { ENGINE_CHOICES, type EngineChoice } from '../server/engines/choices.js';
import { TRANSPORT_CHOICES } from '../transport.js';
import type { SpeechStream } from '../stream/speech-stream.js';
import { numberOption, UsageError } from './args.js';
import { Option, type CliCommand, type Command } from './command.js';
import { ExitCode, note, type Io } from './io.js';
import { checkOutPath } from './out-path.js';
import { openService } from './service.js';

interface Options {
  out?: string;
  format: AudioFormat;
  voice?: string;
  model?: string;
  speed?: string;
  transport: (typeof TRANSPORT_CHOICES)[number];
  mode: 'simple' | 'reliable';
  json?: boolean;
  engine?: EngineChoice;
}

/** The options of say and speak. */
function declareSpeechOptions(cmd: Command): void {
  cmd
    .addOption(
      new Option('-o, --out <FILE|->', 'a file (its extension picks the container: .wav, .pcm, .mp3, .opus/.ogg; others such as .flac through ffmpeg) or - for standard output; default: play on the speakers (no audio device: a WAV file, and a note says where)'),
    )
    .addOption(new Option('-f, --format <F>', 'what the service sends').choices(AUDIO_FORMATS).default('pcm'))
    .addOption(new Option('--voice <ID>', "default: the deployment's default voice for the model"))
    .addOption(new Option('--model <ID>', `default: the deployment's default model, else ${DEFAULT_MODEL}`))
    .addOption(new Option('--speed <N>', "0.5 to 2; default the service's (1)"))
    .addOption(new Option('--transport <T>', 'realtime, failing over to sync HTTP with auto').choices(TRANSPORT_CHOICES).default('auto'))
    .addOption(new Option('--mode <M>', 'realtime mode').choices(['simple', 'reliable']).default('reliable'))
    .addOption(new Option('--json', 'one JSON summary line on standard output (with --out FILE)'))
    .addOption(new Option('--engine <E>', "the embedded server's speech engine").choices(ENGINE_CHOICES).hideHelp());
}

export const sayCommand: CliCommand<Options> = {
  name: 'say',
  summary: 'speak a text (an argument or standard input) to the speakers or a file',
  declare(cmd) {
    cmd.argument('[TEXT...]', 'what to say; without it, standard input is read');
    declareSpeechOptions(cmd);
  },
  run: (args, values, io) => run(args, values, io, false),
};

export const speakCommand: CliCommand<Options> = {
  name: 'speak',
  summary: 'speak standard input as it arrives, each sentence as soon as it is complete (llm | voxpipe speak)',
  declare(cmd) {
    declareSpeechOptions(cmd);
    // A text argument gets our message (use say), not commander's "too many arguments".
    cmd.allowExcessArguments();
  },
  run: (args, values, io) => run(args, values, io, true),
};

/** The `--json` summary line of say/speak (DESIGN.md contract). */
export interface SayJson {
  requestId: string;
  transport: string;
  mode: string;
  format: AudioFormat;
  sampleRate: number;
  /** Bytes at the destination: the file's size with `--out FILE` (after any transcoding), else the audio bytes. */
  bytes: number;
  /** Audio bytes received from the service, in `format`. */
  audioBytes: number;
  /** Audio bytes the service said the segments carry (no stream header), summed over the segments it said it for; null when it said it for none. */
  expectedBytes: number | null;
  /** Audio bytes of the segments received (no stream header): equal to `expectedBytes` wherever the service said it. */
  receivedBytes: number;
  segments: number;
  ttfaMs: number | null;
  totalMs: number;
  units: number;
  retries: number;
  resumed: number;
  /** Transport that served each segment, in order (differs under failover). */
  segmentTransports: string[];
  /** Where the audio went: a file path, `-` or `speakers`. */
  out: string;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The destination, opened at the first audio byte: its layout (a WAV
 * header's rate, a player's) is then the audio's own, which SpeechStream
 * decided from the audio, not what `ready` assumed before it (HTTP).
 * `where()` names it (a fallback WAV file is known only once opened).
 */
async function openSink(speech: SpeechStream, out: string | undefined, io: Io): Promise<{ sink: Sink; where: () => string }> {
  const { DeferredSink, StdoutSink } = await import('../sinks/index.js');
  await speech.open();
  if (out === '-') return { sink: new StdoutSink({ output: io.stdout as Writable }), where: () => '-' };
  let where = out ?? 'speakers';
  const sink = new DeferredSink(async () => {
    const opened = await openDestination(speech, out, io);
    where = opened.where;
    return opened.sink;
  });
  return { sink, where: () => where };
}

async function openDestination(speech: SpeechStream, out: string | undefined, io: Io): Promise<{ sink: Sink; where: string }> {
  const { openFileSink, openPlaybackSink } = await import('../sinks/index.js');
  const info = speech.info!;
  const audio = { format: info.format, sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth };
  if (out !== undefined) return { sink: openFileSink(out, audio), where: out };
  try {
    return { sink: await openPlaybackSink(audio), where: 'speakers' };
  } catch (err) {
    if (!(err instanceof UnavailableError)) throw err;
    const path = `voxpipe-${new Date().toISOString().replace(/[:.]/g, '-')}.wav`;
    note(io, `no audio device can be opened here; writing ${path} instead`);
    return { sink: openFileSink(path, audio), where: path };
  }
}

async function run(positionals: string[], values: Options, io: Io, incremental: boolean): Promise<number> {
  const { format, transport, mode, engine } = values;
  const speed = numberOption(values.speed, 'speed', 0.5, 2);

  let text: string | undefined;
  if (!incremental) {
    text = positionals.length > 0 ? positionals.join(' ') : io.stdin.isTTY ? '' : await readAll(io.stdin);
    if (text.trim().length === 0) throw new UsageError('nothing to say: give TEXT or pipe it on standard input');
  } else if (positionals.length > 0) {
    throw new UsageError('speak reads standard input; use `voxpipe say TEXT` for a text argument');
  }

  // Before any request: nothing is spent on a file that cannot be written.
  if (values.out === '-' && (io.stdout as { isTTY?: boolean }).isTTY) {
    throw new UsageError('refusing to write binary audio to a terminal; redirect standard output or use --out FILE');
  }
  if (values.out !== undefined) await checkOutPath(values.out);

  const started = performance.now();
  // The embedded server (its import, the speech engine's start in a worker)
  // first; the client's modules load meanwhile: the CLI loads only what its
  // command uses, when it uses it.
  const opening = openService(io, engine ? { engine } : {});
  const [service, { createSpeechStream }] = await Promise.all([opening, import('../speech.js')]).catch(async (err: unknown) => {
    await opening.then((s) => s.close()).catch(() => undefined);
    throw err;
  });
  try {
    const options: SpeechOptions = { format, transport, mode };
    if (values.voice !== undefined) options.voiceId = values.voice;
    if (values.model !== undefined) options.model = values.model;
    if (speed !== undefined) options.speed = speed;
    const speech = await createSpeechStream(service.config, options);
    speech.on('failover', (f) => note(io, `${f.from} failed (${f.error.code}); continuing over ${f.to}`));
    // A deployment's own extra events are not the user's concern.
    speech.on('warning', (w) => {
      if (w.code !== 'ignored_server_event') note(io, `warning ${w.code}: ${w.message}`);
    });
    const { sink, where: whereNow } = await openSink(speech, values.out, io);
    const input = incremental ? io.stdin : Readable.from([text!]);
    // Ctrl-C: stop speaking, let the sink finish (a WAV gets its sizes
    // patched to what was written), say what was kept, exit 130.
    let stopListening: (() => void) | undefined;
    const interrupted = new Promise<'interrupted'>((resolve) => {
      stopListening = io.onInterrupt?.(() => resolve('interrupted'));
    });
    const piped = pipeline(input, speech, sink).then(() => 'done' as const);
    const outcome = await Promise.race([piped, interrupted]).finally(() => stopListening?.());
    if (outcome === 'interrupted') {
      piped.catch(() => undefined);
      await speech.interrupt();
      const kept = await sink.done.catch(() => undefined);
      (input as Readable).destroy?.();
      const where = whereNow();
      note(io, where === 'speakers' || where === '-' ? 'interrupted' : `interrupted; kept ${where} (${kept?.bytesIn ?? 0} bytes of audio)`);
      return ExitCode.interrupted;
    }
    await sink.done;
    const where = whereNow();
    const s = speech.summary();
    if (s.segments.length === 0) {
      // `speak < /dev/null`: nothing was said; leave no empty file behind.
      if (values.out !== undefined && values.out !== '-') await rm(values.out, { force: true });
      throw new UsageError('nothing to say: standard input was empty');
    }
    const isFile = where !== 'speakers' && where !== '-';
    const bytes = isFile ? (await stat(where)).size : s.bytes;
    if (values.json) {
      const line: SayJson = {
        requestId: s.requestId,
        transport: s.transport,
        mode: s.ready?.mode ?? mode,
        format: s.ready?.format ?? format,
        sampleRate: s.ready?.sampleRate ?? 0,
        bytes,
        audioBytes: s.bytes,
        expectedBytes: s.segments.some((x) => x.expectedBytes !== undefined) ? s.segments.reduce((n, x) => n + (x.expectedBytes ?? 0), 0) : null,
        receivedBytes: s.segments.reduce((n, x) => n + x.receivedBytes, 0),
        segments: s.segments.length,
        ttfaMs: s.waterfall.ttfaMs === undefined ? null : round(s.waterfall.ttfaMs),
        totalMs: round(performance.now() - started),
        units: s.units,
        retries: s.retries,
        resumed: s.resumed,
        segmentTransports: s.segments.map((x) => x.transport),
        out: where,
      };
      io.stdout.write(`${JSON.stringify(line)}\n`);
    } else if (isFile) {
      const segments = s.segments.length === 1 ? '1 segment' : `${s.segments.length} segments`;
      note(io, `wrote ${where} (${bytes} bytes; ${s.bytes} bytes of ${s.ready?.format ?? format} audio, ${segments})`);
    }
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
