/**
 * A decoder in front of a PCM sink, as one `Sink`: bytes in the stream's
 * format go in, the decoder turns them into PCM, and the PCM sink is opened
 * when the decoder knows the real layout (an mp3's rate, an Ogg Opus stream's
 * channels), so a speaker or a WAV header always gets the true layout.
 *
 * Backpressure runs end to end: the PCM sink's `write()` returning false
 * pauses the decoder (pipe), whose full buffers hold back this sink's write
 * callbacks, so `write()` here returns false once `highWaterMark` is reached.
 */
import type { PcmInfo } from '../protocol/audio.js';
import { BaseSink } from './base-sink.js';
import { createDecoder, type CreateDecoderOptions, type Decoder } from '../codecs/decoder.js';
import type { AudioInfo, Sink, SinkKind, SinkResult } from './types.js';

/** Opens the PCM sink once the layout is known; may throw (e.g. `UnavailableError`). */
export type PcmSinkFactory = (pcm: PcmInfo) => Sink;

export type DecodingSinkOptions = CreateDecoderOptions;

/** Encoded bytes in, decoded into the sink `open` returns. See `withDecoder`. */
export class DecodingSink extends BaseSink {
  readonly decoder: Decoder;
  private inner: Sink | undefined;
  private innerResult: SinkResult | undefined;
  private decoderPiped = false;

  /**
   * @param kind kind of the sink `open` returns (reported before it exists)
   * @param open called once, with the decoded layout (or the announced one if no audio arrives)
   */
  constructor(
    info: AudioInfo,
    readonly kind: SinkKind,
    private readonly open: PcmSinkFactory,
    options: DecodingSinkOptions = {},
  ) {
    super(options);
    this.decoder = createDecoder(info, options);
    this.decoder.once('info', (pcm: PcmInfo) => this.attach(pcm, true));
    this.decoder.on('error', (error: Error) => this.destroy(error));
  }

  /** The PCM sink, once opened. */
  get pcmSink(): Sink | undefined {
    return this.inner;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    // The callback fires once the decoder has consumed the chunk, which waits for room downstream.
    this.decoder.write(chunk, (error) => callback(error ?? undefined));
  }

  override _final(callback: (error?: Error | null) => void): void {
    const settle = (): void => {
      // No audio decoded at all: still open the sink (an empty WAV file is a valid file) and end it.
      const inner = this.inner ?? this.attach(this.decoder.pcmInfo, false);
      if (!inner) return;
      // A piped sink is ended by pipe() when the decoder ends; one opened here is ended here.
      if (!this.decoderPiped) inner.end();
      inner.done.then((result) => {
        this.innerResult = result;
        callback();
      }, callback);
    };
    if (this.inner) {
      this.decoder.end();
      settle();
      return;
    }
    // Nobody reads the decoder yet: let it flow so it ends (its 'info' still attaches the sink before any data).
    this.decoder.once('end', settle);
    this.decoder.resume();
    this.decoder.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.decoder.destroy();
    if (this.inner && !this.inner.destroyed) this.inner.destroy(error ?? undefined);
    callback(error);
  }

  private attach(pcm: PcmInfo, pipe: boolean): Sink | undefined {
    if (this.inner) return this.inner;
    try {
      this.inner = this.open(pcm);
    } catch (error) {
      this.destroy(error as Error);
      return undefined;
    }
    this.inner.on('error', (error: Error) => this.destroy(error));
    if (pipe) {
      this.decoderPiped = true;
      this.decoder.pipe(this.inner);
    }
    return this.inner;
  }

  protected result(): SinkResult {
    const inner = this.innerResult ?? { kind: this.kind, bytesIn: 0 };
    return { ...inner, bytesIn: this.bytesIn };
  }
}

/**
 * Put the decoder for `info.format` in front of a PCM sink. For `pcm` input
 * no decoder is needed and `open(info)` is returned as is.
 * @param kind the kind of sink `open` returns
 */
export function withDecoder(info: AudioInfo, kind: SinkKind, open: PcmSinkFactory, options: DecodingSinkOptions = {}): Sink {
  if (info.format === 'pcm') return open({ sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth });
  return new DecodingSink(info, kind, open, options);
}
