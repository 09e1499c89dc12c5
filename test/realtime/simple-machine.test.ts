/**
 * The simple-mode machine (src/realtime/simple/machine.ts), step by step on
 * a fake port: pacing of the parts and the one commit, audio in order and
 * tagged, results and `expectedBytes`, the close-code policy, deadlines.
 */
import { describe, expect, it } from 'vitest';
import { encode } from '@msgpack/msgpack';
import { AbortError, ConnectionError, TimeoutError } from '../../src/errors.js';
import { closeCodeTable, CloseCode } from '../../src/protocol/close-codes.js';
import { WarningCode } from '../../src/protocol/codes.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { readServerFrame } from '../../src/protocol/wire.js';
import { PROGRESS_SLICES } from '../../src/realtime/budgets.js';
import { SimplePhase } from '../../src/realtime/simple/machine.js';
import { SimpleTimerId } from '../../src/realtime/simple/types.js';
import { ev, REQUEST_ID } from './machine-harness.js';
import { handedOver, sentFrames, simpleEmitted, simpleHarness, simpleReady } from './simple-machine-harness.js';

describe('parts and the one commit', () => {
  it('holds parts until ready, then sends all but the last uncommitted; stop commits the last', () => {
    const h = simpleHarness().handle({ type: 'open' }).handle({ type: 'transport-opened' });
    expect(sentFrames(h.port.take())).toEqual(['start']);
    h.queue('a', 'One. ').queue('b', 'Two. ');
    expect(sentFrames(h.port.take())).toEqual([]);
    h.frame(simpleReady());
    expect(sentFrames(h.port.take())).toEqual(['input:One. ']);
    h.queue('c', 'Three.');
    expect(sentFrames(h.port.take())).toEqual(['input:Two. ']);
    h.handle({ type: 'stop-requested' });
    expect(sentFrames(h.port.take())).toEqual(['input!:Three.']);
    expect(h.machine.phase).toBe(SimplePhase.committed);
  });

  it('start carries the request id asked for', () => {
    const h = simpleHarness({ requestId: 'mine' }).handle({ type: 'open' }).handle({ type: 'transport-opened' });
    const start = h.port.take().find((c) => c.call === 'sendFrame');
    expect(start).toMatchObject({ event: { event: 'start', mode: 'simple', request_id: 'mine' } });
  });

  it('refuses a part after stop, and past the request limit of 10,000 characters, before it enters', () => {
    const h = simpleHarness().run().queue('a', 'x'.repeat(6_000));
    expect(h.machine.refusal({ segmentId: 'b', text: 'y'.repeat(4_001) })).toMatchObject({ code: 'segment_too_large' });
    expect(h.machine.refusal({ segmentId: 'b', text: 'y'.repeat(4_000) })).toBeUndefined();
    h.handle({ type: 'stop-requested' });
    expect(h.machine.refusal({ segmentId: 'b', text: 'y' })).toMatchObject({ code: 'invalid_state' });
  });

  it('stop with nothing queued ends at once, charging nothing', () => {
    const h = simpleHarness().run().handle({ type: 'stop-requested' });
    const calls = h.port.take();
    expect(h.machine.phase).toBe(SimplePhase.done);
    expect(simpleEmitted(calls, 'finished')[0]!.summary).toEqual({ requestId: REQUEST_ID, units: 0, audioBytes: 0, segments: [] });
    expect(calls).toContainEqual({ call: 'closeTransport', code: CloseCode.normal, reason: 'nothing to say' });
  });
});

