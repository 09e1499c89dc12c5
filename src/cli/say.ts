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
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UnavailableError, VoxpipeError } from '../errors.js';
import { AUDIO_FORMATS, pcmDurationMs, type AudioFormat } from '../protocol/audio.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../protocol/wav.js';
import type { ReadyInfo } from '../transport.js';
import { DEFAULT_MODEL } from '../protocol/constants.js';
import type { Writable } from 'node:stream';
import type { Sink } from '../sinks/index.js';
import type { SpeechOptions } from '../speech.js';
import { ENGINE_CHOICES, type EngineChoice } from '../server/engines/choices.js';
import { TRANSPORT_CHOICES } from '../transport.js';
import { numberOption, UsageError } from './args.js';
import { Option, type CliCommand, type Command } from './command.js';
import { ExitCode, note, STOP_CAUSES, type Io, type StopCause } from './io.js';
import { checkOutPath } from './out-path.js';
import { startProgress } from './progress.js';
import { openServiceFor } from './service.js';
import { resolveVoice } from './voice-name.js';

interface Options {
  out?: string;
  format?: AudioFormat;
  partUnits?: string;
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
      new Option(
        '-o, --out <FILE|->',
        'a file, its extension picks what it holds: .wav, .pcm; .mp3, .opus (Opus) and .ogg (Vorbis) through ffmpeg, or as sent with --format mp3 or opus (.ogg then holds Opus); others such as .flac through ffmpeg. - for standard output; default: play on the speakers (no audio device: a WAV file, and a note says where)',
      ),
    )
    .addOption(new Option('-f, --format <F>', 'what the service sends; default pcm (with --out -: in a streaming WAV header, unless --format pcm asks for raw PCM)').choices(AUDIO_FORMATS))
    .addOption(new Option('--voice <ID|NAME>', "a voice's id, or its name (voxpipe voices lists them); default: the deployment's default voice for the model"))
    .addOption(new Option('--model <ID>', `default: the deployment's default model, else ${DEFAULT_MODEL}`))
    .addOption(new Option('--speed <N>', "0.5 to 2; default the service's (1)"))
    .addOption(new Option('--transport <T>', 'realtime, failing over to sync HTTP with auto').choices(TRANSPORT_CHOICES).default('auto'))
    .addOption(new Option('--mode <M>', 'realtime mode').choices(['simple', 'reliable']).default('reliable'))
    .addOption(new Option('--json', 'one JSON summary line on standard output (on standard error with --out -)'))
    .addOption(new Option('--part-units <N>', 'characters per realtime request of a long text').hideHelp())
    .addOption(new Option('--engine <E>', "the embedded server's speech engine").choices(ENGINE_CHOICES).hideHelp());
}

export const sayCommand: CliCommand<Options> = {
  name: 'say',
  summary: 'speak a text (an argument or standard input) to the speakers or a file',
  examples: [
    "voxpipe say 'Hello, world.'",
    "voxpipe say --out hello.wav 'Hello, world.'",
    "voxpipe say --voice Ava --speed 1.2 < story.txt",
    "voxpipe say --out - 'Hi.' | aplay",
  ],
  declare(cmd) {
    cmd.argument('[TEXT...]', 'what to say; without it, standard input is read');
    declareSpeechOptions(cmd);
  },
  run: (args, values, io) => run(args, values, io, false),
};

export const speakCommand: CliCommand<Options> = {
  name: 'speak',
  summary: 'speak standard input as it arrives, each sentence as soon as it is complete (llm | voxpipe speak)',
  examples: [
    "llm-client 'Tell me a story' | voxpipe speak",
    "tail -f captions.txt | voxpipe speak --out live.wav",
  ],
  declare(cmd) {
    declareSpeechOptions(cmd);
    // A text argument gets our message (use say), not commander's "too many arguments".
    cmd.allowExcessArguments();
  },
  run: (args, values, io) => run(args, values, io, true),
};

