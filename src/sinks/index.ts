/**
 * Sinks: where a SpeechStream's audio goes. `openPlaybackSink` plays it
 * (speaker, else an external player), `openFileSink` writes it (WAV, raw,
 * the stream's own format, any container through ffmpeg, or stdout). Both
 * return one `Sink`: a Writable of the stream's bytes with backpressure and a
 * `done` promise, decoding first where the destination needs PCM.
 *
 * ```ts
 * const sink = await openPlaybackSink(info);   // info: { format, sampleRate, channels, bitDepth } from `ready`
 * speech.pipe(sink);
 * const result = await sink.done;
 * ```
 */
import { extname } from 'node:path';
import { UnavailableError } from '../errors.js';
import type { AudioFormat } from '../protocol/audio.js';
import { withDecoder, type DecodingSinkOptions } from './compose.js';
import { ExternalPlayerSink, findExternalPlayer, PLAYER_ORDER, type PlayerName } from './external-player.js';
import { NullClockSink as ClockSink } from './null-clock.js';
import { RawFileSink } from './raw-file.js';
import { createSpeakerSink, probeSpeaker, type SpeakerProbeOptions } from './speaker.js';
import { StdoutSink } from './stdout.js';
import { TranscodeSink, type TranscodeOptions } from './transcode.js';
import { SinkKind, type AudioInfo, type Sink } from './types.js';
import { WavFileSink } from './wav-file.js';

export * from './types.js';
export { BaseSink, sinkError, type SinkOptions } from './base-sink.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
export { DeferredSink } from './deferred.js';
export { DecodingSink, withDecoder, type DecodingSinkOptions, type PcmSinkFactory } from './compose.js';
export { createDecoder, Decoder, OPUS_DECODE_RATES, type CreateDecoderOptions, type DecoderOptions, type OpusDecodeRate } from '../codecs/decoder.js';
export {
  ExternalPlayerSink, externalPlayerAvailable, findExternalPlayer, openExternalPlayer, PLAYER_ORDER, PlayerName, probePlayer,
  type ExternalPlayerOptions, type PlayerProbe, type ProbePlayerOptions,
} from './external-player.js';
export { NullClockSink, type NullClockSinkOptions, type Underrun } from './null-clock.js';
export { PlayHead, type PlayedPosition } from './play-head.js';
export { RawFileSink, type RawFileSinkOptions } from './raw-file.js';
export { openSpeaker, probeSpeaker, SpeakerSink, speakerAvailable, type SpeakerOptions, type SpeakerProbe, type SpeakerProbeOptions } from './speaker.js';
export { StdoutSink, type StdoutSinkOptions } from './stdout.js';
export { measureSeams, SeamSmoother, smoothSeams, smoothSeamChunks, type Seam, type SeamMeasureOptions, type SeamPolicy } from './seams.js';
export { createTranscodeSink, ffmpegAvailable, requireFfmpeg, TranscodeSink, type FfmpegCheckOptions, type TranscodeOptions } from './transcode.js';
export { buildWavHeader, parseWavHeader, WAV_HEADER_BYTES, WAV_UNKNOWN_SIZE, type WavHeader } from './wav-header.js';
export { WavFileSink } from './wav-file.js';

/** Playback backends, tried in the order given. */
export const PlaybackBackend = {
  speaker: 'speaker',
  externalPlayer: 'external-player',
} as const;
export type PlaybackBackend = (typeof PlaybackBackend)[keyof typeof PlaybackBackend];

export interface PlaybackOptions extends SpeakerProbeOptions, DecodingSinkOptions {
  /** Backends to try, in order; default speaker, then external player. */
  backends?: readonly PlaybackBackend[];
  /** External players to try, in order; default ffplay, aplay, paplay. */
  players?: readonly PlayerName[];
}

/**
 * Open the speakers for a stream in `info`'s format (decoded first unless pcm).
 * Tries `speaker` (probed in a child process), then an external player (probed
 * with 20 ms of silence).
 * @throws UnavailableError naming every reason when nothing can play here
 *   (the CLI then writes a WAV file instead and says where)
 */
