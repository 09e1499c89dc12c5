/**
 * The default budgets of the realtime client's deadlines and recovery, the
 * one place each default is set (both machines read them here), chosen for
 * live speech: a voice agent on a call, where a silence of 20 s is a dead
 * call but a resume costs a few hundred milliseconds and never loses or
 * repeats audio (the journal and the request-status route see to that). So
 * each wait on the server is short, and a false alarm is cheap. Every one
 * is an option of `ReliableSession` (and `RealtimeTuning`); the README's
 * "Reliability" section lists them with these reasons.
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
  /**
   * Wait for `ready` after `start`: 10 s. The service answers `start` once it
   * has a session with its provider, which a cold provider may take seconds
   * to open. Past it, reliable mode resumes and simple mode fails
   * (retryable).
   */
  startTimeoutMs: 10_000,
  /**
   * Attempts of one recovery: 6. With the default backoff (200 ms doubling to
   * a 5 s cap) they wait about 11 s in all, inside `maxResumeMs`; the count
   * starts again once a resumed connection makes progress.
   */
  maxRetries: 6,
  /**
   * Longest one recovery may take, from its first failure until progress:
   * 60 s, so attempts that each wait out their own deadlines (connect,
   * `ready`, a status read) still end.
   */
  maxResumeMs: 60_000,
  /**
   * Reads of a request the status route calls `running` before giving up:
   * 20, about 80 s of backoff at its 5 s cap: a request still generating
   * after that will not finish in time to be heard.
   */
  maxStatusPolls: 20,
} as const;

/**
 * The progress deadline is checked in this many slices of the budget (one
 * timer per slice, not per frame): a quiet server is detected between the
 * budget and 1 + 1/PROGRESS_SLICES of it (5 to 6.25 s by default).
 */
export const PROGRESS_SLICES = 4;

/**
 * Overload is not death. A saturated server is slow for every
 * stream, a gone one is silent for every stream: so when a stream's own
 * progress deadline runs out, the machine looks at the progress of the other
 * streams of this process on the same server origin (`ServerActivity`: acks,
 * audio and completions, never `pong`s). A slice of the deadline in
 * which another stream progressed is *busy*, not quiet: the server is alive
 * and behind, and a resume would only add a reconnect, a `start` and a status
 * read to its queue (what turned 6 of 10,000 streams into `timeout`s in
 * bench/concurrency.mjs). A server really gone gives no stream progress, so
 * every slice is quiet and the stall comes within the budget as before.
 *
 * Bounded both ways: busy slices are counted and at most
 * `OVERLOAD_MAX_BUDGETS` budgets of them are waited (5 min at the default
 * 5 s), after which the slices count as quiet again, so a stream the server
 * forgot while serving others still ends, within (cap + 1.25) budgets; and
 * sooner, within one budget, once the others stop progressing. Why so long:
 * a saturated server works through its queue, and the queue is as long as
 * the load. With 10,000 streams on this 2-core machine the first segment of
 * every stream took 61 s (the raw client's 78 s); a cap of 11 budgets (55 s)
 * turned every one of them into a resume, whose reconnect and status read
 * the saturated server could not answer in time: 0 of 10,000 complete
 * (bench/concurrency.mjs, BENCHMARKS.md). Per stream: the machine's
 * `overload` option (`new OverloadWatch(activity, maxBudgets)`). Memory: one
 * counter per origin (`serverActivity()`), at most `MAX_ACTIVITY_ORIGINS` of
 * them.
 */
export const OVERLOAD_MAX_BUDGETS = 60;

/** Origins whose activity is kept; past this the oldest entry is dropped (its streams keep their counter, new streams share a new one). */
export const MAX_ACTIVITY_ORIGINS = 256;

/** What every connection of this process saw of one server origin. */
export interface ServerActivity {
  /** Bumped by each frame that moved what a stream was owed (acks, audio, completions; never `pong`). */
  progress: number;
  /** Bumped by every frame received on any connection (a `pong` too): the server process is alive. */
  frames: number;
}

/**
 * A keep-alive `ping` left unanswered while other connections to the same
 * server received frames is a busy server, not a dead peer (overload is not
 * death): the check is made again, for at most this long in all
 * (the same 5 min as `OVERLOAD_MAX_BUDGETS` budgets of the default progress
 * deadline). A server really gone sends nothing on any connection, so the
 * first check already ends the connection. Why: with 10,000 streams on one
 * saturated reference server, every stream waiting its turn pinged after
 * 15 s of quiet and none got its pong within 10 s; 10,071 keep-alive
 * timeouts were the first cause of every resume in bench/concurrency.mjs, and
 * the resumes' reconnects and status reads then buried the server.
 */
export const KEEPALIVE_BUSY_MAX_MS = OVERLOAD_MAX_BUDGETS * RECOVERY_DEFAULTS.progressTimeoutMs;

const activities = /* @__PURE__ */ new Map<string, ServerActivity>();

/** The shared activity of the server at `url` (keyed by its origin: scheme, host, port). */
export function serverActivity(url: string): ServerActivity {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    origin = url;
  }
  let activity = activities.get(origin);
  if (activity === undefined) {
    if (activities.size >= MAX_ACTIVITY_ORIGINS) activities.delete(activities.keys().next().value!);
    activity = { progress: 0, frames: 0 };
    activities.set(origin, activity);
  }
  return activity;
}

/**
 * One stream's view of its server's activity, for its progress deadline
 * (the machine's `overload` option): `progress()` on each frame that moved
 * what the stream is owed, `restart()` when the deadline is armed anew, and
 * `busy(ownProgress)` at the end of each slice: whether a slice without own
 * progress saw another stream on the server progress, within the cap.
 */
export class OverloadWatch {
  readonly #activity: ServerActivity;
  /** `#activity.progress` when the current slice began. */
  #seen = 0;
  /** Busy slices since the stream's own last progress. */
  #busy = 0;
  /** Busy slices waited at most. */
  readonly #maxSlices: number;

  /** @param maxBudgets progress budgets of busy slices waited at most; default `OVERLOAD_MAX_BUDGETS` */
  constructor(activity: ServerActivity, maxBudgets = OVERLOAD_MAX_BUDGETS) {
    this.#activity = activity;
    this.#maxSlices = Math.max(0, Math.floor(maxBudgets)) * PROGRESS_SLICES;
  }

  progress(): void {
    this.#activity.progress++;
  }

  /** The progress count of every stream on this origin: a later read that differs means the server served some stream meanwhile. */
  get activity(): number {
    return this.#activity.progress;
  }

  restart(): void {
    this.#seen = this.#activity.progress;
    this.#busy = 0;
  }

  busy(ownProgress: boolean): boolean {
    const moved = this.#activity.progress !== this.#seen;
    this.#seen = this.#activity.progress;
    if (ownProgress) this.#busy = 0;
    else if (moved && this.#busy < this.#maxSlices) {
      this.#busy++;
      return true;
    }
    return false;
  }
}

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
