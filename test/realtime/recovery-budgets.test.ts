/**
 * Bounded, active recovery in the reliable machine, with
 * the machine's timers fired by hand (no clock): a frame the machine needs
 * but cannot use ends the attempt at once; a quiet server stalls the attempt
 * within its budget, and only frames that move what is owed are progress;
 * the status route has its own deadline; stalls are resumed a bounded number
 * of times. Defaults from `RECOVERY_DEFAULTS`.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolError, ResumeError, TimeoutError } from '../../src/errors.js';
import { PROGRESS_SLICES, RECOVERY_DEFAULTS } from '../../src/realtime/budgets.js';
import { Phase } from '../../src/realtime/reliable/machine.js';
import { SimpleSession } from '../../src/realtime/simple-session.js';
import { TimerId } from '../../src/realtime/reliable/types.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { audioOut, effects, emitted, ev, harness, REQUEST_ID, sent, status, type PortCall } from './machine-harness.js';

type Harness = ReturnType<typeof harness>;

const pong: ServerEvent = { event: 'pong', event_id: 'p', trace_id: 't', timestamp: 0, session_id: 'sess', request_id: REQUEST_ID } as ServerEvent;

/** `n` slices of the progress deadline pass, with `during` fed in each. */
function slices(h: Harness, n: number, during: ServerEvent[] = []): PortCall[] {
  const calls: PortCall[] = [];
  for (let i = 0; i < n; i++) {
    for (const frame of during) h.frame(frame);
    h.handle({ type: 'timer', id: TimerId.progress });
    calls.push(...h.port.take());
  }
  return calls;
}

/** End the current slice (which saw the set-up's frames): the next slices start quiet. */
function settle(h: Harness): Harness {
  h.handle({ type: 'timer', id: TimerId.progress });
  h.port.take();
  return h;
}

function starts(calls: PortCall[], id: TimerId): number[] {
  return calls.flatMap((c) => (c.call === 'startTimer' && c.id === id ? [c.ms] : []));
}

/** Segment s1 flushed, its audio begun; s2 queued (its text acked). */
function flushed(options: Parameters<typeof harness>[0] = {}): Harness {
  const h = harness(options).run();
  h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1, 2]));
  h.queue('s2', 'Two.').frame(ev.ack(2));
  h.port.take();
  return settle(h);
}

describe('defaults for live speech', () => {
  it('progress 5 s in slices of 1.25 s, finish 2 s, status read 3 s, one stall resumed; ready 10 s, 6 attempts within 60 s, 20 status polls', () => {
    expect(RECOVERY_DEFAULTS).toEqual({ progressTimeoutMs: 5_000, finishTimeoutMs: 2_000, statusTimeoutMs: 3_000, maxStallResumes: 1, startTimeoutMs: 10_000, maxRetries: 6, maxResumeMs: 60_000, maxStatusPolls: 20 });
    const h = harness().run();
    h.queue('s1', 'One.');
    expect(starts(h.port.take(), TimerId.progress)).toEqual([5_000 / PROGRESS_SLICES]);
    h.frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1])).frame(ev.completed('s1', 1, 1));
    h.handle({ type: 'stop-requested' });
    expect(starts(h.port.take(), TimerId.progress)).toEqual([2_000 / PROGRESS_SLICES]);
  });
});

describe('bad budgets', () => {
  it.each([
    [{ progressTimeoutMs: 0 }, 'progressTimeoutMs must be a positive number of milliseconds, not 0'],
    [{ finishTimeoutMs: Number.NaN }, 'finishTimeoutMs must be a positive number of milliseconds, not NaN'],
    [{ statusTimeoutMs: -5 }, 'statusTimeoutMs must be a positive number of milliseconds, not -5'],
    [{ maxStallResumes: 1.5 }, 'maxStallResumes must be a whole number from 0, not 1.5'],
  ])('%o is refused with invalid_config naming it', (options, message) => {
    expect(() => harness(options)).toThrow(expect.objectContaining({ code: 'invalid_config', message }));
    expect(() => new SimpleSession({ wsUrl: 'ws://127.0.0.1:9', apiKey: 'k', request: { voice_id: 'v', model: 'm' }, ...options })).toThrow(expect.objectContaining({ code: 'invalid_config' }));
  });
});

