/**
 * Ogg Opus to PCM through `ogg-opus-decoder` (WebAssembly). Pages split
 * across chunks are reassembled by its parser; each complete page decodes as
 * it arrives. Opus decodes natively at 48 kHz (or 8/12/16/24 kHz on request).
 */
// Loaded when a decoder starts (`_construct`): the package and its Ogg parser are about 40 modules
// that a command writing PCM or WAV never needs (the CLI's start-up).
import type { OggOpusDecoder } from 'ogg-opus-decoder';
import { AudioFormat, type PcmInfo } from '../protocol/audio.js';
import { Decoder, decodeError, type DecoderOptions } from './base.js';
import { floatToS16le } from './pcm16.js';

/** Output rates libopus decodes to directly. */
export const OPUS_DECODE_RATES = [8_000, 12_000, 16_000, 24_000, 48_000] as const;
export type OpusDecodeRate = (typeof OPUS_DECODE_RATES)[number];

export interface OpusDecoderOptions extends DecoderOptions {
  /** Output sample rate; default 48 000 Hz (Opus's native rate). */
  sampleRate?: OpusDecodeRate;
}

interface DecodedAudio {
  channelData: Float32Array[];
  samplesDecoded: number;
}

/** The typings say `decode` is synchronous; the implementation returns a promise. Accept both. */
type OggOpusDecodeFn = (data: Uint8Array) => DecodedAudio | Promise<DecodedAudio>;

export class OpusDecoder extends Decoder {
  readonly format = AudioFormat.opus;
  private ogg: OggOpusDecoder | undefined;
  private readonly sampleRate: OpusDecodeRate;
  private freed = false;
  /** The decode in progress, if any. */
  private pending: Promise<unknown> = Promise.resolve();

  constructor(expected: PcmInfo, options: OpusDecoderOptions = {}) {
    const sampleRate = options.sampleRate ?? 48_000; // Hz
    super({ ...expected, sampleRate }, options);
    this.sampleRate = sampleRate;
  }

  override _construct(callback: (error?: Error | null) => void): void {
    import('ogg-opus-decoder')
      .then(({ OggOpusDecoder }) => {
        // `sampleRate` is a documented constructor option missing from the package's typings.
        this.ogg = new OggOpusDecoder({ sampleRate: this.sampleRate } as ConstructorParameters<typeof OggOpusDecoder>[0]);
        return this.ogg.ready;
      })
      .then(() => callback(), (error: unknown) => callback(decodeError('opus decoder failed to load', error)));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    this.run(() => (this.ogg!.decode as OggOpusDecodeFn)(chunk), callback);
  }

  override _flush(callback: (error?: Error | null) => void): void {
    this.run(() => this.ogg!.flush(), (error) => {
      this.release();
      if (error) callback(error);
      else if (this.bytesIn > 0 && this.bytesOut === 0) callback(decodeError(`no Ogg Opus audio found in ${this.bytesIn} bytes`));
      else callback();
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Free the WebAssembly memory only once no decode is running on it.
    this.pending.finally(() => {
      this.release();
      callback(error);
    });
  }

  private run(decode: () => DecodedAudio | Promise<DecodedAudio>, callback: (error?: Error | null) => void): void {
    this.pending = Promise.resolve()
      .then(decode)
      .then(
        (decoded) => {
          if (this.destroyed) return callback();
          try {
            this.pushDecoded(decoded);
          } catch (error) {
            return callback(error as Error);
          }
          return callback();
        },
        (error: unknown) => callback(error instanceof Error ? error : decodeError('opus decoding failed', error)),
      );
  }

  private pushDecoded(decoded: DecodedAudio): void {
    if (decoded.samplesDecoded === 0) return;
    const channels = decoded.channelData.length;
    this.setInfo({ sampleRate: this.sampleRate, channels, bitDepth: 16 });
    this.pushPcm(floatToS16le(decoded.channelData, decoded.samplesDecoded, channels));
  }

  private release(): void {
    if (this.freed) return;
    this.freed = true;
    this.ogg?.free();
  }
}
