/**
 * What a request handler (simple or reliable mode) sees of its connection.
 * The handlers never touch the socket: they send events, report failures and
 * finish through this port, which keeps the mode logic apart from I/O.
 */
import type { AudioFormat } from '../../protocol/audio.js';
import type { FinishReason, Mode, RequestState } from '../../protocol/constants.js';
import type { FlushEvent, InputEvent, ServerEventBody, ServerEventName, StopEvent, TextEvent } from '../../protocol/events.js';
import type { ServerContext } from '../context.js';
import type { Account } from '../store/types.js';
import type { SessionBilling } from './billing.js';
import type { RealtimeFailure } from './failure.js';

/** Body of server event `N` without `event` and the envelope (the port adds them). */
export type EventBody<N extends ServerEventName> = Omit<ServerEventBody<N>, 'event' | 'in_reply_to'>;

/** Fields of an `audio` event the handler chooses (the port adds session, sequence and PCM metadata). */
export interface AudioFields {
  request_id: string;
  segment_id: string;
  audio: Buffer;
  format: AudioFormat;
}

export interface SessionPort {
  readonly ctx: ServerContext;
  readonly sessionId: string;
  readonly account: Account;
  readonly billing: SessionBilling;
  /** Aborted when the connection ends, however it ends. */
  readonly signal: AbortSignal;
  send<N extends ServerEventName>(name: N, body: EventBody<N>, inReplyTo?: string): void;
  /** Send one `audio` frame (counts it for fault injection, which may end the connection). */
  sendAudio(fields: AudioFields): void;
  /** Resolve when the socket's send queue is under its high-water mark; throws `client_backpressure` when it stalls. */
  waitWritable(): Promise<void>;
  /** Report a failure: an `error` event; a terminal one also ends the request and the connection. */
  fail(failure: RealtimeFailure, inReplyTo?: string): void;
  /** The request ended normally: `finish` with `reason`, then close 1000. */
  finish(reason: FinishReason, inReplyTo?: string): void;
  /** Answer with `request_status` and close 1000 (a repeated reliable start). */
  answerStatusAndClose(body: EventBody<'request_status'>, inReplyTo: string | undefined): void;
}

/** What the session asks of the request its `start` opened. */
export interface RequestHandler {
  readonly requestId: string;
  readonly mode: Mode;
  /** False once the request has ended (finished or aborted). */
  readonly active: boolean;
  /** A segment is generating or queued (the idle timer waits). */
  readonly busy: boolean;
  /** Units of the request, for `finish`. */
  units(): number;
  /** A promise when it waits on the store (a ledger hold): the session handles the next frame after it. */
  handle(event: InputEvent | TextEvent | FlushEvent | StopEvent): void | Promise<void>;
  /**
   * The request ends abnormally (connection lost, terminal error, drain,
   * timeout): stop generating, give back unused holds, record `state`.
   */
  abort(state: typeof RequestState.failedRetryable | typeof RequestState.failedTerminal, failure?: { code: string; message: string }): void;
}
