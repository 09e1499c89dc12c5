/**
 * The close-code policy: one table of the WebSocket close codes a realtime
 * connection can end with, what each means and what the client does about
 * it. Every reader of a close (the connection's handshake, the reliable
 * machine, the simple machine, the browser session) asks `closePolicy()`;
 * none keeps a list of codes of its own.
 *
 * Spec 7.7 retries automatically only on 1012 and 1013 (or an `error` with
 * `retryable: true`). A transport that dropped without a close frame (1006,
 * or any close that was not clean) is retried too: the server never said the
 * request failed, and the reliable mode's status read settles what was done.
 * 1011 and 1001 say nothing about the request: no blind retry, but the
 * reliable machine reads the status route before giving up.
 *
 * `closeCodeTable()` is the whole table (code, meaning, action, retryable,
 * why); test/protocol/close-codes.md is generated from it.
 */

/** WebSocket close codes the protocol uses or a client sees. */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  /** A close frame without a code (RFC 6455: never sent, only reported). */
  noStatus: 1005,
  /** No close frame at all: the transport dropped (RFC 6455: never sent, only reported). */
  abnormal: 1006,
  policyViolation: 1008,
  messageTooBig: 1009,
  internalError: 1011,
  /** Service restart (drain): reconnect and resume. */
  serviceRestart: 1012,
  /** Try again later: reconnect and resume. */
  tryAgainLater: 1013,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

/** What the client does when a connection closes before the request finished. */
export const CloseAction = {
  /** Reconnect and resume (reliable mode); the error is `retryable`. */
  resume: 'resume',
  /** Not retryable by itself; the reliable machine reads the request-status route once `ready` came, and resumes only on its word. */
  askStatus: 'ask-status',
  /** Fail: trying again would meet the same answer. */
  fail: 'fail',
} as const;
export type CloseAction = (typeof CloseAction)[keyof typeof CloseAction];

/** What a close means for the client: the action, and the `retryable` of the error it becomes. */
export interface ClosePolicy {
  action: CloseAction;
  /** The `retryable` of the error a close before the end becomes (true exactly for `resume`). */
  retryable: boolean;
}

/** One row of the documented table: the policy, with what the code means and why the action. */
export interface CloseCodeRow extends ClosePolicy {
  code: number;
  /** The `CloseCode` key. */
  name: string;
  meaning: string;
  why: string;
}

/**
 * The decision for every code of `CloseCode` (complete by type). The reasons
 * are in `CLOSE_REASONS` below, kept apart only so that a bundle that needs
 * the decision (the browser's) does not carry the prose.
 */
export const CLOSE_ACTIONS = {
  /** normal */ 1000: CloseAction.fail,
  /** goingAway */ 1001: CloseAction.askStatus,
  /** protocolError */ 1002: CloseAction.fail,
  /** noStatus */ 1005: CloseAction.fail,
  /** abnormal */ 1006: CloseAction.resume,
  /** policyViolation */ 1008: CloseAction.fail,
  /** messageTooBig */ 1009: CloseAction.fail,
  /** internalError */ 1011: CloseAction.askStatus,
  /** serviceRestart */ 1012: CloseAction.resume,
  /** tryAgainLater */ 1013: CloseAction.resume,
} as const satisfies Record<CloseCode, CloseAction>;

/** What each code means and why its action (complete by type). */
export const CLOSE_REASONS = {
  /** normal */ 1000: {
    meaning: 'normal closure',
    why: 'the server ended the connection on purpose; before `finish` the request did not complete, and nothing says trying again would help',
  },
  /** goingAway */ 1001: {
    meaning: 'the server is going away',
    why: 'says nothing about the request: no blind retry (spec 7.7); after `ready` the status route decides, so segments already charged are not generated again by a failover',
  },
  /** protocolError */ 1002: { meaning: 'protocol error', why: 'a frame one side cannot use: the same frames would be refused again' },
  /** noStatus */ 1005: { meaning: 'a close frame without a code', why: 'a clean close that names no reason: as a normal closure' },
  /** abnormal */ 1006: {
    meaning: 'dropped without a close frame (network, proxy, dead peer)',
    why: 'the server never said the request failed; resuming asks it what was done (the status route), so nothing is charged twice',
  },
  /** policyViolation */ 1008: { meaning: 'policy violation (authentication, permission, limits)', why: 'the same request would be refused again' },
  /** messageTooBig */ 1009: { meaning: 'a frame over the size limit', why: 'the same frame would be refused again' },
  /** internalError */ 1011: { meaning: 'internal server error', why: 'says nothing about the request: no blind retry (spec 7.7); after `ready` the status route decides' },
  /** serviceRestart */ 1012: { meaning: 'service restart (drain)', why: 'spec 7.7: reconnect with backoff and resume' },
  /** tryAgainLater */ 1013: { meaning: 'try again later (overload, a retryable failure)', why: 'spec 7.7: reconnect with backoff and resume' },
} as const satisfies Record<CloseCode, { meaning: string; why: string }>;

/**
 * The policy for a close: by its code, except that a close that was not
 * clean (no close frame exchanged) reads as 1006 whatever code it reports.
 * A code the table does not list (application codes 4000 to 4999 included)
 * fails: unknown intent, so only an `error` frame with `retryable: true`
 * makes it retryable.
 */
export function closePolicy(code: number, wasClean = true): ClosePolicy {
  const action = (CLOSE_ACTIONS as Record<number, CloseAction>)[wasClean ? code : CloseCode.abnormal] ?? CloseAction.fail;
  return { action, retryable: action === CloseAction.resume };
}

/** Whether a close before the request finished may be retried: `closePolicy(code, wasClean).retryable`. */
export function isRetryableClose(code: number, wasClean = true): boolean {
  return closePolicy(code, wasClean).retryable;
}

/** The whole table, one row per code of `CloseCode` in numeric order (for docs, the CLI and tests). */
export function closeCodeTable(): CloseCodeRow[] {
  return (Object.entries(CloseCode) as [string, CloseCode][])
    .sort((a, b) => a[1] - b[1])
    .map(([name, code]) => ({ code, ...closePolicy(code), name, ...CLOSE_REASONS[code] }));
}
