/** The pcm "decoder": s16le passes through, cut to whole sample frames. */
import { AudioFormat, type PcmInfo } from '../protocol/audio.js';
import { Decoder, type DecoderOptions } from './base.js';

export class PcmPassthrough extends Decoder {
  readonly format = AudioFormat.pcm;

  constructor(pcm: PcmInfo, options: DecoderOptions = {}) {
    super(pcm, options);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    // pcm carries no header: the announced layout is the real one.
    if (!this.infoKnown) this.setInfo(this.pcmInfo);
    this.pushPcm(chunk);
    callback();
  }
}
