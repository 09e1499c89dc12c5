/**
 * Timings and sizes of the realtime service, in one place. The spec leaves
 * them open (section 8 names no authentication or idle timeout), so these are
 * the reference server's choices.
 */
export interface RealtimeTuning {
  idleTimeoutMs: number;
  ticketTtlMs: number;
  backpressureHighWaterBytes: number;
  backpressureStallMs: number;
  backpressurePollMs: number;
  coalesceBytes: number;
  maxAudioFrameBytes: number;
  coalesceDelayMs: number;
  maxStoredAudioBytesPerRequest: number;
  requestRetentionMs: number;
  orphanScanMs: number;
  maxFinishedAudioBytes: number;
  maxEventIdsPerConnection: number;
  drainCloseWaitMs: number;
}

const DEFAULTS: Readonly<RealtimeTuning> = {
  /** A connection with no frame and nothing generating ends after this (`finish` reason `timeout`). */
  idleTimeoutMs: 60_000, // 60 s
  /** Lifetime of a browser ticket. */
  ticketTtlMs: 60_000, // 60 s
  /** Above this many bytes queued on the socket, the audio pump stops pulling engine chunks. */
  backpressureHighWaterBytes: 1024 * 1024, // 1 MiB
  /** The queue must fall below the high-water mark within this, else `client_backpressure`. */
  backpressureStallMs: 30_000, // 30 s
  /** How often a paused pump looks at the socket queue again. */
  backpressurePollMs: 5,
  /** After the first frame of a segment, audio is coalesced into frames of at least this many bytes... */
  coalesceBytes: 8 * 1024, // 8 KiB
  /** ...and at most this many (an engine chunk larger than this is split). */
  maxAudioFrameBytes: 16 * 1024, // 16 KiB
  /** Coalesced audio never waits longer than this for more engine output. */
  coalesceDelayMs: 10,
  /** Audio of completed segments kept per request for the manifest; later segments get no `audio_url`. */
  maxStoredAudioBytesPerRequest: 64 * 1024 * 1024, // 64 MiB
  /**
   * A finished request (completed, or failed) stays readable on the status
   * route, and resumable, this long after it finished; then it is forgotten
   * (the spec leaves retention to the deployment).
   */
  requestRetentionMs: 10 * 60_000, // 10 min
  /** Several processes on one store: how often each looks for requests left running by a process that stopped (2 s). */
  orphanScanMs: 2_000,
  /** Stored audio of finished requests, all together; past it the oldest finished requests are forgotten first. */
  maxFinishedAudioBytes: 256 * 1024 * 1024, // 256 MiB
  /** Distinct client `event_id`s remembered per connection (duplicate detection); beyond it, `session_limit_exceeded`. */
  maxEventIdsPerConnection: 250_000,
  /** On drain, how long to wait for a peer to answer the close frame before cutting the socket. */
  drainCloseWaitMs: 2_000, // 2 s
};

/** The values in force (read at each use, so a test override applies to running servers). */
export const REALTIME_TUNING: Readonly<RealtimeTuning> = { ...DEFAULTS };

/**
 * Change tuning values for a test (e.g. a 200 ms idle timeout instead of
 * 60 s); returns a function that restores the defaults. Server code never
 * calls it.
 */
export function overrideRealtimeTuning(patch: Partial<RealtimeTuning>): () => void {
  Object.assign(REALTIME_TUNING, patch);
  return () => {
    Object.assign(REALTIME_TUNING, DEFAULTS);
  };
}