describe('audio', () => {
  it('leaves in sequence order, raw, tagged with the committing part and attempt 1, at the offsets the ledger has it up to, with no output sequence', () => {
    const h = simpleHarness().committed('One. ', 'Two.');
    h.frame(ev.audio('srv-1', [3, 4], 2)).frame(ev.audio('srv-1', [1, 2], 1)).frame(ev.audio('srv-1', [5], 3));
    expect(handedOver(h.port.take())).toEqual([
      { segmentId: 'p1', attempt: 1, offset: 0, data: Uint8Array.from([1, 2]) },
      { segmentId: 'p1', attempt: 1, offset: 2, data: Uint8Array.from([3, 4]) },
      { segmentId: 'p1', attempt: 1, offset: 4, data: Uint8Array.from([5]) },
    ]);
  });

  it('a repeat is dropped with an audio_repeat warning; a gap is said once, at finish at the latest', () => {
    const h = simpleHarness().committed('One.');
    h.frame(ev.audio('srv-1', [1], 1)).frame(ev.audio('srv-1', [1], 1)).frame(ev.audio('srv-1', [3], 3)).frame(ev.audio('srv-1', [4], 4)).frame(ev.finish('completed', 4));
    const calls = h.port.take();
    expect(simpleEmitted(calls, 'warning').map((w) => w.code)).toEqual([WarningCode.audioRepeat, WarningCode.audioSequenceGap]);
    expect(handedOver(calls).map((a) => [...a.data])).toEqual([[1], [3], [4]]);
  });

  it('a listener that aborts on audio gets no more of it', () => {
    const h = simpleHarness().committed('One.');
    h.port.onAudio = () => h.handle({ type: 'abort-requested', reason: new AbortError() });
    h.frame(ev.audio('srv-1', [2], 2)).frame(ev.audio('srv-1', [1], 1));
    expect(handedOver(h.port.take())).toHaveLength(1);
    expect(h.machine.phase).toBe(SimplePhase.aborted);
  });
});

describe('results at finish', () => {
  it('the last part carries the units and raw bytes, the others zero; no expectedBytes when the server says none', () => {
    const h = simpleHarness().committed('One. ', 'Two.');
    h.frame(ev.audio('srv-1', [1, 2, 3], 1)).frame(ev.finish('completed', 9));
    const calls = h.port.take();
    expect(simpleEmitted(calls, 'segment-completed').map((e) => e.result)).toEqual([
      { segmentId: 'p0', units: 0, audioBytes: 0 },
      { segmentId: 'p1', units: 9, audioBytes: 3 },
    ]);
    expect(simpleEmitted(calls, 'finished')[0]!.summary).toMatchObject({ requestId: REQUEST_ID, units: 9, audioBytes: 3 });
    expect(calls).toContainEqual({ call: 'closeTransport', code: CloseCode.normal, reason: 'done' });
  });

  it.each([
    ['usage', [ev.usage('srv-1', 9)], 4],
    ['segment_completed', [ev.completed('srv-1', 9, 3)], 3],
    ['segment_completed after usage (its word wins)', [ev.usage('srv-1', 9), ev.completed('srv-1', 9, 3)], 3],
  ] as const)('expectedBytes from %s', (_name, frames, expected) => {
    const h = simpleHarness().committed('One.');
    h.frame(ev.audio('srv-1', [1, 2, 3], 1));
    for (const f of frames) h.frame(f);
    h.frame(ev.finish('completed', 9));
    expect(simpleEmitted(h.port.take(), 'segment-completed')[0]!.result.expectedBytes).toBe(expected);
  });

  it('expectedBytes under a name only the tolerant reader knows (`bytes`)', () => {
    const frame = encode({ event: 'usage', event_id: 'e', trace_id: 't', timestamp: 0, request_id: REQUEST_ID, segment_id: 'srv-1', segment_units: 9, session_units: 9, quota_remaining: 1, bytes: 2 });
    const read = readServerFrame(frame);
    expect(read.kind).toBe('event');
    const h = simpleHarness().committed('One.');
    h.frame(ev.audio('srv-1', [1, 2], 1)).frame((read as { event: ServerEvent }).event).frame(ev.finish('completed', 9));
    expect(simpleEmitted(h.port.take(), 'segment-completed')[0]!.result.expectedBytes).toBe(2);
  });

  it('no expectedBytes when a server segment that carried audio was never counted', () => {
    const h = simpleHarness().committed('One.');
    h.frame(ev.audio('srv-1', [1], 1)).frame(ev.usage('srv-1', 1)).frame(ev.audio('srv-2', [2], 1)).frame(ev.finish('completed', 2));
    expect(simpleEmitted(h.port.take(), 'segment-completed')[0]!.result).not.toHaveProperty('expectedBytes');
  });

  it('finish with another reason fails with it', () => {
    const h = simpleHarness().committed('One.').frame(ev.finish('timeout'));
    expect(simpleEmitted(h.port.take(), 'failed')[0]!.error).toMatchObject({ code: 'timeout' });
  });
});

