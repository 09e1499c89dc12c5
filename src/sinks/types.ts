/**
 * Shared shapes of the sinks: what a sink is told about its input, what it
 * reports when it has finished, and the codes of the errors it raises.
 */
import type { Writable } from 'node:stream';
import type { PcmInfo } from '../protocol/audio.js';

/** The format of the bytes written to a sink, as `ready` announces it (a decoder is told the same). */
export type { AudioInfo } from '../codecs/base.js';

/** What kind of sink wrote the audio (the innermost sink of a composition). */
export const SinkKind = {
  wavFile: 'wav-file',
  rawFile: 'raw-file',
  stdout: 'stdout',
  speaker: 'speaker',
  externalPlayer: 'external-player',
  transcode: 'transcode',
  nullClock: 'null-clock',
} as const;
export type SinkKind = (typeof SinkKind)[keyof typeof SinkKind];

/** What a sink reports once it has fully finished (file closed, process exited). */
export interface SinkResult {
  kind: SinkKind;
  /** Bytes the caller wrote into the sink, in the sink's input format. */
  bytesIn: number;
  /** Milliseconds of audio written or played, where the sink knows it. */
  durationMs?: number;
  /** Layout of the PCM the sink wrote or played, where it handles PCM. */
  pcm?: PcmInfo;
  /** File written (file and transcode sinks). */
  path?: string;
  /** Program that played the audio (external player sink). */
  player?: string;
  /** Times the device buffer ran dry before the end of the stream (null-clock sink). */
  underruns?: number;
  /** Total silence inserted by those underruns, in ms (null-clock sink). */
  underrunMs?: number;
  /** The reader of standard output went away (EPIPE); later audio was dropped. */
  readerClosed?: boolean;
}

/**
 * A byte sink: a Node `Writable` that honours backpressure (`write()` returns
 * false once its buffer reaches `writableHighWaterMark`) and whose `done`
 * settles once everything is flushed and closed. `done` rejects when the sink
 * fails or is destroyed before `end()`. `done` is the error channel: errors are
 * still emitted as `'error'`, but an `'error'` nobody listens to does not crash
 * the process, and `done` never causes an unhandled rejection on its own, so
 * await it (or use `stream.pipeline`).
 */
export interface Sink extends Writable {
  readonly kind: SinkKind;
  readonly done: Promise<SinkResult>;
}

export { SinkErrorCode } from '../protocol/codes.js';

/** Default `highWaterMark` of every sink: the decoders' (16 KiB). */
export { DEFAULT_HIGH_WATER_MARK as DEFAULT_SINK_HIGH_WATER_MARK } from '../codecs/base.js';
