/**
 * mp3 to PCM through `mpg123-decoder` (WebAssembly, no native build).
 * mpg123 runs in feed mode, so frames split across chunks decode as soon as
 * they are complete. It always returns two planes; the channel count comes
 * from the first frame header instead (mono speech stays mono).
 */
import { MPEGDecoder } from 'mpg123-decoder';
import { AudioFormat, type PcmInfo } from '../protocol/audio.js';
import { Decoder, decodeError, type DecoderOptions } from './base.js';
import { floatToS16le } from './pcm16.js';

/** Bytes kept to find the first frame header; past this the announced channel count is used. */
const HEADER_SCAN_BYTES = 64 * 1024;
const ID3V2_HEADER_BYTES = 10;
const MPEG_CHANNEL_MODE_MONO = 3;

export class Mp3Decoder extends Decoder {
  readonly format = AudioFormat.mp3;
  private readonly mpeg = new MPEGDecoder();
  private freed = false;
  /** Start of the stream, kept until the first frame header is found. */
  private prefix: Buffer[] = [];
  private prefixBytes = 0;
  private channels: number | undefined;

  constructor(expected: PcmInfo, options: DecoderOptions = {}) {
    super(expected, options);
  }

  override _construct(callback: (error?: Error | null) => void): void {
    this.mpeg.ready.then(() => callback(), (error: unknown) => callback(decodeError('mp3 decoder failed to load', error)));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    try {
      this.findChannels(chunk);
      const decoded = this.mpeg.decode(chunk);
      if (decoded.samplesDecoded > 0) {
        const channels = this.channels ?? this.pcmInfo.channels;
        this.setInfo({ sampleRate: decoded.sampleRate, channels, bitDepth: 16 });
        this.pushPcm(floatToS16le(decoded.channelData, decoded.samplesDecoded, channels));
      }
      callback();
    } catch (error) {
      callback(error instanceof Error ? error : decodeError('mp3 decoding failed', error));
    }
  }

  override _flush(callback: (error?: Error | null) => void): void {
    this.release();
    if (this.bytesIn > 0 && this.bytesOut === 0) callback(decodeError(`no mp3 audio found in ${this.bytesIn} bytes`));
    else callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.release();
    callback(error);
  }

  private release(): void {
    if (this.freed) return;
    this.freed = true;
    this.mpeg.free();
  }

  private findChannels(chunk: Buffer): void {
    if (this.channels !== undefined || this.prefixBytes > HEADER_SCAN_BYTES) return;
    this.prefix.push(chunk);
    this.prefixBytes += chunk.length;
    const found = mp3ChannelCount(Buffer.concat(this.prefix, this.prefixBytes));
    if (found !== undefined) {
      this.channels = found;
      this.prefix = [];
    }
  }
}

/**
 * Channel count from the first MPEG audio frame header, after any ID3v2 tag.
 * @returns 1 or 2, or undefined when no header is in `bytes` yet
 */
export function mp3ChannelCount(bytes: Buffer): number | undefined {
  let offset = 0;
  if (bytes.length >= ID3V2_HEADER_BYTES && bytes.toString('latin1', 0, 3) === 'ID3') {
    // Syncsafe size: 7 bits per byte; a footer (flag 0x10) adds 10 more bytes.
    const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
    offset = ID3V2_HEADER_BYTES + size + ((bytes[5]! & 0x10) !== 0 ? ID3V2_HEADER_BYTES : 0);
  }
  for (let i = offset; i + 4 <= bytes.length; i++) {
    const b1 = bytes[i + 1]!;
    const b2 = bytes[i + 2]!;
    const sync = bytes[i] === 0xff && (b1 & 0xe0) === 0xe0;
    const version = (b1 >> 3) & 0x03; // 1 is reserved
    const layer = (b1 >> 1) & 0x03; // 0 is reserved
    const bitrate = b2 >> 4; // 15 is invalid
    const rate = (b2 >> 2) & 0x03; // 3 is reserved
    if (sync && version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3) {
      return bytes[i + 3]! >> 6 === MPEG_CHANNEL_MODE_MONO ? 1 : 2;
    }
  }
  return undefined;
}
