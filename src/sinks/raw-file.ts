/** A file that gets the bytes exactly as written: raw PCM, or an mp3/Ogg Opus stream copied as is. */
import type { PcmInfo } from '../protocol/audio.js';
import { pcmDurationMs } from '../protocol/audio.js';
import type { SinkOptions } from './base-sink.js';
import { FileSink } from './file-sink.js';
import { SinkKind, type SinkResult } from './types.js';

export interface RawFileSinkOptions extends SinkOptions {
  /** Layout of the bytes when they are PCM, so the result can report a duration. */
  pcm?: PcmInfo;
}

/** Writes every byte to `path` (created or truncated). */
export class RawFileSink extends FileSink {
  readonly kind = SinkKind.rawFile;
  private readonly pcm: PcmInfo | undefined;

  constructor(path: string, options: RawFileSinkOptions = {}) {
    super(path, options);
    this.pcm = options.pcm;
  }

  protected result(): SinkResult {
    const result: SinkResult = { kind: this.kind, bytesIn: this.bytesIn, path: this.path };
    if (this.pcm) {
      result.pcm = this.pcm;
      result.durationMs = pcmDurationMs(this.bodyBytes, this.pcm);
    }
    return result;
  }
}
