/**
 * Stored audio files (sync `cache: true` results, job results and job
 * segments), owned by one account and served through signed URLs.
 */
import { AUDIO_CONTENT_TYPE, type AudioFormat } from '../../../protocol/audio.js';
import type { ServerContext } from '../../context.js';
import type { Collection } from '../../store/types.js';

export interface StoredAudio {
  id: string;
  userId: string;
  format: AudioFormat;
  contentType: string;
  /** File name offered by `Content-Disposition` on downloads. */
  filename: string;
  data: Buffer;
  createdAt: string;
}

/** File extension of each format. */
export const AUDIO_EXTENSION: Record<AudioFormat, string> = { pcm: 'pcm', wav: 'wav', mp3: 'mp3', opus: 'ogg' };

export class AudioStore {
  readonly #files: Collection<StoredAudio>;

  constructor(private readonly ctx: ServerContext, collection = 'audio-files') {
    this.#files = ctx.store.collection<StoredAudio>(collection);
  }

  /** Store `data` for `userId`; `name` (without extension) defaults to the new id. */
  put(userId: string, format: AudioFormat, data: Buffer, name?: string): StoredAudio {
    const id = this.ctx.newId('aud');
    const file: StoredAudio = {
      id,
      userId,
      format,
      contentType: AUDIO_CONTENT_TYPE[format],
      filename: `${name ?? id}.${AUDIO_EXTENSION[format]}`,
      data,
      createdAt: this.ctx.now().toISOString(),
    };
    this.#files.set(id, file);
    return file;
  }

  get(id: string): StoredAudio | undefined {
    return this.#files.get(id);
  }
}
