/**
 * A fake `SimplePort` that records every call, and a harness around the
 * simple-mode machine, for its table-driven tests. No socket, no clock.
 * Server events come from the reliable harness's builders (`ev`).
 */
import { SimpleMachine } from '../../src/realtime/simple/machine.js';
import type { MachineAudio, SimpleEvent, SimpleInput, SimpleMachineOptions, SimplePort, SimpleTimerId } from '../../src/realtime/simple/types.js';
import type { ClientEvent, ServerEvent } from '../../src/protocol/events.js';
import { ev, VOICE } from './machine-harness.js';
import { AudioLedger } from '../../src/splice.js';

export type SimplePortCall =
  | { call: 'sendFrame'; event: ClientEvent }
  | { call: 'emitAudio'; audio: MachineAudio }
  | { call: 'emit'; event: SimpleEvent }
  | { call: 'startTimer'; id: SimpleTimerId; ms: number }
  | { call: 'cancelTimer'; id: SimpleTimerId }
  | { call: 'openTransport' }
  | { call: 'closeTransport'; code: number; reason: string };

export class FakeSimplePort implements SimplePort {
  calls: SimplePortCall[] = [];
  /** Called on every `emitAudio` (a listener that acts on audio, e.g. aborts). */
  onAudio: ((audio: MachineAudio) => void) | undefined;
  /** The listener's ledger, as the stream keeps one (the toy audio: pcm, one byte a sample). */
  readonly ledger = new AudioLedger({ layout: false });

  sendFrame(event: ClientEvent): void {
    this.calls.push({ call: 'sendFrame', event });
  }
  emitAudio(audio: MachineAudio): void {
    this.calls.push({ call: 'emitAudio', audio });
    this.ledger.accept({ data: audio.data, segmentId: audio.segmentId, attempt: audio.attempt, offset: audio.offset, format: this.format, sampleRate: 24_000, channels: 1, bitDepth: 8 });
    this.onAudio?.(audio);
  }
  audioOf(segmentId: string) {
    return this.ledger.segment(segmentId);
  }
  /** The format the ledger reads the audio as. */
  format: 'pcm' | 'wav' = 'pcm';
  emit(event: SimpleEvent): void {
    this.calls.push({ call: 'emit', event });
  }
  startTimer(id: SimpleTimerId, ms: number): void {
    this.calls.push({ call: 'startTimer', id, ms });
  }
  cancelTimer(id: SimpleTimerId): void {
    this.calls.push({ call: 'cancelTimer', id });
  }
  openTransport(): void {
    this.calls.push({ call: 'openTransport' });
  }
  closeTransport(code: number, reason: string): void {
    this.calls.push({ call: 'closeTransport', code, reason });
  }

  /** Calls recorded so far, then forget them. */
  take(): SimplePortCall[] {
    const out = this.calls;
    this.calls = [];
    return out;
  }
}

/** Frames sent, compact: `start`, `input:TEXT` or `input!:TEXT` (committed). */
export function sentFrames(calls: SimplePortCall[]): string[] {
  return calls.flatMap((c) => {
    if (c.call !== 'sendFrame') return [];
    const e = c.event;
    return e.event === 'input' ? [`input${e.commit ? '!' : ''}:${e.text}`] : [e.event];
  });
}

/** Machine events emitted, by type. */
export function simpleEmitted<T extends SimpleEvent['type']>(calls: SimplePortCall[], type: T): Extract<SimpleEvent, { type: T }>[] {
  return calls.flatMap((c) => (c.call === 'emit' && c.event.type === type ? [c.event as Extract<SimpleEvent, { type: T }>] : []));
}

/** Audio handed over. */
export function handedOver(calls: SimplePortCall[]): MachineAudio[] {
  return calls.flatMap((c) => (c.call === 'emitAudio' ? [c.audio] : []));
}

/** A ready event of simple mode. */
export function simpleReady(): ServerEvent {
  return { ...(ev.ready() as Extract<ServerEvent, { event: 'ready' }>), mode: 'simple' };
}

/** A machine on a fake port, with shorthands for its inputs. */
export function simpleHarness(options: Partial<SimpleMachineOptions> = {}) {
  const port = new FakeSimplePort();
  const machine = new SimpleMachine({ request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' }, ...options }, port);
  const h = {
    port,
    machine,
    handle(input: SimpleInput) {
      machine.handle(input);
      return h;
    },
    frame(event: ServerEvent) {
      machine.handle({ type: 'frame', event });
      return h;
    },
    queue(segmentId: string, text: string) {
      machine.handle({ type: 'segment-queued', segmentId, text });
      return h;
    },
    /** open, transport up, `ready`: a running machine, with the calls so far forgotten. */
    run() {
      machine.handle({ type: 'open' });
      machine.handle({ type: 'transport-opened' });
      machine.handle({ type: 'frame', event: simpleReady() });
      port.take();
      return h;
    },
    /** A running machine with `parts` queued and committed, calls forgotten. */
    committed(...parts: string[]) {
      h.run();
      parts.forEach((text, i) => h.queue(`p${i}`, text));
      h.handle({ type: 'stop-requested' });
      port.take();
      return h;
    },
  };
  return h;
}
