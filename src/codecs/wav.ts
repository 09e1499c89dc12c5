/**
 * The wav "decoder": reads the RIFF header (split across any number of
 * chunks), then passes the samples through. A streaming header (unknown
 * size) passes everything after it; a header with a data size passes exactly
 * that many bytes and ignores trailing chunks (LIST, id3, ...).
 */
import { AudioFormat, type PcmInfo } from '../protocol/audio.js';
import { VoxpipeError } from '../errors.js';
import { SinkErrorCode } from '../protocol/codes.js';
import { readWavHeader, type WavHeader } from '../protocol/wav.js';
import { Decoder, decodeError, type DecoderOptions } from './base.js';

export class WavDecoder extends Decoder {
  readonly format = AudioFormat.wav;
  /** Header bytes collected so far, until the data chunk starts. */
  private head: Buffer[] = [];
  private headBytes = 0;
  /** Sample bytes still expected; undefined while unknown (streaming header) or before the header. */
  private remaining: number | undefined;
  private inData = false;

  constructor(expected: PcmInfo, options: DecoderOptions = {}) {
    super(expected, options);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    try {
      if (this.inData) this.pushSamples(chunk);
      else this.readHeader(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: (error?: Error | null) => void): void {
    if (!this.inData && this.headBytes > 0) callback(decodeError(`wav stream ended inside its header (${this.headBytes} bytes)`));
    else callback();
  }

  private readHeader(chunk: Buffer): void {
    this.head.push(chunk);
    this.headBytes += chunk.length;
    const bytes = Buffer.concat(this.head, this.headBytes);
    const header = parseWavHeader(bytes);
    if (!header) return;
    this.head = [];
    this.inData = true;
    this.remaining = header.dataBytes;
    this.setInfo(header.pcm);
    if (bytes.length > header.dataOffset) this.pushSamples(bytes.subarray(header.dataOffset));
  }

  private pushSamples(chunk: Buffer): void {
    if (this.remaining === undefined) {
      this.pushPcm(chunk);
      return;
    }
    const take = Math.min(this.remaining, chunk.length);
    this.remaining -= take;
    if (take > 0) this.pushPcm(chunk.subarray(0, take));
  }
}

/**
 * Parse a WAV header from the first bytes of a stream.
 * @returns the header, or undefined when `bytes` ends before the `data` chunk starts
 * @throws VoxpipeError `decode_failed` when the bytes are not 16-bit integer PCM WAV
 */
export function parseWavHeader(bytes: Uint8Array): WavHeader | undefined {
  const read = readWavHeader(bytes);
  if (read.status === 'invalid') throw new VoxpipeError(SinkErrorCode.decodeFailed, `invalid WAV header: ${read.reason}`);
  return read.status === 'header' ? read.header : undefined;
}
