/**
 * Small pieces both realtime sessions share: promise waiters, segment
 * validation against the protocol's limits, and `ready` to `ReadyInfo`.
 */
import { VoxpipeError } from '../errors.js';
import type { AudioFormat } from '../protocol/audio.js';
import { ErrorCode } from '../protocol/constants.js';
import type { ReadyEvent } from '../protocol/events.js';
import { countChars, LIMITS } from '../protocol/limits.js';
import { TransportName, type ReadyInfo, type SegmentInput } from '../transport.js';

/** A promise with its resolve and reject at hand. */
export interface Waiter<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function waiter<T>(): Waiter<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Anything thrown, as a VoxpipeError. */
export function asVoxpipeError(err: unknown): VoxpipeError {
  return err instanceof VoxpipeError ? err : new VoxpipeError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * Check a segment against the protocol before it is queued: a segment id of
 * 1 to 128 characters, non-empty text of at most `maxChars` characters.
 * Throws VoxpipeError with the spec's code.
 */
export function validateSegment(segment: SegmentInput, maxChars: number = LIMITS.segmentMaxChars): void {
  const idChars = countChars(segment.segmentId);
  if (idChars < LIMITS.idMinChars || idChars > LIMITS.idMaxChars) {
    throw new VoxpipeError(ErrorCode.invalidMessage, `segment_id must be ${LIMITS.idMinChars} to ${LIMITS.idMaxChars} characters`);
  }
  if (segment.text.length === 0) throw new VoxpipeError(ErrorCode.emptySegment, `segment ${segment.segmentId} has no text`);
  if (countChars(segment.text) > maxChars) {
    throw new VoxpipeError(ErrorCode.segmentTooLarge, `segment ${segment.segmentId} is over ${maxChars} characters`);
  }
}

/**
 * What `ready` tells the stream. `requestId`: the id the client chose
 * (`start.request_id`), for a deployment whose `ready` does not carry it
 * under a name the client reads (the client chose it; it need not ask).
 */
export function readyInfoFrom(ready: ReadyEvent, requestId?: string): ReadyInfo {
  return {
    transport: TransportName.realtime,
    mode: ready.mode,
    requestId: ready.request_id || requestId || '',
    sessionId: ready.session_id,
    provider: ready.provider,
    model: ready.model,
    voiceId: ready.voice_id,
    format: ready.format as AudioFormat,
    // Compressed formats may omit PCM metadata; their decoder learns it from the stream.
    sampleRate: ready.sample_rate ?? 24_000,
    channels: ready.channels ?? 1,
    bitDepth: ready.bit_depth ?? 16,
  };
}

/**
 * Abort through `signal` (now, on a microtask, when it already is), chained
 * after `previous`; returns the function that unlinks both.
 */
export function linkAbortSignal(signal: AbortSignal, abort: (reason: unknown) => void, previous?: () => void): () => void {
  const onAbort = () => abort(signal.reason);
  if (signal.aborted) {
    queueMicrotask(onAbort);
    return () => previous?.();
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => {
    previous?.();
    signal.removeEventListener('abort', onAbort);
  };
}

/**
 * The reliable machine's named one-shot timers on the global `setTimeout`,
 * for any shell that drives it (Node `ReliableSession`, `voxpipe/browser`):
 * starting an id again replaces it; a timer that fires calls `fire(id)`.
 */
export class MachineTimers<Id> {
  // A machine runs a few timers at once: two short arrays, not a Map (memory per stream, issue 29).
  readonly #ids: Id[] = [];
  readonly #handles: ReturnType<typeof setTimeout>[] = [];
  constructor(private readonly fire: (id: Id) => void) {}

  start(id: Id, ms: number): void {
    this.cancel(id);
    const handle = setTimeout(() => {
      this.#forget(id, handle);
      this.fire(id);
    }, ms);
    this.#ids.push(id);
    this.#handles.push(handle);
  }

  cancel(id: Id): void {
    const i = this.#ids.indexOf(id);
    if (i < 0) return;
    clearTimeout(this.#handles[i]);
    this.#ids.splice(i, 1);
    this.#handles.splice(i, 1);
  }

  /** Cancel every timer (the session ended). */
  clear(): void {
    for (const handle of this.#handles) clearTimeout(handle);
    this.#ids.length = 0;
    this.#handles.length = 0;
  }

  #forget(id: Id, handle: ReturnType<typeof setTimeout>): void {
    const i = this.#ids.indexOf(id);
    if (i < 0 || this.#handles[i] !== handle) return;
    this.#ids.splice(i, 1);
    this.#handles.splice(i, 1);
  }
}