export async function openPlaybackSink(info: AudioInfo, options: PlaybackOptions = {}): Promise<Sink> {
  const backends = options.backends ?? [PlaybackBackend.speaker, PlaybackBackend.externalPlayer];
  const sinkOptions = options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark };
  const reasons: string[] = [];
  for (const backend of backends) {
    if (backend === PlaybackBackend.speaker) {
      const probe = await probeSpeaker(options);
      if (probe.available) return withDecoder(info, SinkKind.speaker, (pcm) => createSpeakerSink(pcm, options), options);
      reasons.push(`speaker: ${probe.reason ?? 'unavailable'}`);
    } else {
      const probeOptions = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
      const { player, probes } = await findExternalPlayer(options.players ?? PLAYER_ORDER, { ...probeOptions, refresh: options.refresh ?? false });
      if (player) return withDecoder(info, SinkKind.externalPlayer, (pcm) => new ExternalPlayerSink(player, pcm, sinkOptions), options);
      reasons.push(...probes.map((probe) => `${probe.player}: ${probe.reason ?? 'unavailable'}`));
    }
  }
  throw new UnavailableError(`no audio output can be opened here (${reasons.join('; ')})`);
}

/**
 * The speakers where something can play here, else a null sink paced by the
 * real-time clock (the same timing and backpressure, no sound): for demos
 * and benchmarks that must run on machines without a sound card.
 */
export async function openPlaybackOrClock(info: AudioInfo, options: PlaybackOptions = {}): Promise<{ sink: Sink; playing: boolean }> {
  try {
    return { sink: await openPlaybackSink(info, options), playing: true };
  } catch (err) {
    if (!(err instanceof UnavailableError)) throw err;
    return { sink: withDecoder(info, SinkKind.nullClock, (pcm) => new ClockSink(pcm), options), playing: false };
  }
}

export interface FileSinkOptions extends DecodingSinkOptions, Omit<TranscodeOptions, 'highWaterMark'> {}

/** Extensions written as raw PCM. */
const RAW_PCM_EXTENSIONS = new Set(['.pcm', '.raw']);
/** Extensions that hold each compressed format as the stream sends it. */
const NATIVE_EXTENSIONS: Partial<Record<AudioFormat, ReadonlySet<string>>> = {
  mp3: new Set(['.mp3']),
  opus: new Set(['.opus', '.ogg', '.oga']),
};

/**
 * Open a destination for a stream in `info`'s format, chosen by `path`:
 * - `-`: standard output, the bytes as they come;
 * - `.wav`: a WAV file with a correct header (decoded first unless pcm or wav);
 * - `.pcm`, `.raw`: raw s16le PCM (decoded first unless pcm);
 * - `.mp3` for mp3, `.opus`/`.ogg`/`.oga` for opus: the stream copied as is;
 * - anything else, or any path with `sampleRate`/`channels` differing from the
 *   stream: transcoded by ffmpeg into the container the extension names.
 * @throws UnavailableError when ffmpeg is needed and missing
 */
export function openFileSink(path: string, info: AudioInfo, options: FileSinkOptions = {}): Sink {
  const sinkOptions = options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark };
  if (path === '-') return new StdoutSink(sinkOptions);
  const extension = extname(path).toLowerCase();
  const resample = (options.sampleRate !== undefined && options.sampleRate !== info.sampleRate)
    || (options.channels !== undefined && options.channels !== info.channels);
  if (!resample) {
    if (extension === '.wav') {
      return withDecoder(info, SinkKind.wavFile, (pcm) => new WavFileSink(path, pcm, sinkOptions), options);
    }
    if (RAW_PCM_EXTENSIONS.has(extension)) {
      return withDecoder(info, SinkKind.rawFile, (pcm) => new RawFileSink(path, { ...sinkOptions, pcm }), options);
    }
    if (NATIVE_EXTENSIONS[info.format]?.has(extension)) {
      return new RawFileSink(path, sinkOptions);
    }
  }
  return new TranscodeSink(path, info, options);
}
