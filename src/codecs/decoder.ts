/**
 * `createDecoder(info)`: the Transform that turns a stream's bytes, in the
 * format announced by `ready`, into s16le interleaved PCM. The pipeline picks
 * it from `info.format`; every decoder streams (output appears as input
 * arrives) and honours backpressure on both sides.
 */
import { AudioFormat } from '../protocol/audio.js';
import type { AudioInfo, Decoder, DecoderOptions } from './base.js';
import { Mp3Decoder } from './mp3.js';
import { OpusDecoder, type OpusDecodeRate } from './opus.js';
import { PcmPassthrough } from './pcm.js';
import { WavDecoder } from './wav.js';

export { Decoder, decodeError, DEFAULT_HIGH_WATER_MARK, type AudioInfo, type DecoderOptions } from './base.js';
export { OPUS_DECODE_RATES, type OpusDecodeRate } from './opus.js';
export { mp3ChannelCount } from './mp3.js';

export interface CreateDecoderOptions extends DecoderOptions {
  /** Output rate of the opus decoder; default 48 000 Hz. Other formats keep their own rate. */
  opusSampleRate?: OpusDecodeRate;
}

/**
 * The decoder for `info.format`:
 * - `pcm`: passthrough, cut to whole sample frames;
 * - `wav`: strips the RIFF header (streaming or sized), layout from its `fmt ` chunk;
 * - `mp3`: `mpg123-decoder`, layout from the bitstream;
 * - `opus`: `ogg-opus-decoder`, 48 kHz unless `opusSampleRate` says otherwise.
 *
 * Listen for `'info'` (or read `pcmInfo` after it) for the real output layout.
 */
export function createDecoder(info: AudioInfo, options: CreateDecoderOptions = {}): Decoder {
  const base: DecoderOptions = options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark };
  switch (info.format) {
    case AudioFormat.pcm:
      return new PcmPassthrough(info, base);
    case AudioFormat.wav:
      return new WavDecoder(info, base);
    case AudioFormat.mp3:
      return new Mp3Decoder(info, base);
    case AudioFormat.opus:
      return new OpusDecoder(info, options.opusSampleRate === undefined ? base : { ...base, sampleRate: options.opusSampleRate });
  }
}
