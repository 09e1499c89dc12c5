/**
 * A fake `MachinePort` that records every call, and builders of server
 * events, for the table-driven tests of the reliable state machine. No
 * socket, no clock.
 */
import { ReliableMachine } from '../../src/realtime/reliable/machine.js';
import { TimerId, type MachineAudio, type MachineEvent, type MachineInput, type MachineOptions, type MachinePort } from '../../src/realtime/reliable/types.js';
import type { ClientEvent, ReadyEvent, RequestStatus, ServerEvent } from '../../src/protocol/events.js';
import { AudioLedger, type PartialSegmentPolicy } from '../../src/splice.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../../src/sinks/wav-header.js';

export type PortCall =
  | { call: 'sendFrame'; event: ClientEvent }
  /** Raw audio the machine handed over. */
  | { call: 'emitAudio'; audio: MachineAudio }
  /** What the listener's ledger made of it (as the sessions do): the bytes the listener gets. */
  | { call: 'listen'; segmentId: string; data: Uint8Array }
  | { call: 'discontinuity'; segmentId: string; droppedBytes: number }
  | { call: 'emit'; event: MachineEvent }
  | { call: 'startTimer'; id: TimerId; ms: number }
  | { call: 'cancelTimer'; id: TimerId }
  | { call: 'openTransport' }
  | { call: 'closeTransport'; code: number; reason: string }
  | { call: 'fetchStatus'; requestId: string }
  | { call: 'fetchSegmentAudio'; segmentId: string; url: string };

export class FakePort implements MachinePort {
  calls: PortCall[] = [];
  randomValue = 0.5;
  /** The listener's ledger, as `ReliableSession` and the browser session keep one. */
  readonly ledger: AudioLedger;
  #ready: ReadyEvent | undefined;

  constructor(policy?: PartialSegmentPolicy) {
    this.ledger = new AudioLedger({ ...(policy && { policy }), layout: false });
  }

  sendFrame(event: ClientEvent): void {
    this.calls.push({ call: 'sendFrame', event });
  }
  emitAudio(audio: MachineAudio): void {
    this.calls.push({ call: 'emitAudio', audio });
    const r = this.#ready! as unknown as { format: 'pcm'; sample_rate: number; channels: number; bit_depth: number };
    const { chunk, restart } = this.ledger.accept({ data: audio.data, segmentId: audio.segmentId, attempt: audio.attempt, offset: audio.offset, format: r.format, sampleRate: r.sample_rate, channels: r.channels, bitDepth: r.bit_depth });
    if (restart) this.calls.push({ call: 'discontinuity', segmentId: audio.segmentId, droppedBytes: restart.droppedBytes });
    if (chunk.data.byteLength > 0) this.calls.push({ call: 'listen', segmentId: audio.segmentId, data: chunk.data });
  }
  audioOf(segmentId: string) {
    return this.ledger.segment(segmentId);
  }
  emit(event: MachineEvent): void {
    if (event.type === 'ready') this.#ready = event.ready;
    this.calls.push({ call: 'emit', event });
  }
  startTimer(id: TimerId, ms: number): void {
    this.calls.push({ call: 'startTimer', id, ms });
  }
  cancelTimer(id: TimerId): void {
    this.calls.push({ call: 'cancelTimer', id });
  }
  openTransport(): void {
    this.calls.push({ call: 'openTransport' });
  }
  closeTransport(code: number, reason: string): void {
    this.calls.push({ call: 'closeTransport', code, reason });
  }
  fetchStatus(requestId: string): void {
    this.calls.push({ call: 'fetchStatus', requestId });
  }
  fetchSegmentAudio(segmentId: string, url: string): void {
    this.calls.push({ call: 'fetchSegmentAudio', segmentId, url });
  }
  random(): number {
    return this.randomValue;
  }

  /** Calls recorded so far, then forget them. */
  take(): PortCall[] {
    const out = this.calls;
    this.calls = [];
    return out;
  }
}

/** Frames sent, as `event` names with their key fields, for compact assertions. */
export function sent(calls: PortCall[]): string[] {
  return calls.flatMap((c) => {
    if (c.call !== 'sendFrame') return [];
    const e = c.event;
    switch (e.event) {
      case 'text':
        return [`text#${e.sequence}:${e.text}`];
      case 'flush':
        return [`flush:${e.segment_id}`];
      case 'start':
        return [`start:${e.request_id}${e.retry_failed ? ':retry_failed' : ''}`];
      default:
        return [e.event];
    }
  });
}

/** Machine events emitted, by type. */
export function emitted<T extends MachineEvent['type']>(calls: PortCall[], type: T): Extract<MachineEvent, { type: T }>[] {
  return calls.flatMap((c) => (c.call === 'emit' && c.event.type === type ? [c.event as Extract<MachineEvent, { type: T }>] : []));
}

/** Concatenated audio bytes the listener got (the machine's raw audio through the ledger). */
export function audioOut(calls: PortCall[]): Buffer {
  return Buffer.concat(calls.flatMap((c) => (c.call === 'listen' ? [Buffer.from(c.data)] : [])));
}

/** Concatenated raw audio bytes the machine handed over. */
export function rawOut(calls: PortCall[]): Buffer {
  return Buffer.concat(calls.flatMap((c) => (c.call === 'emitAudio' ? [Buffer.from(c.audio.data)] : [])));
}

/** `discontinuity` events the ledger raised. */
export function discontinuities(calls: PortCall[]): { segmentId: string; droppedBytes: number }[] {
  return calls.flatMap((c) => (c.call === 'discontinuity' ? [{ segmentId: c.segmentId, droppedBytes: c.droppedBytes }] : []));
}