/** The `--json` summary line of say/speak (a contract: README, What works today). */
export interface SayJson {
  /** The first request's id. */
  requestId: string;
  /** Every request's, in order: a text over the session limit (spec 8) goes on as many requests as it needs. */
  requestIds: string[];
  transport: string;
  mode: string;
  format: AudioFormat;
  sampleRate: number;
  /** Bytes at the destination: the file's size with `--out FILE` (after any transcoding), else the audio bytes. */
  bytes: number;
  /** Audio bytes received from the service, in `format`. */
  audioBytes: number;
  /** Length of the audio delivered, where the format says it (pcm, wav); else null. */
  durationMs: number | null;
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

/** What `--out -` writes: the service's bytes, or raw PCM wrapped in a streaming WAV header (unknown length). */
function stdoutLayout(info: ReadyInfo, rawAsked: boolean): { header?: Uint8Array; line: string } {
  const pcm = `${info.sampleRate} Hz, ${info.channels === 1 ? 'mono' : `${info.channels} channels`}, ${info.bitDepth}-bit signed little-endian PCM`;
  if (info.format === 'pcm' && !rawAsked) {
    return { header: buildWavHeader(info, WAV_UNKNOWN_SIZE), line: `standard output: WAV (${pcm}; streaming header, length 0xFFFFFFFF: unknown)` };
  }
  if (info.format === 'pcm') return { line: `standard output: raw ${pcm}, no header` };
  if (info.format === 'wav') return { line: `standard output: WAV (${pcm}) as the service sends it` };
  return { line: `standard output: ${info.format === 'mp3' ? 'MP3' : 'Ogg Opus'} (${info.sampleRate} Hz, ${info.channels === 1 ? 'mono' : `${info.channels} channels`})` };
}

/** What opens the destination: the speech (a SpeechStream, or several in a row), whose `info` is the audio's own layout once audio arrived. */
interface Opened {
  open(): Promise<ReadyInfo>;
  readonly info: ReadyInfo | undefined;
}

/**
 * The destination, opened at the first audio byte: its layout (a WAV
 * header's rate, a player's, the stdout header and note) is then the
 * audio's own, which SpeechStream decided from the audio, not what `ready`
 * assumed before it (HTTP). `where()` names it (a fallback WAV file is
 * known only once opened).
 */
async function openSink(speech: Opened, out: string | undefined, io: Io, rawAsked: boolean): Promise<{ sink: Sink; where: () => string }> {
  const { DeferredSink } = await import('../sinks/index.js');
  await speech.open();
  let where = out ?? 'speakers';
  const sink = new DeferredSink(async () => {
    const opened = await openDestination(speech.info!, out, io, rawAsked);
    where = opened.where;
    return opened.sink;
  });
  return { sink, where: () => where };
}

async function openDestination(info: ReadyInfo, out: string | undefined, io: Io, rawAsked: boolean): Promise<{ sink: Sink; where: string }> {
  const { openFileSink, openPlaybackSink, StdoutSink } = await import('../sinks/index.js');
  const audio = { format: info.format, sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth };
  if (out === '-') {
    const layout = stdoutLayout(info, rawAsked);
    note(io, layout.line);
    if (layout.header) io.stdout.write(layout.header);
    return { sink: new StdoutSink({ output: io.stdout as Writable }), where: '-' };
  }
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

/** "12.3 s of audio" when the layout says how long `bytes` last (PCM and WAV), else "". */
function secondsOf(bytes: number, info: ReadyInfo | undefined): string {
  if (!info || (info.format !== 'pcm' && info.format !== 'wav') || !info.sampleRate) return '';
  return `${(pcmDurationMs(bytes, info) / 1000).toFixed(1)} s of audio`;
}

/** What a file holds now, for the note of a run that stopped: its size, and the audio's length when known. */
async function keptNote(where: string, audioBytes: number, info: ReadyInfo | undefined): Promise<string> {
  const size = await stat(where).then((st) => st.size, () => 0);
  const seconds = secondsOf(audioBytes, info);
  return `kept ${where} (${size} bytes${seconds ? `; ${seconds}` : ''}; ${audioBytes} bytes of ${info?.format ?? 'audio'} received)`;
}

/** A write to a closed pipe, in the sink's failure (its cause chain). */
function isOutputClosed(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') return true;
  }
  return false;
}

/** Calls `handler` when standard output's reader goes away (an EPIPE on a write). */
function onOutputClosed(stdout: NodeJS.WritableStream, handler: () => void): void {
  stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') handler();
  });
}