describe('a frame the machine needs but cannot use ends the attempt at once', () => {
  it.each([
    ['input_ack for a sequence never sent', ev.ack(1_001), 'sequence', /input_ack for sequence 1001, but on this connection text sequences 1 to 2 were sent/],
    ['input_ack for sequence 0', ev.ack(0), 'sequence', /input_ack for sequence 0/],
    ['segment_completed for an unknown segment', ev.completed('nobody', 1, 2), 'segment_id', /segment_completed for segment "nobody", which this request never queued \(the flush out is for s1\)/],
    ['segment_completed for a segment not flushed', ev.completed('s2', 1, 2), 'segment_id', /segment_completed for segment s2, which was not flushed on this connection/],
  ])('%s: close, back off, read the status (no deadline waited for)', (_name, frame, path, message) => {
    const h = flushed();
    h.frame(frame);
    const calls = h.port.take();
    expect(effects(calls)).toEqual(['closeTransport:1000', `startTimer:${TimerId.backoff}`]);
    const retry = emitted(calls, 'retry')[0]!;
    expect(retry.error).toBeInstanceOf(ProtocolError);
    expect(retry.error).toMatchObject({ code: 'invalid_server_frame', path, retryable: true });
    expect(retry.error.message).toMatch(message);
    expect(emitted(calls, 'segment-completed')).toEqual([]);
    h.handle({ type: 'timer', id: TimerId.backoff });
    expect(effects(h.port.take())).toEqual([`fetchStatus:${REQUEST_ID}`]);
  });

  it('a repeated input_ack or segment_completed is ignored, and is no progress', () => {
    const h = harness({ progressTimeoutMs: 4_000 }).run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1])).frame(ev.completed('s1', 1, 1));
    h.queue('s2', 'Two.').frame(ev.ack(2));
    settle(h);
    const calls = slices(h, PROGRESS_SLICES, [ev.ack(1), ev.ack(2), ev.completed('s1', 1, 1)]);
    expect(emitted(calls, 'retry').map((r) => r.error.code)).toEqual(['timeout']);
    expect(emitted(calls, 'segment-completed')).toEqual([]);
  });
});

