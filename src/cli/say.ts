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
import { parseArgs } from 'node:util';
import { UnavailableError } from '../errors.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/audio.js';
import type { Writable } from 'node:stream';
import { openFileSink, openPlaybackSink, StdoutSink, type Sink } from '../sinks/index.js';
import { createSpeechStream, TRANSPORT_CHOICES, type SpeechOptions } from '../speech.js';
import type { SpeechStream } from '../stream/speech-stream.js';
import { choice, numberOption, usage, UsageError } from './args.js';
import { ExitCode, note, type Io } from './io.js';
import { checkOutPath } from './out-path.js';
import { openService } from './service.js';

export const SAY_USAGE =
  'voxpipe say [TEXT] [--out FILE|-] [--format pcm|wav|mp3|opus] [--voice ID] [--model ID] [--speed N] [--transport auto|realtime|sync|async|compat] [--mode simple|reliable] [--json]';
export const SPEAK_USAGE = 'voxpipe speak [same options as say]   (reads standard input incrementally: llm | voxpipe speak)';

const OPTIONS = {
  out: { type: 'string', short: 'o' },
  format: { type: 'string', short: 'f' },
  voice: { type: 'string' },
  model: { type: 'string' },
  speed: { type: 'string' },
  transport: { type: 'string' },
  mode: { type: 'string' },
  json: { type: 'boolean' },
  engine: { type: 'string' },
} as const;

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

async function openSink(speech: SpeechStream, out: string | undefined, io: Io): Promise<{ sink: Sink; where: string }> {
  const info = await speech.open();
  const audio = { format: info.format, sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth };
  if (out === '-') return { sink: new StdoutSink({ output: io.stdout as Writable }), where: '-' };
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

async function run(argv: string[], io: Io, incremental: boolean): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  const format = choice(values.format, 'format', AUDIO_FORMATS) ?? 'pcm';
  const transport = choice(values.transport, 'transport', TRANSPORT_CHOICES) ?? 'auto';
  const mode = choice(values.mode, 'mode', ['simple', 'reliable'] as const) ?? 'reliable';
  const speed = numberOption(values.speed, 'speed', 0.5, 2);
  const engine = choice(values.engine, 'engine', ['espeak', 'tone', 'auto'] as const);

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
  const service = await openService(io, engine ? { engine } : {});
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
    const { sink, where } = await openSink(speech, values.out, io);
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
      note(io, where === 'speakers' || where === '-' ? 'interrupted' : `interrupted; kept ${where} (${kept?.bytesIn ?? 0} bytes of audio)`);
      return ExitCode.interrupted;
    }
    await sink.done;
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

export const say = (argv: string[], io: Io): Promise<number> => run(argv, io, false);
export const speak = (argv: string[], io: Io): Promise<number> => run(argv, io, true);
