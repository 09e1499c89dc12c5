/**
 * The `sync` transport: one `POST /speech/tts` per segment with `cache: true`
 * and a stable `X-Request-Id` derived from the stream's request id and the
 * segment id, then a GET of the returned `audio_url` with the key. A lost
 * response is replayed (by the client core's retry, or by another transport
 * built with the same `requestId` after a failover) and the server answers
 * the stored result without a second charge (spec 3.6).
 */
import { createHash } from 'node:crypto';
import { Tts } from '../../http/resources/tts.js';
import { LIMITS } from '../../protocol/limits.js';
import type { SegmentInput, TransportName } from '../../transport.js';
import { HttpSegmentTransport, type FetchedSegment, type HttpTransportOptions } from './http-base.js';

/**
 * `X-Request-Id` of one segment: `<requestId>:<segmentId>`, or a SHA-256
 * based id when that would exceed 128 characters. Deterministic, so a replay
 * after any failure names the same generation.
 */
export function segmentRequestId(requestId: string, segmentId: string): string {
  const plain = `${requestId}:${segmentId}`;
  if (plain.length <= LIMITS.idMaxChars) return plain;
  return `vx-${createHash('sha256').update(requestId).update('\0').update(segmentId).digest('hex')}`;
}

export class SyncTransport extends HttpSegmentTransport {
  readonly name: TransportName = 'sync';
  readonly #tts: Tts;

  constructor(options: HttpTransportOptions) {
    super(options);
    this.#tts = new Tts(this.http);
  }

  protected async fetchSegment(segment: SegmentInput, signal: AbortSignal): Promise<FetchedSegment> {
    const result = await this.#tts.synthesizeCached({
      ...this.ttsFields(segment.text),
      requestId: segmentRequestId(this.requestId, segment.segmentId),
      signal,
      onRetry: this.onRetry,
    });
    const file = await this.#tts.fetchAudio(result.audioUrl, { signal });
    return { data: file.data, contentType: file.contentType, headers: file.headers, units: result.creditsUsed, quotaRemaining: result.quotaRemaining };
  }
}
