/**
 * The `compat` transport: `POST {root_url}/v1/audio/speech` per segment
 * (binary audio; `response_format` mp3, wav or pcm). The route takes no
 * idempotency key, so a lost response is not resent: the segment fails and
 * a failover takes it over.
 */
import { UnavailableError } from '../../errors.js';
import { Compat, type CompatFormat } from '../../http/resources/compat.js';
import type { SegmentInput, TransportName } from '../../transport.js';
import { HttpSegmentTransport, type FetchedSegment, type HttpTransportOptions } from './http-base.js';

export class CompatTransport extends HttpSegmentTransport {
  readonly name: TransportName = 'compat';
  readonly #compat: Compat;

  /** @throws UnavailableError for format `opus` (the compatible route has mp3, wav and pcm) */
  constructor(options: HttpTransportOptions) {
    super(options);
    if (this.options.format === 'opus') throw new UnavailableError('the compatible route produces mp3, wav or pcm, not opus');
    this.#compat = new Compat(this.http);
  }

  protected async fetchSegment(segment: SegmentInput, signal: AbortSignal): Promise<FetchedSegment> {
    const o = this.options;
    const res = await this.#compat.speech({
      model: o.model,
      input: segment.text,
      voice: o.voiceId,
      response_format: this.requestFormat('pcm') as CompatFormat,
      ...(o.speed === undefined ? {} : { speed: o.speed }),
      signal,
      onRetry: this.onRetry,
    });
    return { data: res.audio, contentType: res.contentType, headers: res.headers, units: res.creditsUsed, quotaRemaining: res.quotaRemaining };
  }
}
