/**
 * The base of every decoder: a Transform from encoded bytes to s16le PCM
 * that knows its output layout. The layout is the announced one until the
 * bitstream says otherwise (an mp3's sample rate is only certain once a frame
 * is decoded); the `'info'` event fires once, with the real layout, before
 * the first PCM byte is pushed.
 */
import { Transform } from 'node:stream';
import { VoxpipeError } from '../errors.js';
import { frameBytes, type AudioFormat, type PcmInfo } from '../protocol/audio.js';
import { SinkErrorCode } from '../protocol/codes.js';
import { FrameAligner } from './pcm16.js';

/** Default `highWaterMark` of every decoder and sink: 16 KiB, about 340 ms of 24 kHz mono PCM. */
export const DEFAULT_HIGH_WATER_MARK = 16 * 1024;

/** The format of encoded bytes, as `ready` announces it: what a decoder (and a sink) is told. */
export interface AudioInfo extends PcmInfo {
  format: AudioFormat;
}

/** Options every decoder accepts. */
export interface DecoderOptions {
  /** Bytes buffered on each side before backpressure applies; default 16 KiB. */
  highWaterMark?: number;
}

/**
 * Encoded bytes in, s16le interleaved PCM out, whole sample frames only.
 * Events: `'info'` `(pcm: PcmInfo)`, once, before the first output byte.
 */
export abstract class Decoder extends Transform {
  abstract readonly format: AudioFormat;
  private info: PcmInfo;
  private known = false;
  private aligner: FrameAligner | undefined;
  /** Encoded bytes received. */
  protected bytesIn = 0;
  /** PCM bytes pushed. */
  protected bytesOut = 0;

  /** @param expected the layout announced for this stream (from `ready`) */
  constructor(expected: PcmInfo, options: DecoderOptions = {}) {
    const highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
    super({ readableHighWaterMark: highWaterMark, writableHighWaterMark: highWaterMark });
    this.info = { sampleRate: expected.sampleRate, channels: expected.channels, bitDepth: 16 };
  }

  /** Output layout: the real one once `infoKnown`, until then the expected one. */
  get pcmInfo(): PcmInfo {
    return this.info;
  }

  /** Whether `pcmInfo` comes from the bitstream (or, for pcm, from the announcement). */
  get infoKnown(): boolean {
    return this.known;
  }

  /** PCM bytes pushed so far. */
  get pcmBytesOut(): number {
    return this.bytesOut;
  }

  /**
   * Fix the output layout from the bitstream, emitting `'info'` the first time.
   * @throws VoxpipeError `decode_failed` when the layout changes mid-stream
   */
  protected setInfo(pcm: PcmInfo): void {
    if (this.known) {
      if (pcm.sampleRate !== this.info.sampleRate || pcm.channels !== this.info.channels) {
        throw decodeError(`${this.format} layout changed mid-stream from ${describe(this.info)} to ${describe(pcm)}`);
      }
      return;
    }
    this.info = { sampleRate: pcm.sampleRate, channels: pcm.channels, bitDepth: 16 };
    this.known = true;
    this.aligner = new FrameAligner(frameBytes(this.info));
    this.emit('info', this.info);
  }

  /** Push PCM in the layout given to `setInfo`, holding back incomplete frames. */
  protected pushPcm(pcm: Buffer): void {
    if (!this.aligner) throw new Error('pushPcm before setInfo');
    const whole = this.aligner.push(pcm);
    if (!whole) return;
    this.bytesOut += whole.length;
    this.push(whole);
  }
}

function describe(pcm: PcmInfo): string {
  return `${pcm.sampleRate} Hz x${pcm.channels}`;
}

/** A `decode_failed` error. */
export function decodeError(message: string, cause?: unknown): VoxpipeError {
  return new VoxpipeError(SinkErrorCode.decodeFailed, message, cause === undefined ? {} : { cause });
}