async function run(positionals: string[], values: Options, io: Io, incremental: boolean): Promise<number> {
  const { transport, mode, engine } = values;
  const format: AudioFormat = values.format ?? 'pcm';
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
  // Ctrl-C, SIGTERM, SIGHUP, the starting command gone, standard output
  // closed: from here on each ends the run with a note saying what was kept.
  let stopListening: (() => void) | undefined;
  const stopped = new Promise<StopCause>((resolve) => {
    stopListening = io.onInterrupt?.(resolve);
    if (values.out === '-') onOutputClosed(io.stdout, () => resolve(STOP_CAUSES.SIGPIPE));
  });
  /** `step`, unless a stop comes first (before any audio: nothing to keep). */
  const orStop = async <T>(step: Promise<T>): Promise<T> => {
    const first = await Promise.race([step.then((value) => ({ value })), stopped]);
    if ('value' in first) return first.value;
    step.catch(() => undefined);
    throw new StoppedEarly(first);
  };
  let opened: { interrupt(): Promise<unknown> } | undefined;
  try {
    return await speakAll();
  } catch (err) {
    if (!(err instanceof StoppedEarly)) throw err;
    await opened?.interrupt().catch(() => undefined);
    note(io, `${err.cause.text}; nothing kept: no audio had arrived`);
    return err.cause.exit;
  } finally {
    stopListening?.();
  }

  async function speakAll(): Promise<number> {
    // The embedded server (its import, the speech engine's start in a worker)
    // first; the client's modules load meanwhile: the CLI loads only what its
    // command uses, when it uses it.
    const opening = openServiceFor(io, engine ? { engine } : {});
    const [service, { createSpeechStream }] = await orStop(Promise.all([opening, import('../speech.js')])).catch(async (err: unknown) => {
      await opening.then((s) => s.close()).catch(() => undefined);
      throw err;
    });
    try {
      const options: SpeechOptions = { format, transport, mode, onWarning: (w) => note(io, `warning ${w.code}: ${w.message}`) };
      if (values.voice !== undefined) options.voiceId = await orStop(resolveVoice(service.config, values.voice));
      if (values.model !== undefined) options.model = values.model;
      if (speed !== undefined) options.speed = speed;
      // Loaded with the stream (`../speech.js`), not when the command is parsed.
      const { DEFAULT_REQUEST_UNITS } = await orStop(import('../stream/rollover.js'));
      const partUnits = numberOption(values.partUnits, 'part-units', 1, DEFAULT_REQUEST_UNITS);
      // A text of any length: the stream moves on to a new request where one's units end.
      const speech = await orStop(createSpeechStream(service.config, { ...options, ...(partUnits !== undefined && { requestUnits: partUnits }) }));
      speech.on('failover', (f) => note(io, `${f.from} failed (${f.error.code}); continuing over ${f.to}`));
      // A deployment's own extra events are not the user's concern.
      speech.on('warning', (w) => {
        if (w.code !== 'ignored_server_event') note(io, `warning ${w.code}: ${w.message}`);
      });
      /** Characters of the text spoken so far (segments completed). */
      const spokenChars = (): number => speech.summary().segments.reduce((n, x) => n + x.waterfall.characters, 0);
      opened = speech;
      const ready = await orStop(speech.open());
      const { sink, where: whereNow } = await orStop(openSink(speech, values.out, io, values.format === 'pcm'));
      // The layout of the audio: the first audio's own once it arrived, else what `ready` said.
      const layout = (): ReadyInfo => speech.info ?? ready;
      const isFile = (): boolean => whereNow() !== 'speakers' && whereNow() !== '-';
      const input = incremental ? io.stdin : Readable.from([text!]);
      // Audio handed to the sink, for the notes of a run that stops part-way.
      let delivered = 0;
      const counter = new PassThrough();
      let firstAudioAt: number | undefined;
      counter.on('data', (chunk: Buffer) => {
        firstAudioAt ??= performance.now();
        delivered += chunk.length;
      });
      const seconds = (bytes: number) => (layout().format === 'pcm' || layout().format === 'wav' ? pcmDurationMs(bytes, layout()) / 1000 : undefined);
      const progress = startProgress(
        io,
        () => {
          const s = speech.summary();
          return {
            parts: s.requestIds.length,
            segments: s.segments.length,
            receivedS: seconds(delivered),
            doneUnits: s.segments.reduce((n, x) => n + x.units, 0),
            doneS: seconds(s.segments.reduce((n, x) => n + x.audioBytes, 0)),
            playing: whereNow() === 'speakers',
            firstAudioAt,
          };
        },
        text?.length,
      );
      // A stop from here: stop speaking, let the sink finish (a WAV gets its
      // sizes patched to what was written), say what was kept, exit 128 + signal.
      const piped = pipeline(input, speech, counter, sink).then(() => 'done' as const);
      let outcome: 'done' | StopCause;
      try {
        outcome = await Promise.race([piped, stopped]).finally(() => progress.stop());
      } catch (err) {
        if (err instanceof VoxpipeError && isOutputClosed(err)) {
          outcome = STOP_CAUSES.SIGPIPE;
        } else {
          // Failed part-way: say what the file holds (a WAV's sizes are patched by its sink).
          await sink.done.catch(() => undefined);
          if (isFile() && delivered > 0) {
            const s = speech.summary();
            note(io, `stopped part-way: ${await keptNote(whereNow(), delivered, layout())}: the first ${s.segments.length} segments (${s.units} of ${text?.length ?? spokenChars()} characters)`);
          }
          throw err;
        }
      }
      if (outcome !== 'done') {
        piped.catch(() => undefined);
        // Whatever the interrupt meets (a request that failed meanwhile), the file is still finished and described.
        await speech.interrupt().catch(() => undefined);
        await sink.done.catch(() => undefined);
        (input as Readable).destroy?.();
        if (isFile()) note(io, `${outcome.text}; ${await keptNote(whereNow(), delivered, layout())}`);
        else if (whereNow() === '-') note(io, `${outcome.text}; ${delivered} bytes of audio written to standard output before that${secondsOf(delivered, layout()) ? ` (${secondsOf(delivered, layout())})` : ''}`);
        else note(io, outcome.text);
        return outcome.exit;
      }
      await sink.done;
      const where = whereNow();
      const s = speech.summary();
      if (s.segments.length === 0) {
        // `speak < /dev/null`: nothing was said; leave no empty file behind.
        if (isFile()) await rm(where, { force: true });
        throw new UsageError('nothing to say: standard input was empty');
      }
      const bytes = isFile() ? (await stat(where)).size : s.bytes;
      if (values.json) {
        const line: SayJson = {
          requestId: s.requestId,
          requestIds: s.requestIds,
          transport: s.transport,
          mode: s.ready?.mode ?? mode,
          format: s.ready?.format ?? format,
          sampleRate: s.ready?.sampleRate ?? 0,
          bytes,
          audioBytes: s.bytes,
          durationMs: layout().format === 'pcm' || layout().format === 'wav' ? round(pcmDurationMs(delivered, layout())) : null,
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
        // Standard output carries the audio with --out -: the summary goes to standard error then.
        (where === '-' ? io.stderr : io.stdout).write(`${JSON.stringify(line)}\n`);
      } else if (isFile()) {
        const segments = s.segments.length === 1 ? '1 segment' : `${s.segments.length} segments`;
        const requests = s.requestIds.length > 1 ? `, ${s.requestIds.length} requests` : '';
        const seconds = secondsOf(delivered, layout());
        note(io, `wrote ${where} (${bytes} bytes; ${s.bytes} bytes of ${s.ready?.format ?? format} audio${seconds ? `, ${seconds}` : ''}, ${segments}${requests})`);
      }
      return ExitCode.ok;
    } finally {
      await service.close();
    }
  }
}

/** A stop before the destination was opened. */
class StoppedEarly extends Error {
  constructor(override readonly cause: StopCause) {
    super(cause.text);
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