describe('a close before finish: retryable as the close-code policy says, never retried', () => {
  it.each(closeCodeTable().map((p) => [p.code, p] as const))('close %i', (code, p) => {
    const h = simpleHarness().committed('One.');
    h.handle({ type: 'transport-closed', code, reason: '', wasClean: code !== CloseCode.abnormal });
    const calls = h.port.take();
    expect(h.machine.phase).toBe(SimplePhase.failed);
    expect(simpleEmitted(calls, 'failed')[0]!.error).toMatchObject({ code: 'connection_closed', closeCode: code, retryable: p.retryable });
    expect(calls.filter((c) => c.call === 'openTransport')).toEqual([]);
  });

  it('the connection’s own reason (keep-alive) wins', () => {
    const error = new ConnectionError('keepalive_timeout', 'no pong', { retryable: true });
    const h = simpleHarness().committed('One.').handle({ type: 'transport-closed', code: 1006, reason: '', wasClean: false, error });
    expect(simpleEmitted(h.port.take(), 'failed')[0]!.error).toBe(error);
  });
});

describe('deadlines', () => {
  it('no ready within startTimeoutMs: a retryable TimeoutError', () => {
    const h = simpleHarness({ startTimeoutMs: 50 }).handle({ type: 'open' }).handle({ type: 'transport-opened' });
    expect(h.port.take()).toContainEqual({ call: 'startTimer', id: SimpleTimerId.start, ms: 50 });
    h.handle({ type: 'timer', id: SimpleTimerId.start });
    const error = simpleEmitted(h.port.take(), 'failed')[0]!.error;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ retryable: true });
  });

  it('after the commit: PROGRESS_SLICES quiet slices fail; audio in a slice keeps it alive; warnings do not', () => {
    const h = simpleHarness({ progressTimeoutMs: 400 });
    h.run().queue('a', 'One.').handle({ type: 'stop-requested' });
    expect(h.port.take()).toContainEqual({ call: 'startTimer', id: SimpleTimerId.progress, ms: 400 / PROGRESS_SLICES });
    const tick = () => h.handle({ type: 'timer', id: SimpleTimerId.progress });
    for (let i = 0; i < PROGRESS_SLICES - 1; i++) tick();
    h.frame(ev.audio('srv-1', [1], 1));
    tick(); // the slice with audio: not quiet
    for (let i = 0; i < PROGRESS_SLICES - 1; i++) {
      h.frame(ev.warning('chatter'));
      tick();
    }
    expect(h.machine.phase).toBe(SimplePhase.committed);
    tick();
    expect(h.machine.phase).toBe(SimplePhase.failed);
    expect(simpleEmitted(h.port.take(), 'failed')[0]!.error).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('a paused reader stops the deadline; reading again starts it afresh', () => {
    const h = simpleHarness({ progressTimeoutMs: 400 }).committed('One.');
    h.handle({ type: 'reader', paused: true });
    expect(h.port.take()).toEqual([{ call: 'cancelTimer', id: SimpleTimerId.progress }]);
    h.handle({ type: 'reader', paused: false });
    expect(h.port.take()).toEqual([{ call: 'startTimer', id: SimpleTimerId.progress, ms: 100 }]);
  });
});