/** The watchdog timers (progress, resume and status-read deadlines), which `effects()` leaves out; `watchdogs()` lists them. */
const WATCHDOGS: ReadonlySet<string> = new Set([TimerId.progress, TimerId.resumeDeadline, TimerId.status]);

/** Starts and cancels of the watchdog timers only. */
export function watchdogs(calls: PortCall[]): string[] {
  return calls.flatMap((c) => {
    if ((c.call === 'startTimer' || c.call === 'cancelTimer') && WATCHDOGS.has(c.id)) return [`${c.call}:${c.id}`];
    return [];
  });
}

/** Names of port calls other than frames, emits and watchdog timers (timers, transport, fetches). */
export function effects(calls: PortCall[]): string[] {
  return calls.flatMap((c) => {
    if ((c.call === 'startTimer' || c.call === 'cancelTimer') && WATCHDOGS.has(c.id)) return [];
    switch (c.call) {
      case 'startTimer':
        return [`startTimer:${c.id}`];
      case 'cancelTimer':
        return [`cancelTimer:${c.id}`];
      case 'openTransport':
        return ['openTransport'];
      case 'closeTransport':
        return [`closeTransport:${c.code}`];
      case 'fetchStatus':
        return [`fetchStatus:${c.requestId}`];
      case 'fetchSegmentAudio':
        return [`fetchSegmentAudio:${c.segmentId}`];
      default:
        return [];
    }
  });
}

/** A 44-byte streaming WAV header (sizes unknown), as the server starts a wav request with. */
export function wavHeader(): number[] {
  return [...buildWavHeader({ sampleRate: 24_000, channels: 1, bitDepth: 16 }, WAV_UNKNOWN_SIZE)];
}

export const REQUEST_ID = 'req-1';
export const VOICE = '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01';

let serverEventCounter = 0;
const envelope = () => ({ event_id: `s-${++serverEventCounter}`, trace_id: 't', timestamp: 0 });

/**
 * Builders of server events with the common envelope filled in. The toy
 * audio of these tests is one byte a sample (`bit_depth` 8), so any byte
 * count is whole samples for the listener's ledger.
 */
export const ev = {
  ready: (format = 'pcm'): ServerEvent => ({
    event: 'ready', ...envelope(), mode: 'reliable', request_id: REQUEST_ID, session_id: 'sess', provider: 'svc',
    model: 'svc-s21pro-flash', voice_id: VOICE, format, sample_rate: 24_000, channels: 1, bit_depth: 8,
  }),
  ack: (sequence: number, characters = 1): ServerEvent => ({
    event: 'input_ack', ...envelope(), request_id: REQUEST_ID, sequence, characters, buffered_characters: characters, remaining_capacity: 1_000,
  }),
  accepted: (segmentId: string, characters = 1): ServerEvent => ({
    event: 'segment_accepted', ...envelope(), request_id: REQUEST_ID, segment_id: segmentId, characters, reserved_units: characters,
  }),
  audio: (segmentId: string, bytes: number[] | Uint8Array, sequence = 1, format = 'pcm'): ServerEvent => ({
    event: 'audio', ...envelope(), request_id: REQUEST_ID, session_id: 'sess', segment_id: segmentId, sequence,
    audio: Uint8Array.from(bytes), format,
  }),
  usage: (segmentId: string, units: number): ServerEvent => ({
    event: 'usage', ...envelope(), request_id: REQUEST_ID, segment_id: segmentId, segment_units: units, session_units: units, quota_remaining: 100, audio_bytes: 4,
  }),
  completed: (segmentId: string, units: number, audioBytes = 0): ServerEvent => ({
    event: 'segment_completed', ...envelope(), request_id: REQUEST_ID, segment_id: segmentId, units, audio_bytes: audioBytes,
  }),
  error: (code: string, retryable: boolean, terminal = true): ServerEvent => ({
    event: 'error', ...envelope(), request_id: REQUEST_ID, code, message: `${code} happened`, retryable, terminal,
  }),
  finish: (reason = 'completed', units = 0): ServerEvent => ({
    event: 'finish', ...envelope(), request_id: REQUEST_ID, session_id: 'sess', reason, units,
  }),
  requestStatus: (state: string): ServerEvent => ({
    event: 'request_status', ...envelope(), request_id: REQUEST_ID, state, retryable: state === 'failed_retryable', units: 0, result_available: state === 'completed',
  }),
  warning: (code: string): ServerEvent => ({ event: 'warning', ...envelope(), request_id: REQUEST_ID, code, message: code }),
};

export function status(state: string, segments: RequestStatus['segments'] = undefined): RequestStatus {
  const s: RequestStatus = { request_id: REQUEST_ID, state, retryable: state === 'failed_retryable', units: 0, result_available: state === 'completed' };
  if (segments) s.segments = segments;
  return s;
}

/** A machine on a fake port, with shorthands for its inputs. */
export function harness(options: Partial<MachineOptions> = {}) {
  const port = new FakePort(options.onPartialSegment);
  const machine = new ReliableMachine({ requestId: REQUEST_ID, request: { voice_id: VOICE, model: 'svc-s21pro-flash', format: 'pcm' }, ...options }, port);
  const h = {
    port,
    machine,
    handle(input: MachineInput) {
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
    run(format = 'pcm') {
      machine.handle({ type: 'open' });
      machine.handle({ type: 'transport-opened' });
      machine.handle({ type: 'frame', event: ev.ready(format) });
      port.take();
      return h;
    },
    /** Drive one single-frame segment through ack, accept, audio and completion. */
    speak(segmentId: string, sequence: number, audio: number[], units = 1) {
      h.frame(ev.ack(sequence)).frame(ev.accepted(segmentId)).frame(ev.audio(segmentId, audio)).frame(ev.completed(segmentId, units, audio.length));
      return h;
    },
  };
  return h;
}
