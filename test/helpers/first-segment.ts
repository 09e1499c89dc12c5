import type { SpeechStream } from '../../src/stream/speech-stream.js';

/** What a reader took of a stream's first segment. */
export interface FirstSegmentRead {
  segmentId: string;
  /** Bytes of the first segment read. */
  bytes: number;
  /** Bytes per ms of the stream's PCM. */
  bytesPerMs: number;
}

/**
 * Read `speech`'s first segment as a player would, and stop once `ms` of its
 * audio were read, or where the next segment begins (default: all of it).
 */
export async function readFirstSegment(speech: SpeechStream, ms = Infinity): Promise<FirstSegmentRead> {
  let segmentId: string | undefined;
  let bytes = 0;
  let bytesPerMs = 0;
  for await (const chunk of speech.chunks()) {
    segmentId ??= chunk.segmentId;
    if (chunk.segmentId !== segmentId) break;
    bytesPerMs = (chunk.sampleRate * chunk.channels * 2) / 1000;
    bytes += chunk.data.length;
    if (bytes >= ms * bytesPerMs) break;
  }
  if (segmentId === undefined) throw new Error('the stream ended before any audio');
  return { segmentId, bytes, bytesPerMs };
}
