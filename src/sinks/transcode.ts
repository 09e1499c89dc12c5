/**
 * Transcoding through the system ffmpeg, spawned by `prism-media`'s FFmpeg
 * wrapper: any container ffmpeg knows, chosen by the file's extension
 * (`talk.ogg`, `talk.flac`, `talk.m4a`, ...), with optional resampling.
 *
 * ffmpeg writes the file itself rather than to a pipe, so containers that
 * patch their header at the end (flac, m4a, wav) get a seekable output and a
 * correct header. prism-media always appends a `pipe:1` output; it is given
 * the `null` muxer, which discards it.
 */
import { extname } from 'node:path';
import prism from 'prism-media';
import { UnavailableError, type VoxpipeError } from '../errors.js';
import { AudioFormat } from '../protocol/audio.js';
import type { SinkOptions } from './base-sink.js';
import { ProcessSink } from './process-sink.js';
import { SinkKind, type AudioInfo, type SinkResult } from './types.js';

export interface FfmpegCheckOptions {
  /** Look for ffmpeg again instead of using prism-media's cached answer; default false. */
  refresh?: boolean;
}

/** Whether prism-media finds an ffmpeg (ffmpeg-static, then `ffmpeg`/`avconv` on PATH). */
export function ffmpegAvailable(options: FfmpegCheckOptions = {}): boolean {
  try {
    prism.FFmpeg.getInfo(options.refresh ?? false);
    return true;
  } catch {
    return false;
  }
}

/**
 * Throw unless ffmpeg is available.
 * @param purpose what needs it, for the message (e.g. `writing talk.flac`)
 * @throws UnavailableError naming ffmpeg and how to install it
 */
export function requireFfmpeg(purpose: string, options: FfmpegCheckOptions = {}): void {
  if (ffmpegAvailable(options)) return;
  throw new UnavailableError(
    `${purpose} needs ffmpeg, which was not found on PATH. Install it (apt-get install ffmpeg, brew install ffmpeg, ` +
      'winget install ffmpeg, or https://ffmpeg.org/download.html), or write .wav, .pcm or the stream\'s own format instead.',
  );
}

/** ffmpeg demuxer options that describe each input format. */
function inputArgs(info: AudioInfo): string[] {
  switch (info.format) {
    case AudioFormat.pcm:
      return ['-f', 's16le', '-ar', String(info.sampleRate), '-ac', String(info.channels)];
    case AudioFormat.wav:
      return ['-f', 'wav'];
    case AudioFormat.mp3:
      return ['-f', 'mp3'];
    case AudioFormat.opus:
      return ['-f', 'ogg'];
  }
}

export interface TranscodeOptions extends SinkOptions, FfmpegCheckOptions {
  /** Output sample rate in Hz; default the input's. */
  sampleRate?: number;
  /** Output channels; default the input's. */
  channels?: number;
  /** Extra ffmpeg output options placed before the path (e.g. `['-b:a', '32k']`); default none. */
  outputArgs?: readonly string[];
}

/** Feeds audio in any voxpipe format to ffmpeg, which writes `path` in the container its extension names. */
export class TranscodeSink extends ProcessSink {
  readonly kind = SinkKind.transcode;
  private readonly outputRate: number | undefined;
  private readonly outputChannels: number | undefined;

  constructor(
    readonly path: string,
    readonly info: AudioInfo,
    options: TranscodeOptions = {},
  ) {
    requireFfmpeg(`writing ${extname(path) || path}`, options);
    const output: string[] = ['-vn'];
    if (options.sampleRate !== undefined) output.push('-ar', String(options.sampleRate));
    if (options.channels !== undefined) output.push('-ac', String(options.channels));
    output.push(...(options.outputArgs ?? []));
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      ...inputArgs(info), '-i', '-',
      ...output, '-y', path,
      // prism-media appends `pipe:1`; the null muxer makes that second output a no-op.
      '-f', 'null',
    ];
    const ffmpeg = new prism.FFmpeg({ args });
    // prism re-emits stdin/stdout errors on its Duplex; ProcessSink handles them on the child itself.
    ffmpeg.on('error', () => undefined);
    super(ffmpeg.process, { ...options, label: 'ffmpeg' });
    this.outputRate = options.sampleRate;
    this.outputChannels = options.channels;
  }

  protected override makeError(message: string, cause?: unknown): VoxpipeError {
    return super.makeError(`transcoding to ${this.path}: ${message}`, cause);
  }

  protected result(): SinkResult {
    return {
      kind: this.kind,
      bytesIn: this.bytesIn,
      path: this.path,
      pcm: { sampleRate: this.outputRate ?? this.info.sampleRate, channels: this.outputChannels ?? this.info.channels, bitDepth: 16 },
    };
  }
}

/**
 * A sink writing `path` through ffmpeg, container from the extension.
 * @throws UnavailableError when ffmpeg is missing
 */
export function createTranscodeSink(path: string, info: AudioInfo, options: TranscodeOptions = {}): TranscodeSink {
  return new TranscodeSink(path, info, options);
}
