/**
 * Stream encoders for the four wire formats, and whole-file encoding for the
 * HTTP routes. Conventions per format are those of `src/protocol/audio.ts`.
 */
import { AudioFormat, type PcmInfo } from '../../protocol/audio.js';
import { Mp3SegmentEncoder } from './mp3.js';
import { loadOpusScript, OggOpusEncoder } from './opus.js';
import { buildWavHeader } from '../../protocol/wav.js';

/** Encodes one request's PCM, segment by segment. */
export interface StreamEncoder {
  readonly format: AudioFormat;
  /** Encodes PCM (s16le, any chunking); may return an empty buffer while a frame fills. */
  write(pcm: Buffer): Buffer;
  /** Ends one segment: returns the rest, so the output so far ends on a frame (mp3) or page (opus) boundary. */
  endSegment(): Buffer;
  /** Ends the request (includes `endSegment()`); the encoder is unusable afterwards. */
  end(): Buffer;
}

/** Options of `createStreamEncoder`. */
export interface StreamEncoderOptions {
  /**
   * Whether this encoder starts the request's stream; default true. With
   * false a `wav` encoder writes no header (a continuation of a stream whose
   * first frame already had it). Other formats ignore it.
   */
  streamStart?: boolean;
}

class PcmEncoder implements StreamEncoder {
  readonly format = AudioFormat.pcm;
  write(pcm: Buffer): Buffer {
    return pcm;
  }
  endSegment(): Buffer {
    return Buffer.alloc(0);
  }
  end(): Buffer {
    return Buffer.alloc(0);
  }
}

/** Raw PCM after a 44-byte streaming header on the first output. */
class WavStreamEncoder implements StreamEncoder {
  readonly format = AudioFormat.wav;
  #header: Uint8Array | undefined;
  constructor(info: PcmInfo, streamStart: boolean) {
    this.#header = streamStart ? buildWavHeader(info) : undefined;
  }
  write(pcm: Buffer): Buffer {
    return this.#withHeader(pcm);
  }
  endSegment(): Buffer {
    return this.#withHeader(Buffer.alloc(0));
  }
  end(): Buffer {
    return this.#withHeader(Buffer.alloc(0));
  }
  #withHeader(data: Buffer): Buffer {
    const header = this.#header;
    if (header === undefined) return data;
    this.#header = undefined;
    return Buffer.concat([header, data]);
  }
}

class Mp3StreamEncoder implements StreamEncoder {
  readonly format = AudioFormat.mp3;
  readonly #mp3: Mp3SegmentEncoder;
  constructor(info: PcmInfo) {
    this.#mp3 = new Mp3SegmentEncoder(info);
  }
  write(pcm: Buffer): Buffer {
    return this.#mp3.write(pcm);
  }
  endSegment(): Buffer {
    return this.#mp3.endSegment();
  }
  end(): Buffer {
    return this.#mp3.endSegment();
  }
}

class OpusStreamEncoder implements StreamEncoder {
  readonly format = AudioFormat.opus;
  readonly #opus: OggOpusEncoder;
  constructor(info: PcmInfo) {
    this.#opus = new OggOpusEncoder(info);
  }
  write(pcm: Buffer): Buffer {
    return this.#opus.write(pcm);
  }
  endSegment(): Buffer {
    return this.#opus.endSegment();
  }
  end(): Buffer {
    return this.#opus.end();
  }
}

/**
 * A stream encoder for one request. `wav` writes its streaming header on the
 * first output only; `opus` throws when `supportedFormats()` lacks it.
 */
export function createStreamEncoder(format: AudioFormat, info: PcmInfo, options: StreamEncoderOptions = {}): StreamEncoder {
  switch (format) {
    case AudioFormat.pcm:
      return new PcmEncoder();
    case AudioFormat.wav:
      return new WavStreamEncoder(info, options.streamStart ?? true);
    case AudioFormat.mp3:
      return new Mp3StreamEncoder(info);
    case AudioFormat.opus:
      return new OpusStreamEncoder(info);
  }
}

/** A complete file of `pcm` for the HTTP routes; `wav` carries exact sizes. */
export function encodeWhole(format: AudioFormat, pcm: Buffer, info: PcmInfo): Buffer {
  if (format === AudioFormat.pcm) return pcm;
  if (format === AudioFormat.wav) return Buffer.concat([buildWavHeader(info, pcm.length), pcm]);
  const encoder = createStreamEncoder(format, info);
  return Buffer.concat([encoder.write(pcm), encoder.end()]);
}

let supported: AudioFormat[] | undefined;

/**
 * Formats that really work here: pcm, wav and mp3 always (mp3 is checked by
 * encoding a frame of silence), opus only when opusscript loads and encodes.
 */
export function supportedFormats(): AudioFormat[] {
  supported ??= probeFormats();
  return [...supported];
}

function probeFormats(): AudioFormat[] {
  const formats: AudioFormat[] = [AudioFormat.pcm, AudioFormat.wav];
  const info: PcmInfo = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
  const silence = Buffer.alloc(480 * 2); // 20 ms at 24 kHz
  for (const format of [AudioFormat.mp3, AudioFormat.opus] as const) {
    if (format === AudioFormat.opus && loadOpusScript() === undefined) continue;
    try {
      if (encodeWhole(format, silence, info).length > 0) formats.push(format);
    } catch {
      // Not usable here: leave it out of the capabilities.
    }
  }
  return formats;
}
