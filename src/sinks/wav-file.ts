/**
 * A WAV file from PCM: a 44-byte header first, with streaming sizes so a
 * file cut short by a crash still plays, then the samples; on `end()` the
 * RIFF and data sizes are patched, so the finished file is a valid WAV.
 */
import type { FileHandle } from 'node:fs/promises';
import { pcmDurationMs, type PcmInfo } from '../protocol/audio.js';
import type { SinkOptions } from './base-sink.js';
import { FileSink } from './file-sink.js';
import { SinkKind, type SinkResult } from './types.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from './wav-header.js';

/** Writes s16le PCM in `pcm`'s layout to a WAV file at `path` (created or truncated). */
export class WavFileSink extends FileSink {
  readonly kind = SinkKind.wavFile;

  constructor(
    path: string,
    readonly pcm: PcmInfo,
    options: SinkOptions = {},
  ) {
    super(path, options);
  }

  protected override prologue(): Buffer {
    return buildWavHeader(this.pcm, WAV_UNKNOWN_SIZE);
  }

  protected override async epilogue(file: FileHandle): Promise<void> {
    // RIFF chunks are word-aligned: odd data gets a pad byte that the data size does not count.
    if (this.bodyBytes % 2 === 1) await file.write(Buffer.alloc(1));
    const header = buildWavHeader(this.pcm, this.bodyBytes);
    await file.write(header, 0, header.length, 0);
  }

  protected result(): SinkResult {
    return {
      kind: this.kind,
      bytesIn: this.bytesIn,
      path: this.path,
      pcm: this.pcm,
      durationMs: pcmDurationMs(this.bodyBytes, this.pcm),
    };
  }
}
