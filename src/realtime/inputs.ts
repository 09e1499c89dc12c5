/**
 * The one dispatch of a machine's inputs, for both modes: which kinds of
 * input there are is `MachineInput` (reliable/types.ts) and `SimpleInput`
 * (simple/types.ts); what each kind means is the machine's own handler of
 * it (`InputHandlers`), given the machine and the input's fields. A machine
 * keeps its handlers in one static object (no closure per machine), so the
 * ten thousand machines of a busy process share them.
 */
import type { VoxpipeError } from '../errors.js';
import type { ServerEvent } from '../protocol/events.js';
import type { MachineInput, SegmentAudioResult, StatusResult } from './reliable/types.js';
import type { SimpleInput } from './simple/types.js';

/** What machine `M` does with each kind of input; `Timer`: its timer ids. */
export interface InputHandlers<M, Timer extends string> {
  /** A decoded server frame of the current transport (the hot path: every audio frame). */
  frame(machine: M, event: ServerEvent): void;
  open(machine: M): void;
  transportOpened(machine: M): void;
  transportFailed(machine: M, error: VoxpipeError): void;
  transportClosed(machine: M, code: number, reason: string, wasClean: boolean, error: VoxpipeError | undefined): void;
  timer(machine: M, id: Timer): void;
  segmentQueued(machine: M, segmentId: string, text: string): void;
  stopRequested(machine: M): void;
  abortRequested(machine: M, reason: VoxpipeError): void;
  reader(machine: M, paused: boolean): void;
  /** Reliable mode's reads; a machine that never asks for them has none. */
  statusFetched?(machine: M, result: StatusResult): void;
  audioFetched?(machine: M, segmentId: string, result: SegmentAudioResult): void;
}

/** Hand `input` to `machine`'s handler of its kind. */
export function dispatchInput<M, Timer extends string>(machine: M, input: MachineInput | SimpleInput, handlers: InputHandlers<M, Timer>): void {
  switch (input.type) {
    case 'frame':
      handlers.frame(machine, input.event);
      return;
    case 'open':
      handlers.open(machine);
      return;
    case 'transport-opened':
      handlers.transportOpened(machine);
      return;
    case 'transport-failed':
      handlers.transportFailed(machine, input.error);
      return;
    case 'transport-closed':
      handlers.transportClosed(machine, input.code, input.reason, input.wasClean, input.error);
      return;
    case 'timer':
      handlers.timer(machine, input.id as Timer);
      return;
    case 'segment-queued':
      handlers.segmentQueued(machine, input.segmentId, input.text);
      return;
    case 'stop-requested':
      handlers.stopRequested(machine);
      return;
    case 'abort-requested':
      handlers.abortRequested(machine, input.reason);
      return;
    case 'reader':
      handlers.reader(machine, input.paused);
      return;
    case 'status-fetched':
      handlers.statusFetched?.(machine, input.result);
      return;
    case 'audio-fetched':
      handlers.audioFetched?.(machine, input.segmentId, input.result);
      return;
  }
}
