/**
 * The default budgets of the realtime client's recovery (issue 24, item 4),
 * chosen for live speech: a voice agent on a call, where a silence of 20 s
 * is a dead call but a resume costs a few hundred milliseconds and never
 * loses or repeats audio (the journal and the request-status route see to
 * that). So each wait on the server is short, and a false alarm is cheap.
 * Every one is an option of `ReliableSession` (and `RealtimeTuning`); the
 * README's "Reliability" section lists them with these reasons.
 */
import { VoxpipeError } from '../errors.js';
import { LocalErrorCode } from '../protocol/codes.js';

/** The defaults, each with the reason it was chosen. */
export const RECOVERY_DEFAULTS = {
  /**
   * Longest quiet while the client waits for something it needs (`input_ack`,
   * audio and `segment_completed` after a `flush`): 5 s. A server acks text
   * on receipt and streams audio as it is generated; real providers start a
   * segment's audio in 0.2 to 2 s, so 5 s is over twice a slow first audio.
   * A false alarm costs one resume (nothing lost, nothing charged twice); a
   * dead server costs 5 to 6.25 s of silence instead of 20 to 40.
   */
  progressTimeoutMs: 5_000,
  /**
   * Longest wait for `finish` after `stop`: 2 s. `stop` goes out only once
   * every segment completed, so all audio is already out and the server owes
   * one frame; waiting longer only delays `end()` (the agent's next turn).
   * Past it the status route settles the request.
   */
  finishTimeoutMs: 2_000,
  /**
   * Deadline of one read of the request-status route: 3 s. It is a small
   * JSON read; a route that does not answer in 3 s will not tell the client
   * anything in time for a call, so the request fails over (under `auto`)
   * instead of retrying a route that hangs.
   */
  statusTimeoutMs: 3_000,
  /**
   * Resumes after a stall (the server went quiet while owing a frame, or
   * sent one the client cannot use) before giving up: 1. One stall may be a
   * one-off and is resumed; a second with no segment completed on the wire
   * in between means this deployment does not deliver, and failover (under
   * `auto`) speaks sooner than more resumes would.
   */
  maxStallResumes: 1,
} as const;

/**
 * The progress deadline is checked in this many slices of the budget (one
 * timer per slice, not per frame): a quiet server is detected between the
 * budget and 1 + 1/PROGRESS_SLICES of it (5 to 6.25 s by default).
 */
export const PROGRESS_SLICES = 4;

/**
 * Check the recovery budgets a caller gave: durations are positive finite
 * milliseconds, `maxStallResumes` a whole number from 0. Throws a
 * VoxpipeError `invalid_config` naming the option and its value (the one
 * code of a bad URL or option at every entry point, `config.ts`).
 */
export function checkBudgets(options: { progressTimeoutMs?: number | undefined; finishTimeoutMs?: number | undefined; statusTimeoutMs?: number | undefined; maxStallResumes?: number | undefined }): void {
  for (const name of ['progressTimeoutMs', 'finishTimeoutMs', 'statusTimeoutMs'] as const) {
    const value = options[name];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw new VoxpipeError(LocalErrorCode.invalidConfig, `${name} must be a positive number of milliseconds, not ${String(value)}`);
    }
  }
  const stalls = options.maxStallResumes;
  if (stalls !== undefined && !(Number.isInteger(stalls) && stalls >= 0)) {
    throw new VoxpipeError(LocalErrorCode.invalidConfig, `maxStallResumes must be a whole number from 0, not ${String(stalls)}`);
  }
}
