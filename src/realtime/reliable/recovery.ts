/**
 * The recovery decision of reliable mode, pure: from what the request-status
 * route answered and the segments still pending, what to do next. The
 * machine holds the counters (status polls) and performs the action.
 *
 * - A failed read: back off and read again if it is retryable, else fail.
 * - Unknown request (404): the service never registered it; start it again
 *   under the same id, without `retry_failed`.
 * - `running`: read again later.
 * - `failed_retryable`: take from the manifest the audio of the leading run
 *   of pending segments the service completed (order must hold), then reopen
 *   with `retry_failed` for the rest.
 * - `completed`: settle every pending segment from the manifest (audio where
 *   offered, else what was emitted); a pending segment that was never sent
 *   cannot be, since the request is over.
 * - `failed_terminal` or a state not in the spec: fail.
 */
import { ResumeError, type VoxpipeError } from '../../errors.js';
import { RequestState } from '../../protocol/constants.js';
import { ResumeErrorCode, type StatusResult } from './types.js';

/** What the decision needs to know of a pending segment. */
export interface PendingSegment {
  segmentId: string;
  /** Its flush was sent at least once. */
  everFlushed: boolean;
}

/** A pending segment settled from the manifest. */
export interface ManifestSettlement {
  segmentId: string;
  /** Where its complete audio is; undefined: complete it with what was emitted. */
  url: string | undefined;
  units: number;
  /** Audio bytes the manifest says the segment carries, when it says. */
  audioBytes?: number;
}

export type RecoveryAction =
  | { kind: 'retry'; error: VoxpipeError }
  | { kind: 'fail'; error: VoxpipeError }
  /** Start the request again under the same id, without `retry_failed`. */
  | { kind: 'restart' }
  /** The request still runs: read the status again later. */
  | { kind: 'poll' }
  /** Settle `items` from the manifest, then `reopen` (resume the rest) or `finish`. */
  | { kind: 'recover'; after: 'reopen' | 'finish'; items: ManifestSettlement[] };

export function decideRecovery(result: StatusResult, pending: readonly PendingSegment[], requestId: string): RecoveryAction {
  if (result.kind === 'error') return result.error.retryable ? { kind: 'retry', error: result.error } : { kind: 'fail', error: result.error };
  if (result.kind === 'not-found') return { kind: 'restart' };
  const status = result.status;
  const manifest = new Map((status.segments ?? []).map((s) => [s.segment_id, s]));
  switch (status.state) {
    case RequestState.running:
      return { kind: 'poll' };
    case RequestState.failedRetryable: {
      const items: ManifestSettlement[] = [];
      for (const segment of pending) {
        const item = manifest.get(segment.segmentId);
        if (item?.state !== 'completed' || item.audio_url === undefined) break;
        items.push({ segmentId: segment.segmentId, url: item.audio_url, units: item.units });
      }
      return { kind: 'recover', after: 'reopen', items };
    }
    case RequestState.completed: {
      const items: ManifestSettlement[] = [];
      for (const segment of pending) {
        if (!segment.everFlushed) {
          return { kind: 'fail', error: new ResumeError(ResumeErrorCode.requestCompleted, `request ${requestId} completed before segment ${segment.segmentId} was sent`, { requestId }) };
        }
        const item = manifest.get(segment.segmentId);
        const done = item?.state === 'completed';
        items.push({ segmentId: segment.segmentId, url: done ? item.audio_url : undefined, units: done ? item.units : 0, ...(done && item.audio_bytes !== undefined && { audioBytes: item.audio_bytes }) });
      }
      return { kind: 'recover', after: 'finish', items };
    }
    default:
      return { kind: 'fail', error: new ResumeError(ResumeErrorCode.requestFailedTerminal, `request ${requestId} failed terminally`, { requestId }) };
  }
}
