/**
 * `GET /v2/tts/requests/{request_id}` (spec 3.5, 4.10) and the audio of one
 * segment of its manifest. Both need the Bearer key and answer 404 for a
 * request of another account, exactly as for an unknown one.
 *
 * `audio_url` is a path relative to `{rt_http_url}`
 * (`/v2/tts/requests/{id}/segments/{segment_id}/audio`), so it stays right
 * behind a proxy. It serves exactly the bytes the `audio` frames carried for
 * that segment, in the request's format: for `wav` the first segment starts
 * with the 44-byte streaming header and later segments are raw PCM that
 * continues the stream; for `pcm` it is raw PCM. A client that received
 * `n` bytes of a segment can therefore take the rest as `bytes[n..]`.
 */
import { AUDIO_CONTENT_TYPE } from '../../protocol/audio.js';
import { REALTIME_PATHS, RequestState } from '../../protocol/constants.js';
import { RequestStatusSchema, type RequestStatus, type SegmentManifestEntry } from '../../protocol/events.js';
import type { ServerContext } from '../context.js';
import { notFound } from '../http/errors.js';
import { defineRoute, type RouteDef } from '../http/router.js';
import { pcmMetadata } from './capabilities.js';
import { requestUnits, resultAvailable, SegmentState, type RequestRecord, type RequestStore } from './request-store.js';

/** Route of one segment's stored audio. */
export function segmentAudioPath(requestId: string, segmentId: string): string {
  return `${REALTIME_PATHS.requests}/${encodeURIComponent(requestId)}/segments/${encodeURIComponent(segmentId)}/audio`;
}

/** The status body of a request (RequestStatusSchema). */
export function requestStatusBody(record: RequestRecord): RequestStatus {
  const available = resultAvailable(record);
  const body: RequestStatus = {
    request_id: record.requestId,
    state: record.state,
    retryable: record.state === RequestState.failedRetryable,
    units: requestUnits(record),
    result_available: available,
    format: record.format,
  };
  if (record.failure) body['error'] = { code: record.failure.code, message: record.failure.message };
  if (available) {
    body.segments = record.segments.map((s) => {
      const entry: SegmentManifestEntry = {
        segment_id: s.segmentId,
        index: s.index,
        state: s.state,
        characters: s.characters,
        units: s.units,
        audio_bytes: s.audioBytes,
      };
      if (s.state === SegmentState.completed && s.audio) entry.audio_url = segmentAudioPath(record.requestId, s.segmentId);
      return entry;
    });
  }
  return body;
}

/** The `alt` dialect's manifest: entries without `index`, `url` instead of `audio_url` (in listed order). */
function altManifest(body: RequestStatus): Record<string, unknown> {
  if (!body.segments) return body;
  return {
    ...body,
    segments: body.segments.map(({ index: _index, audio_url, ...rest }) => (audio_url === undefined ? rest : { ...rest, url: audio_url })),
  };
}

/** The two routes over `requests`. */
export function statusRoutes(ctx: ServerContext, requests: RequestStore): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: `${REALTIME_PATHS.requests}/{request_id}`,
      summary: 'State of a reliable-mode realtime request, with the segments manifest when result_available',
      tags: ['realtime'],
      responses: { 200: { description: 'request status', schema: RequestStatusSchema }, 404: { description: 'unknown request, or one of another account' } },
      async handler({ account, params, res }) {
        if (ctx.faults.take('statusRouteHangs')) {
          // Fault injection: no answer at all, until the client gives up and goes.
          await new Promise((resolve) => res.once('close', resolve));
          return;
        }
        const record = requests.get(account.userId, params['request_id'] ?? '');
        if (!record) throw notFound('request');
        const body = requestStatusBody(record);
        return { json: ctx.dialect.manifest === 'alt' ? altManifest(body) : body };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${REALTIME_PATHS.requests}/{request_id}/segments/{segment_id}/audio`,
      summary: 'Complete audio of one completed segment, exactly as its audio frames carried it',
      tags: ['realtime'],
      responses: { 200: { description: 'audio in the request format', contentType: 'application/octet-stream' }, 404: { description: 'unknown request or segment, or audio not available' } },
      handler({ account, params }) {
        const record = requests.get(account.userId, params['request_id'] ?? '');
        const segment = record?.segments.find((s) => s.segmentId === params['segment_id']);
        if (!record || !segment || segment.state !== SegmentState.completed || !segment.audio) throw notFound('segment audio');
        const pcm = pcmMetadata(ctx);
        return {
          body: segment.audio,
          headers: {
            'content-type': AUDIO_CONTENT_TYPE[record.format],
            'x-sample-rate': pcm.sample_rate,
            'x-channels': pcm.channels,
            'x-bit-depth': pcm.bit_depth,
          },
        };
      },
    }),
  ];
}
