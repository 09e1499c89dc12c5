/**
 * Simple mode (spec 3.4b, 4.10): `start`, `ready`, `input` frames, `audio`,
 * `finish`. The server makes every id (request, segment, audio sequence).
 *
 * - `input` with `commit: false` buffers; `commit: true` (the default) makes
 *   the buffered text one billing segment and generates it. Segments committed
 *   while one generates wait their turn.
 * - The whole request holds at most LIMITS.simpleRequestMaxChars characters;
 *   an input that would pass it is refused with `segment_too_large`
 *   (non-terminal: the buffer is unchanged).
 * - The request finishes (`finish` reason `completed`, close 1000) when a
 *   generated segment leaves nothing queued and nothing buffered.
 * - A `request_id` given in a simple start is used as the request's id (for
 *   correlation only: simple requests are not journaled and have no status).
 * - Acknowledgement and usage events are not sent in this mode.
 */
import { countChars, LIMITS } from '../../protocol/limits.js';
import { ErrorCode, FinishReason, Mode } from '../../protocol/constants.js';
import type { FlushEvent, InputEvent, StartEvent, StopEvent, TextEvent } from '../../protocol/events.js';
import { segmentRefId } from './billing.js';
import { createRequestEncoder, synthesisOptions } from './encoding.js';
import { RealtimeFailure } from './failure.js';
import { readyBody } from './ready.js';
import type { ResolvedRequest } from './resolve-request.js';
import { SegmentQueue } from './segment-queue.js';
import type { RequestHandler, SessionPort } from './session-port.js';

/** A simple-mode request: the whole generation of its connection. */
export class SimpleRequest implements RequestHandler {
  readonly mode = Mode.simple;
  readonly requestId: string;
  #active = true;
  #buffer: string[] = [];
  #bufferedChars = 0;
  /** Characters committed or buffered over the whole request. */
  #requestChars = 0;
  #units = 0;
  #segments = 0;
  readonly #queue: SegmentQueue;

  constructor(private readonly port: SessionPort, resolved: ResolvedRequest, start: StartEvent) {
    this.requestId = start.request_id ?? port.ctx.newId('rq');
    this.#queue = new SegmentQueue(
      port,
      {
        requestId: this.requestId,
        format: resolved.format,
        encoder: () => createRequestEncoder(resolved.format, port.ctx, { streamStart: true }),
        synthesis: synthesisOptions(resolved),
        keepAudio: false,
      },
      {
        onFirstAudio: (job) => {
          this.#units += job.reservation.units;
        },
        onCompleted: () => undefined,
        onIdle: () => this.#maybeFinish(),
      },
    );
    port.send('ready', readyBody(port, resolved, Mode.simple, this.requestId), start.event_id);
  }

  get active(): boolean {
    return this.#active;
  }

  get busy(): boolean {
    return this.#queue.busy;
  }

  units(): number {
    return this.#units;
  }

  handle(event: InputEvent | TextEvent | FlushEvent | StopEvent): void | Promise<void> {
    if (event.event !== 'input') {
      throw new RealtimeFailure(ErrorCode.invalidState, `${event.event} is a reliable-mode event; this request is in simple mode (send input)`, { stage: 'input' });
    }
    const chars = countChars(event.text);
    if (this.#requestChars + chars > LIMITS.simpleRequestMaxChars) {
      throw new RealtimeFailure(ErrorCode.segmentTooLarge, `a simple request holds at most ${LIMITS.simpleRequestMaxChars} characters (${this.#requestChars} so far, this input ${chars})`, { path: 'text', stage: 'input' });
    }
    if (event.commit === false) {
      this.#buffer.push(event.text);
      this.#bufferedChars += chars;
      this.#requestChars += chars;
      return;
    }
    const text = this.#buffer.join('') + event.text;
    const characters = this.#bufferedChars + chars;
    const segmentId = this.port.ctx.newId('seg');
    // Reserve first: a refused reservation leaves the buffer as it was.
    return this.port.billing.reserve(characters, segmentRefId(this.port.account.userId, this.requestId, segmentId)).then((reservation) => {
      if (!this.#active) {
        this.port.billing.release(reservation); // the request ended while the hold was taken
        return;
      }
      this.#buffer = [];
      this.#bufferedChars = 0;
      this.#requestChars += chars;
      this.#queue.enqueue({ segmentId, index: this.#segments++, text, characters, reservation, inReplyTo: event.event_id, hadAudio: false, released: false });
    });
  }

  abort(): void {
    if (!this.#active) return;
    this.#active = false;
    this.#queue.abort();
  }

  #maybeFinish(): void {
    if (!this.#active || this.#queue.busy || this.#bufferedChars > 0) return;
    this.#active = false;
    this.port.finish(FinishReason.completed);
  }
}