describe('a quiet server stalls the attempt within its budget', () => {
  it('pongs, warnings, audio of other segments and usage of completed ones are not progress', () => {
    const h = flushed({ progressTimeoutMs: 4_000 });
    const chatter = [pong, ev.warning('busy'), ev.audio('nobody', [9, 9]), ev.usage('nobody', 1), ev.accepted('nobody')];
    const early = slices(h, PROGRESS_SLICES - 1, chatter);
    expect(emitted(early, 'retry')).toEqual([]);
    const calls = slices(h, 1, chatter);
    const retry = emitted(calls, 'retry')[0]!;
    expect(retry.error).toBeInstanceOf(TimeoutError);
    expect(retry.error.message).toBe('no progress from the server within 4000 ms while waiting for audio and segment_completed of segment s1');
    expect(effects(calls)).toContain('closeTransport:1000');
  });

  it('audio of the awaited segment is progress: no stall while it flows', () => {
    const h = flushed({ progressTimeoutMs: 4_000 });
    let calls: PortCall[] = [];
    for (let i = 0; i < 3 * PROGRESS_SLICES; i++) calls.push(...slices(h, 1, [ev.audio('s1', [i], i + 2)]));
    expect(emitted(calls, 'retry')).toEqual([]);
    // Then quiet: one whole budget after the last audio.
    calls = slices(h, PROGRESS_SLICES);
    expect(emitted(calls, 'retry')).toHaveLength(1);
  });

  it('no finish after stop: stalls within finishTimeoutMs, then the status route settles the request', () => {
    const h = harness({ finishTimeoutMs: 2_000 }).run();
    h.queue('s1', 'One.').speak('s1', 1, [1, 2]);
    h.port.take();
    h.handle({ type: 'stop-requested' });
    expect(sent(h.port.take())).toEqual(['stop']);
    const calls = slices(h, PROGRESS_SLICES, [pong]);
    expect(emitted(calls, 'retry')[0]!.error.message).toBe('no progress from the server within 2000 ms while waiting for finish after stop');
    h.handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', [{ segment_id: 's1', index: 0, state: 'completed', characters: 4, units: 1, audio_bytes: 2, audio_url: '/a' }]) } });
    const finished = emitted(h.port.take(), 'finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]!.summary.segments).toEqual([{ segmentId: 's1', units: 1, audioBytes: 2 }]);
    expect(h.machine.phase).toBe(Phase.done);
  });

  it('a clean close instead of finish after stop: the status route settles the request (no failure)', () => {
    const h = harness().run();
    h.queue('s1', 'One.').speak('s1', 1, [1, 2]).handle({ type: 'stop-requested' });
    h.handle({ type: 'transport-closed', code: 1000, reason: 'bye', wasClean: true });
    expect(emitted(h.port.take(), 'failed')).toEqual([]);
    h.handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', [{ segment_id: 's1', index: 0, state: 'completed', characters: 4, units: 1, audio_bytes: 2, audio_url: '/a' }]) } });
    expect(emitted(h.port.take(), 'finished')).toHaveLength(1);
  });

  it('the budget is not counted while the reader is paused', () => {
    const h = flushed({ progressTimeoutMs: 4_000 });
    slices(h, PROGRESS_SLICES - 1);
    h.handle({ type: 'reader', paused: true });
    expect(h.port.take().some((c) => c.call === 'cancelTimer' && c.id === TimerId.progress)).toBe(true);
    h.handle({ type: 'reader', paused: false });
    expect(emitted(slices(h, PROGRESS_SLICES - 1), 'retry')).toEqual([]);
  });
});

describe('stalls are resumed a bounded number of times', () => {
  /** Stall s1, recover it from the manifest, reopen, flush s2 and let its audio start. */
  function stallAndResume(h: Harness): void {
    h.frame(ev.completed('nobody', 1, 2));
    h.handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable', [{ segment_id: 's1', index: 0, state: 'completed', characters: 4, units: 1, audio_bytes: 2, audio_url: '/a' }]) } });
    h.handle({ type: 'audio-fetched', segmentId: 's1', result: { kind: 'ok', data: new Uint8Array([1, 2]) } });
    h.handle({ type: 'transport-opened' }).frame(ev.ready()).frame(ev.ack(1)).frame(ev.accepted('s2')).frame(ev.audio('s2', [3, 4]));
    h.port.take();
  }

  it('a second stall with no segment completed on the wire in between fails (failover under auto)', () => {
    const h = flushed();
    stallAndResume(h);
    expect(h.machine.phase).toBe(Phase.running);
    h.frame(ev.completed('nobody', 1, 2));
    const calls = h.port.take();
    expect(emitted(calls, 'retry')).toEqual([]);
    const error = emitted(calls, 'failed')[0]!.error;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error).toMatchObject({ code: 'retries_exhausted', details: { lastCode: 'invalid_server_frame' } });
    expect(error.message).toContain('stalled 2 times');
    expect(audioOut(calls)).toEqual(Buffer.alloc(0));
  });

  it('a second quiet stall fails with a TimeoutError', () => {
    const h = flushed({ progressTimeoutMs: 4_000 });
    stallAndResume(h);
    settle(h);
    const error = emitted(slices(h, PROGRESS_SLICES), 'failed')[0]!.error;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toContain('waiting for audio and segment_completed of segment s2');
  });

  it('a segment completed on the wire makes the next stall resumable again', () => {
    const h = flushed();
    stallAndResume(h);
    h.frame(ev.completed('s2', 1, 2));
    h.queue('s3', 'Three.').frame(ev.ack(2));
    h.port.take();
    h.frame(ev.ack(77));
    const calls = h.port.take();
    expect(emitted(calls, 'failed')).toEqual([]);
    expect(emitted(calls, 'retry')).toHaveLength(1);
  });

  it('maxStallResumes: 0 fails at the first stall', () => {
    const h = flushed({ maxStallResumes: 0 });
    h.frame(ev.ack(9));
    expect(emitted(h.port.take(), 'failed')[0]!.error).toMatchObject({ code: 'retries_exhausted' });
  });
});

describe('the status route has its own deadline', () => {
  function reading(options: Parameters<typeof harness>[0] = {}): Harness {
    const h = flushed(options);
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
    return h;
  }

  it('each read arms statusTimeoutMs; an answer cancels it', () => {
    const h = reading({ statusTimeoutMs: 1_500 });
    const calls = h.port.take();
    expect(starts(calls, TimerId.status)).toEqual([1_500]);
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    expect(h.port.take().some((c) => c.call === 'cancelTimer' && c.id === TimerId.status)).toBe(true);
  });

  it('unanswered: fails with a TimeoutError naming the route, no second read', () => {
    const h = reading({ statusTimeoutMs: 1_500 });
    h.port.take();
    h.handle({ type: 'timer', id: TimerId.status });
    const calls = h.port.take();
    const error = emitted(calls, 'failed')[0]!.error;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`the request-status route did not answer within 1500 ms; recovery of request ${REQUEST_ID} stops here`);
    expect(calls.some((c) => c.call === 'fetchStatus')).toBe(false);
    // A late answer changes nothing.
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    expect(h.port.take()).toEqual([]);
  });

  it('a read that timed out on its own deadline ends the same way', () => {
    const h = reading();
    h.port.take();
    h.handle({ type: 'status-fetched', result: { kind: 'error', error: new TimeoutError('HTTP read took over 3000 ms', { retryable: true }) } });
    const error = emitted(h.port.take(), 'failed')[0]!.error;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toContain('the request-status route did not answer within 3000 ms');
  });
});
