/**
 * Table-driven transition tests of the reliable state machine: a fake port
 * records every effect; no socket, no clock, no timers.
 */
import { describe, expect, it } from 'vitest';
import { AbortError, AuthenticationError, ConnectionError, PermissionDeniedError, RealtimeServerError, ResumeError, TimeoutError } from '../../src/errors.js';
import { ErrorCode } from '../../src/protocol/constants.js';
import { backoffDelayMs, DEFAULT_BACKOFF } from '../../src/backoff.js';
import { Phase, ResumeErrorCode } from '../../src/realtime/reliable/machine.js';
import { TimerId } from '../../src/realtime/reliable/types.js';
import type { MachineInput } from '../../src/realtime/reliable/types.js';
import { audioOut, discontinuities, effects, emitted, ev, harness, rawOut, REQUEST_ID, sent, status, watchdogs, wavHeader } from './machine-harness.js';

const FIRST_DELAY = backoffDelayMs(1, DEFAULT_BACKOFF, 0.5);


describe('happy path', () => {
  it('opens, starts, paces one segment, stops and finishes', () => {
    const h = harness({ eventIdPrefix: 'x' });
    h.handle({ type: 'open' });
    expect(effects(h.port.take())).toEqual(['openTransport']);

    h.handle({ type: 'transport-opened' });
    let calls = h.port.take();
    const start = calls.find((c) => c.call === 'sendFrame');
    expect(start).toEqual({
      call: 'sendFrame',
      event: { event: 'start', mode: 'reliable', event_id: 'x-1', request_id: REQUEST_ID, request: { voice_id: expect.any(String), model: 'svc-s21pro-flash', format: 'pcm' } },
    });
    expect(effects(calls)).toEqual(['startTimer:start']);

    h.frame(ev.ready());
    calls = h.port.take();
    expect(effects(calls)).toEqual(['cancelTimer:start']);
    expect(emitted(calls, 'ready')).toHaveLength(1);
    expect(h.machine.phase).toBe(Phase.running);

    h.queue('s1', 'Hello.');
    expect(sent(h.port.take())).toEqual(['text#1:Hello.']);
    h.frame(ev.ack(1));
    expect(sent(h.port.take())).toEqual(['flush:s1']);
    h.frame(ev.accepted('s1'));
    expect(emitted(h.port.take(), 'segment-accepted')).toEqual([{ type: 'segment-accepted', segmentId: 's1' }]);
    h.frame(ev.audio('s1', [1, 2, 3, 4]));
    calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([1, 2, 3, 4]));
    expect(emitted(calls, 'mark').map((m) => m.stage)).toEqual(['first_audio']);
    h.frame(ev.usage('s1', 6));
    expect(emitted(h.port.take(), 'usage')[0]).toMatchObject({ segmentId: 's1', segmentUnits: 6 });
    h.frame(ev.completed('s1', 6, 4));
    expect(emitted(h.port.take(), 'segment-completed')).toEqual([{ type: 'segment-completed', result: { segmentId: 's1', units: 6, audioBytes: 4, expectedBytes: 4 } }]);

    h.handle({ type: 'stop-requested' });
    expect(sent(h.port.take())).toEqual(['stop']);
    expect(h.machine.phase).toBe(Phase.stopping);
    h.frame(ev.finish('completed', 6));
    calls = h.port.take();
    expect(effects(calls)).toEqual(['closeTransport:1000']);
    expect(emitted(calls, 'finished')[0]!.summary).toEqual({
      requestId: REQUEST_ID, units: 6, retries: 0, resumed: 0, statusReads: 0, segments: [{ segmentId: 's1', units: 6, audioBytes: 4 }],
    });
    expect(h.machine.phase).toBe(Phase.done);
  });

  it('marks the waterfall of a segment in order, once each', () => {
    const h = harness().run();
    h.port.take();
    h.queue('s1', 'Hi').speak('s1', 1, [1, 2]);
    h.frame(ev.audio('s1', [3]));
    expect(emitted(h.port.take(), 'mark').map((m) => m.stage)).toEqual(['sent', 'input_ack', 'segment_accepted', 'first_audio', 'completed']);
  });

  it('stops at once when ended with nothing queued', () => {
    const h = harness().run();
    h.port.take();
    h.handle({ type: 'stop-requested' });
    expect(sent(h.port.take())).toEqual(['stop']);
  });

  it('gives every event its own event_id, and text sequences count from 1', () => {
    const h = harness().run();
    h.queue('s1', 'a').speak('s1', 1, [1]).queue('s2', 'b').speak('s2', 2, [2]).handle({ type: 'stop-requested' });
    const frames = h.port.take().flatMap((c) => (c.call === 'sendFrame' ? [c.event] : []));
    const ids = frames.map((f) => f.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(frames.flatMap((f) => (f.event === 'text' ? [f.sequence] : []))).toEqual([1, 2]);
  });
});

describe('pacing', () => {
  it('sends no second text frame before input_ack', () => {
    const h = harness().run();
    h.port.take();
    h.queue('s1', 'x'.repeat(2_500));
    expect(sent(h.port.take()).map((s) => s.slice(0, 7))).toEqual(['text#1:']);
    h.frame(ev.ack(1));
    expect(sent(h.port.take()).map((s) => s.slice(0, 7))).toEqual(['text#2:']);
    h.frame(ev.ack(2));
    expect(sent(h.port.take())).toEqual(['flush:s1']);
  });

  it('ignores an input_ack for another sequence', () => {
    const h = harness().run();
    h.queue('s1', 'x'.repeat(2_500));
    h.port.take();
    h.frame(ev.ack(7));
    expect(sent(h.port.take())).toEqual([]);
  });

  it('sends the next text while a segment generates, but not its flush before segment_completed', () => {
    const h = harness().run();
    h.port.take();
    h.queue('s1', 'One.').queue('s2', 'Two.');
    expect(sent(h.port.take())).toEqual(['text#1:One.']);
    h.frame(ev.ack(1));
    expect(sent(h.port.take())).toEqual(['flush:s1', 'text#2:Two.']);
    h.frame(ev.ack(2));
    expect(sent(h.port.take())).toEqual([]);
    h.frame(ev.accepted('s1')).frame(ev.audio('s1', [1]));
    expect(sent(h.port.take())).toEqual([]);
    h.frame(ev.completed('s1', 4, 1));
    expect(sent(h.port.take())).toEqual(['flush:s2']);
  });

  it('holds a third segment\'s text until the second is flushed (a flush commits the whole buffer)', () => {
    const h = harness().run();
    h.queue('s1', 'One.').queue('s2', 'Two.').queue('s3', 'Three.');
    h.frame(ev.ack(1)).frame(ev.ack(2));
    expect(sent(h.port.take())).toEqual(['text#1:One.', 'flush:s1', 'text#2:Two.']);
    h.frame(ev.completed('s1', 4));
    expect(sent(h.port.take())).toEqual(['flush:s2', 'text#3:Three.']);
  });

  it('waits for the last segment_completed before stop', () => {
    const h = harness().run();
    h.queue('s1', 'One.').frame(ev.ack(1)).handle({ type: 'stop-requested' });
    expect(sent(h.port.take())).toEqual(['text#1:One.', 'flush:s1']);
    h.frame(ev.completed('s1', 4));
    expect(sent(h.port.take())).toEqual(['stop']);
  });

  it('sends nothing before ready', () => {
    const h = harness();
    h.handle({ type: 'open' }).handle({ type: 'transport-opened' }).queue('s1', 'early');
    expect(sent(h.port.take())).toEqual([`start:${REQUEST_ID}`]);
    h.frame(ev.ready());
    expect(sent(h.port.take())).toEqual(['text#1:early']);
  });
});

describe('long segments', () => {
  it('splits a segment into text frames of at most 2,000 characters, whole code points', () => {
    const h = harness().run();
    h.port.take();
    const text = 'a'.repeat(1_999) + '😀' + 'b'.repeat(2_500);
    h.queue('s1', text);
    const texts: string[] = [];
    for (let seq = 1; seq <= 3; seq++) {
      for (const c of h.port.take()) if (c.call === 'sendFrame' && c.event.event === 'text') texts.push(c.event.text);
      h.frame(ev.ack(seq));
    }
    expect(texts.map((t) => [...t].length)).toEqual([2_000, 2_000, 500]);
    expect(texts.join('')).toBe(text);
    expect(sent(h.port.take())).toEqual(['flush:s1']);
  });
});

/** A running machine with s1 flushed and cut off after 4 bytes of audio, and s2 queued. */
function interrupted(format = 'pcm', options: Parameters<typeof harness>[0] = {}) {
  const h = harness(options).run(format);
  h.queue('s1', 'One.').queue('s2', 'Two.');
  h.frame(ev.ack(1)).frame(ev.accepted('s1'));
  h.frame(ev.audio('s1', format === 'wav' ? [...wavHeader(), 1, 2, 3, 4] : [1, 2, 3, 4]));
  h.port.take();
  return h;
}

describe('failures that retry', () => {
  const cases: { name: string; input: MachineInput; closes: boolean }[] = [
    { name: 'error event with retryable: true', input: { type: 'frame', event: ev.error(ErrorCode.providerUnavailable, true) }, closes: true },
    { name: 'close 1012 (service restart)', input: { type: 'transport-closed', code: 1012, reason: 'restart', wasClean: true }, closes: false },
    { name: 'close 1013 (try again later)', input: { type: 'transport-closed', code: 1013, reason: '', wasClean: true }, closes: false },
    { name: 'TCP drop (1006, not clean)', input: { type: 'transport-closed', code: 1006, reason: '', wasClean: false }, closes: false },
    { name: 'finish with reason timeout', input: { type: 'frame', event: ev.finish('timeout') }, closes: true },
    {
      name: 'keep-alive timeout reported by the connection',
      input: { type: 'transport-closed', code: 1006, reason: '', wasClean: false, error: new ConnectionError('keepalive_timeout', 'no pong', { retryable: true }) },
      closes: false,
    },
  ];
  it.each(cases)('$name: backs off with jitter, then reads the status route', ({ input, closes }) => {
    const h = interrupted();
    h.handle(input);
    let calls = h.port.take();
    expect(effects(calls)).toEqual([...(closes ? ['closeTransport:1000'] : []), `startTimer:${TimerId.backoff}`]);
    expect(emitted(calls, 'retry')).toEqual([{ type: 'retry', attempt: 1, error: expect.any(Error), delayMs: FIRST_DELAY }]);
    expect(h.machine.phase).toBe(Phase.waiting);
    expect(audioOut(calls)).toHaveLength(0);
    h.handle({ type: 'timer', id: TimerId.backoff });
    calls = h.port.take();
    expect(effects(calls)).toEqual([`fetchStatus:${REQUEST_ID}`]);
  });
});

describe('failures that do not retry', () => {
  const cases: { name: string; input: MachineInput; code: string; type: new (...a: never[]) => Error }[] = [
    ...[ErrorCode.voiceNotFound, ErrorCode.modelNotFound, ErrorCode.unsupportedParameter, ErrorCode.quotaExceeded, ErrorCode.idempotencyConflict].map((code) => ({
      name: `error ${code}`,
      input: { type: 'frame', event: ev.error(code, false) } as MachineInput,
      code,
      type: RealtimeServerError,
    })),
    { name: 'a non-terminal, non-retryable error', input: { type: 'frame', event: ev.error(ErrorCode.emptySegment, false, false) }, code: ErrorCode.emptySegment, type: RealtimeServerError },
    { name: 'clean close 1000 before finish', input: { type: 'transport-closed', code: 1000, reason: '', wasClean: true }, code: 'connection_closed', type: ConnectionError },
  ];
  it.each(cases)('$name: fails with the code, no timer, no status read', ({ input, code, type }) => {
    const h = interrupted();
    h.handle(input);
    const calls = h.port.take();
    const failed = emitted(calls, 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toBeInstanceOf(type);
    expect(failed[0]!.error.code).toBe(code);
    expect(effects(calls).filter((e) => e.startsWith('startTimer') || e.startsWith('fetchStatus'))).toEqual([]);
    expect(emitted(calls, 'retry')).toEqual([]);
    expect(h.machine.phase).toBe(Phase.failed);
  });

  it('a refused first handshake (401) fails without retry', () => {
    const h = harness();
    h.handle({ type: 'open' });
    h.port.take();
    h.handle({ type: 'transport-failed', error: new AuthenticationError(401, 'unauthorized', 'handshake refused') });
    const calls = h.port.take();
    expect(emitted(calls, 'failed')[0]!.error).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(effects(calls)).toEqual([]);
  });

  it('a first connection that cannot be made fails at once even when the error is retryable (no request exists yet)', () => {
    const h = harness();
    h.handle({ type: 'open' });
    h.port.take();
    h.handle({ type: 'transport-failed', error: new ConnectionError('connection_failed', 'ECONNREFUSED', { retryable: true }) });
    expect(emitted(h.port.take(), 'failed')).toHaveLength(1);
  });

  it('fails on an error before ready (unknown voice at start)', () => {
    const h = harness();
    h.handle({ type: 'open' }).handle({ type: 'transport-opened' });
    h.port.take();
    h.frame(ev.error(ErrorCode.voiceNotFound, false));
    const calls = h.port.take();
    expect(effects(calls)).toEqual(['cancelTimer:start', 'closeTransport:1000']);
    expect(emitted(calls, 'failed')[0]!.error.code).toBe(ErrorCode.voiceNotFound);
    expect(emitted(calls, 'ready')).toEqual([]);
  });
});

describe('status branches after a failure', () => {
  /** Interrupted, backed off, status read: ready for `status-fetched`. */
  function readingStatus(format = 'pcm', options: Parameters<typeof harness>[0] = {}) {
    const h = interrupted(format, options);
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true });
    h.handle({ type: 'timer', id: TimerId.backoff });
    h.port.take();
    return h;
  }

  it('failed_retryable: reopens, starts with the same request_id and retry_failed, re-sends the pending segments with the same ids and text', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    expect(effects(h.port.take())).toEqual(['openTransport']);
    h.handle({ type: 'transport-opened' });
    expect(sent(h.port.take())).toEqual([`start:${REQUEST_ID}:retry_failed`]);
    h.frame(ev.ready());
    let calls = h.port.take();
    expect(emitted(calls, 'ready')).toEqual([]); // the user saw ready once
    expect(emitted(calls, 'resumed')).toEqual([{ type: 'resumed', attempt: 1, requestId: REQUEST_ID, pendingSegments: ['s1', 's2'] }]);
    expect(sent(calls)).toEqual(['text#1:One.']);
    h.frame(ev.ack(1));
    calls = h.port.take();
    expect(sent(calls)).toEqual(['flush:s1', 'text#2:Two.']);
    expect(h.machine.summary()).toMatchObject({ retries: 1, resumed: 1, statusReads: 1 });
  });

  /**
   * s1 completed, s2 flushed and cut after 2 bytes, stop already sent; the
   * connection dropped; the status route is being read.
   */
  function droppedNearTheEnd() {
    const h = harness().run();
    h.port.take();
    h.queue('s1', 'One.').queue('s2', 'Two.').handle({ type: 'stop-requested' });
    h.frame(ev.ack(1)).frame(ev.ack(2));
    h.frame(ev.accepted('s1')).frame(ev.audio('s1', [1, 2])).frame(ev.completed('s1', 4, 2));
    h.frame(ev.accepted('s2')).frame(ev.audio('s2', [3, 4], 2));
    expect(sent(h.port.take())).toEqual(['text#1:One.', 'flush:s1', 'text#2:Two.', 'flush:s2']);
    h.handle({ type: 'transport-closed', code: 1006, reason: '', wasClean: false }).handle({ type: 'timer', id: TimerId.backoff });
    h.port.take();
    return h;
  }

  /** The manifest of `droppedNearTheEnd`, both segments stored; s2 said to carry `s2Bytes`. */
  const storedManifest = (s2Bytes: number) =>
    [
      { segment_id: 's1', audio_bytes: 2 },
      { segment_id: 's2', audio_bytes: s2Bytes },
    ].map((m, index) => ({ ...m, index, state: 'completed' as const, characters: 4, units: 4, audio_url: `/v2/tts/requests/req-1/segments/${m.segment_id}/audio` }));

  it('completed with a manifest: downloads the missing audio, emits only the bytes not yet emitted, finishes', () => {
    const h = droppedNearTheEnd();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', storedManifest(4)) } });
    let calls = h.port.take();
    // s1 completed on the client: never fetched again.
    expect(effects(calls)).toEqual(['fetchSegmentAudio:s2']);
    h.handle({ type: 'audio-fetched', segmentId: 's2', result: { kind: 'ok', data: Uint8Array.from([3, 4, 5, 6]) } });
    calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([5, 6]));
    expect(emitted(calls, 'segment-completed')[0]!.result).toEqual({ segmentId: 's2', units: 4, audioBytes: 4, expectedBytes: 4 });
    expect(emitted(calls, 'resumed')).toHaveLength(1);
    expect(emitted(calls, 'finished')[0]!.summary).toMatchObject({ units: 8, resumed: 1, retries: 1, statusReads: 1 });
    expect(h.machine.phase).toBe(Phase.done);
  });

  it('completed with a manifest whose stored audio is shorter than its audio_bytes: audio_incomplete naming the missing range, not a finish', () => {
    const h = droppedNearTheEnd();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', storedManifest(6)) } });
    h.port.take();
    h.handle({ type: 'audio-fetched', segmentId: 's2', result: { kind: 'ok', data: Uint8Array.from([3, 4, 5, 6]) } });
    const calls = h.port.take();
    expect(emitted(calls, 'failed')[0]!.error).toMatchObject({ code: 'audio_incomplete', segmentId: 's2', missing: { from: 4, to: 6 } });
    expect(emitted(calls, 'segment-completed')).toEqual([]);
    expect(emitted(calls, 'finished')).toEqual([]);
  });

  it('completed without audio for a segment: warns audio_unavailable and finishes', () => {
    const h = droppedNearTheEnd();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: { ...status('completed'), result_available: false } } });
    const calls = h.port.take();
    expect(emitted(calls, 'warning').map((w) => w.code)).toEqual(['audio_unavailable']);
    expect(emitted(calls, 'finished')).toHaveLength(1);
  });

  it('completed without audio for a segment whose manifest count exceeds what was emitted: audio_incomplete, not a finish', () => {
    const h = droppedNearTheEnd();
    const segments = [
      { segment_id: 's1', index: 0, state: 'completed' as const, characters: 4, units: 4, audio_bytes: 2 },
      { segment_id: 's2', index: 1, state: 'completed' as const, characters: 4, units: 4, audio_bytes: 6 },
    ];
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', segments) } });
    const calls = h.port.take();
    expect(emitted(calls, 'failed')[0]!.error).toMatchObject({ code: 'audio_incomplete', segmentId: 's2', missing: { from: 2, to: 6 } });
    expect(emitted(calls, 'finished')).toEqual([]);
  });

  it('completed before the user ended: a later segment fails with request_completed', () => {
    const h = harness().run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1]));
    h.handle({ type: 'transport-closed', code: 1006, reason: '', wasClean: false }).handle({ type: 'timer', id: TimerId.backoff });
    const manifest = [{ segment_id: 's1', index: 0, state: 'completed' as const, characters: 4, units: 4, audio_bytes: 1, audio_url: 'u' }];
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', manifest) } });
    h.handle({ type: 'audio-fetched', segmentId: 's1', result: { kind: 'ok', data: Uint8Array.from([1]) } });
    expect(h.machine.phase).toBe(Phase.completedRemotely);
    h.port.take();
    h.queue('s2', 'Two.');
    expect(emitted(h.port.take(), 'failed')[0]!.error.code).toBe(ResumeErrorCode.requestCompleted);
  });

  it('completed: a queued segment that was never sent cannot be recovered → ResumeError', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', []) } });
    const failed = emitted(h.port.take(), 'failed');
    expect(failed[0]!.error).toBeInstanceOf(ResumeError);
    expect(failed[0]!.error.code).toBe(ResumeErrorCode.requestCompleted);
  });

  it('running: waits, then reads the status again', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('running') } });
    expect(effects(h.port.take())).toEqual([`startTimer:${TimerId.statusPoll}`]);
    h.handle({ type: 'timer', id: TimerId.statusPoll });
    expect(effects(h.port.take())).toEqual([`fetchStatus:${REQUEST_ID}`]);
    expect(h.machine.summary().statusReads).toBe(2);
  });

  it('running for too long: gives up with request_still_running', () => {
    const h = readingStatus('pcm', { maxStatusPolls: 2 });
    for (let i = 0; i < 2; i++) {
      h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('running') } });
      h.handle({ type: 'timer', id: TimerId.statusPoll });
    }
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('running') } });
    expect(emitted(h.port.take(), 'failed')[0]!.error.code).toBe(ResumeErrorCode.requestStillRunning);
  });

  it('failed_terminal: fails with a typed ResumeError', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_terminal') } });
    const calls = h.port.take();
    const error = emitted(calls, 'failed')[0]!.error;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.code).toBe(ResumeErrorCode.requestFailedTerminal);
    expect(effects(calls)).toEqual([]);
  });

  it('unknown request (404): starts again with the same request_id, without retry_failed', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'not-found' } });
    expect(effects(h.port.take())).toEqual(['openTransport']);
    h.handle({ type: 'transport-opened' });
    expect(sent(h.port.take())).toEqual([`start:${REQUEST_ID}`]);
  });

  it('a retryable status-route error backs off again with a longer delay', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'error', error: new ConnectionError('connection_failed', 'ECONNRESET', { retryable: true }) } });
    const calls = h.port.take();
    expect(emitted(calls, 'retry')[0]).toMatchObject({ attempt: 2, delayMs: backoffDelayMs(2, DEFAULT_BACKOFF, 0.5) });
    expect(backoffDelayMs(2, DEFAULT_BACKOFF, 0.5)).toBeGreaterThan(FIRST_DELAY);
  });

  it('a non-retryable status-route error (403) fails', () => {
    const h = readingStatus();
    h.handle({ type: 'status-fetched', result: { kind: 'error', error: new PermissionDeniedError(403, 'forbidden', 'no') } });
    expect(emitted(h.port.take(), 'failed')[0]!.error.code).toBe('forbidden');
  });

  it('failed_retryable with a manifest: takes the audio of segments the service completed first, then re-sends only the rest', () => {
    const h = harness().run();
    h.queue('s1', 'One.').queue('s2', 'Two.');
    h.frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1, 2, 3, 4]));
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
    h.port.take();
    const manifest = [{ segment_id: 's1', index: 0, state: 'completed' as const, characters: 4, units: 4, audio_bytes: 6, audio_url: 'http://x/s1' }];
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable', manifest) } });
    expect(effects(h.port.take())).toEqual(['fetchSegmentAudio:s1']);
    h.handle({ type: 'audio-fetched', segmentId: 's1', result: { kind: 'ok', data: Uint8Array.from([1, 2, 3, 4, 5, 6]) } });
    let calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([5, 6]));
    expect(effects(calls)).toEqual(['openTransport']);
    h.handle({ type: 'transport-opened' }).frame(ev.ready());
    calls = h.port.take();
    expect(sent(calls)).toEqual([`start:${REQUEST_ID}:retry_failed`, 'text#1:Two.']);
    expect(emitted(calls, 'resumed')[0]!.pendingSegments).toEqual(['s2']);
  });

  it('a start answered by request_status failed_retryable reopens with retry_failed', () => {
    const h = harness();
    h.handle({ type: 'open' }).handle({ type: 'transport-opened' });
    h.port.take();
    h.frame(ev.requestStatus('failed_retryable'));
    expect(effects(h.port.take())).toEqual(['cancelTimer:start', 'closeTransport:1000', 'openTransport']);
    h.handle({ type: 'transport-opened' });
    expect(sent(h.port.take())).toEqual([`start:${REQUEST_ID}:retry_failed`]);
  });

  it('a start answered by request_status completed reads the manifest from the route', () => {
    const h = harness();
    h.handle({ type: 'open' }).handle({ type: 'transport-opened' });
    h.port.take();
    h.frame(ev.requestStatus('completed'));
    expect(effects(h.port.take())).toEqual(['cancelTimer:start', 'closeTransport:1000', `fetchStatus:${REQUEST_ID}`]);
  });
});

describe('partial segments', () => {
  function resumeAfterCut(format: string, options: Parameters<typeof harness>[0] = {}) {
    const h = interrupted(format, options);
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    h.handle({ type: 'transport-opened' }).frame(ev.ready(format)).frame(ev.ack(1)).frame(ev.accepted('s1'));
    h.port.take();
    return h;
  }

  it('continue (pcm default): skips the bytes already emitted, across frame boundaries', () => {
    const h = resumeAfterCut('pcm');
    h.frame(ev.audio('s1', [1, 2, 3])).frame(ev.audio('s1', [4, 5, 6], 2));
    const calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([5, 6]));
    expect(discontinuities(calls)).toEqual([]);
    h.frame(ev.completed('s1', 4, 6));
    expect(emitted(h.port.take(), 'segment-completed')[0]!.result.audioBytes).toBe(6);
  });

  it('continue (wav default): the stream header of the new connection is dropped, the PCM continues sample-exact', () => {
    const h = resumeAfterCut('wav');
    h.frame(ev.audio('s1', [...wavHeader(), 1, 2, 3, 4, 5, 6], 1, 'wav'));
    const calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([5, 6]));
  });

  it('the machine splices nothing: a resumed connection hands over its raw bytes, header included, as a new attempt from offset 0', () => {
    const h = resumeAfterCut('wav');
    h.frame(ev.audio('s1', [...wavHeader(), 1, 2, 3, 4], 1, 'wav')).frame(ev.audio('s1', [5, 6], 2, 'wav'));
    const calls = h.port.take();
    expect(rawOut(calls)).toEqual(Buffer.from([...wavHeader(), 1, 2, 3, 4, 5, 6]));
    const tags = calls.flatMap((c) => (c.call === 'emitAudio' ? [[c.audio.attempt, c.audio.offset]] : []));
    expect(tags).toEqual([[2, 0], [2, 48]]);
    // What the listener gets is the ledger's: the header of the new attempt stripped, the 4 bytes it had skipped.
    expect(audioOut(calls)).toEqual(Buffer.from([5, 6]));
    expect(Object.keys(h.machine.journal()[0]!).filter((k) => /bytes/i.test(k))).toEqual([]);
  });

  it('wav: the first header of the request reaches the listener exactly once', () => {
    const h = harness().run('wav');
    h.queue('s1', 'a').frame(ev.ack(1));
    h.frame(ev.audio('s1', [...wavHeader(), 9, 9], 1, 'wav')).frame(ev.audio('s1', [8, 8], 2, 'wav'));
    expect(audioOut(h.port.take())).toEqual(Buffer.from([...wavHeader(), 9, 9, 8, 8]));
  });

  it('restart (mp3 default): emits discontinuity, then the whole segment again', () => {
    const h = resumeAfterCut('mp3');
    h.frame(ev.audio('s1', [1, 2, 3])).frame(ev.audio('s1', [4, 5, 6], 2));
    const calls = h.port.take();
    expect(discontinuities(calls)).toEqual([{ segmentId: 's1', droppedBytes: 4 }]);
    const discontinuityAt = calls.findIndex((c) => c.call === 'discontinuity');
    const firstAudioAt = calls.findIndex((c) => c.call === 'listen');
    expect(discontinuityAt).toBeLessThan(firstAudioAt);
    expect(audioOut(calls)).toEqual(Buffer.from([1, 2, 3, 4, 5, 6]));
  });

  it('onPartialSegment overrides the format default (restart on pcm)', () => {
    const h = resumeAfterCut('pcm', { onPartialSegment: 'restart' });
    h.frame(ev.audio('s1', [1, 2, 3, 4, 5, 6]));
    const calls = h.port.take();
    expect(discontinuities(calls)).toHaveLength(1);
    expect(audioOut(calls)).toEqual(Buffer.from([1, 2, 3, 4, 5, 6]));
  });

  it('never emits audio of a completed segment twice, and never re-sends it', () => {
    const h = harness().run();
    h.queue('s1', 'One.').queue('s2', 'Two.').speak('s1', 1, [1, 2]);
    h.frame(ev.ack(2)).frame(ev.accepted('s2')).frame(ev.audio('s2', [3], 2));
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    h.port.take();
    h.handle({ type: 'transport-opened' }).frame(ev.ready());
    expect(sent(h.port.take())).toEqual([`start:${REQUEST_ID}:retry_failed`, 'text#1:Two.']);
    h.frame(ev.audio('s1', [1, 2]));
    const calls = h.port.take();
    expect(audioOut(calls)).toHaveLength(0);
    expect(emitted(calls, 'warning').map((w) => w.code)).toEqual(['unexpected_audio']);
  });

  it('numbers no output: the listener sequence is the stream one, across connections too', () => {
    const h = resumeAfterCut('pcm');
    h.frame(ev.audio('s1', [1, 2, 3, 4, 5, 6]));
    const handed = h.port.take().flatMap((c) => (c.call === 'emitAudio' ? [c.audio] : []));
    expect(handed).toHaveLength(1);
    expect(handed[0]).not.toHaveProperty('sequence');
  });
});

describe('abort', () => {
  it('while running: sends stop, closes, reports the reason, then ignores the socket', () => {
    const h = interrupted();
    const reason = new AbortError('barge-in');
    h.handle({ type: 'abort-requested', reason });
    let calls = h.port.take();
    expect(sent(calls)).toEqual(['stop']);
    expect(effects(calls)).toEqual(['closeTransport:1000']);
    expect(emitted(calls, 'failed')[0]!.error).toBe(reason);
    expect(h.machine.phase).toBe(Phase.aborted);
    h.frame(ev.audio('s1', [5, 6])).handle({ type: 'transport-closed', code: 1006, reason: '', wasClean: false });
    calls = h.port.take();
    expect(calls).toEqual([]);
  });

  it('during backoff: cancels the timer and does not read the status', () => {
    const h = interrupted();
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true });
    h.port.take();
    h.handle({ type: 'abort-requested', reason: new AbortError() });
    expect(effects(h.port.take())).toEqual([`cancelTimer:${TimerId.backoff}`]);
    h.handle({ type: 'timer', id: TimerId.backoff });
    expect(h.port.take()).toEqual([]);
  });
});

describe('retry budget', () => {
  it('gives up after maxRetries failures in a row with retries_exhausted and the last cause', () => {
    const h = interrupted('pcm', { maxRetries: 2 });
    const drop: MachineInput = { type: 'transport-closed', code: 1006, reason: '', wasClean: false };
    h.handle(drop).handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    // The reconnect itself fails twice.
    const refused = new ConnectionError('connection_failed', 'ECONNREFUSED', { retryable: true });
    h.handle({ type: 'transport-failed', error: refused }).handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    h.port.take();
    h.handle({ type: 'transport-failed', error: refused });
    const calls = h.port.take();
    const error = emitted(calls, 'failed')[0]!.error;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.code).toBe(ResumeErrorCode.retriesExhausted);
    expect(error.cause).toBe(refused);
    expect(h.machine.summary().retries).toBe(3);
  });

  it('a successful resume resets the budget, and delays grow with attempts up to the cap', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelayMs(n, DEFAULT_BACKOFF, 0.5));
    expect(delays.slice(0, 4)).toEqual([150, 300, 600, 1_200]);
    expect(Math.max(...delays)).toBe(3_750); // cap 5 s, equal jitter at 0.5
    expect(backoffDelayMs(1, DEFAULT_BACKOFF, 0)).toBe(100);
    expect(backoffDelayMs(1, DEFAULT_BACKOFF, 0.999_999)).toBe(200);

    const h = interrupted('pcm', { maxRetries: 1 });
    for (let round = 0; round < 3; round++) {
      h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
      h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
      h.handle({ type: 'transport-opened' }).frame(ev.ready());
      // The resumed connection makes progress: s1's audio again, one byte further.
      h.frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', Array.from({ length: 5 + round }, (_, i) => i + 1)));
    }
    const calls = h.port.take();
    expect(emitted(calls, 'failed')).toEqual([]);
    expect(emitted(calls, 'retry').map((r) => r.attempt)).toEqual([1, 1, 1]);
    expect(audioOut(calls)).toEqual(Buffer.from([5, 6, 7]));
    expect(h.machine.summary()).toMatchObject({ retries: 3, resumed: 3 });
  });

  it('a ready with no progress after it does not reset the budget: a server failing after every ready is given up on', () => {
    const h = interrupted('pcm', { maxRetries: 2 });
    for (let round = 0; round < 3; round++) {
      h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true });
      if (round === 2) break;
      h.handle({ type: 'timer', id: TimerId.backoff });
      h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
      h.handle({ type: 'transport-opened' }).frame(ev.ready());
    }
    const calls = h.port.take();
    expect(emitted(calls, 'retry').map((r) => r.attempt)).toEqual([1, 2]);
    const error = emitted(calls, 'failed')[0]!.error;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.code).toBe(ResumeErrorCode.retriesExhausted);
    expect(error.details).toMatchObject({ attempts: 2 });
  });

  it('no ready within startTimeoutMs counts as a retryable failure', () => {
    const h = harness({ startTimeoutMs: 1_234 });
    h.handle({ type: 'open' }).handle({ type: 'transport-opened' });
    expect(h.port.take().find((c) => c.call === 'startTimer')).toEqual({ call: 'startTimer', id: TimerId.start, ms: 1_234 });
    h.handle({ type: 'timer', id: TimerId.start });
    const calls = h.port.take();
    expect(effects(calls)).toEqual(['closeTransport:1000', `startTimer:${TimerId.backoff}`]);
    expect(emitted(calls, 'retry')[0]!.error.code).toBe('timeout');
  });
});

describe('finish', () => {
  it('server_draining waits for the 1012 close that follows, which resumes', () => {
    const h = interrupted();
    h.frame(ev.finish('server_draining'));
    expect(h.port.take()).toEqual([]);
    h.handle({ type: 'transport-closed', code: 1012, reason: 'draining', wasClean: true });
    expect(effects(h.port.take())).toEqual([`startTimer:${TimerId.backoff}`]);
  });

  it('a warning from the server is passed on', () => {
    const h = interrupted();
    h.frame(ev.warning('slow_down'));
    expect(emitted(h.port.take(), 'warning')).toEqual([{ type: 'warning', code: 'slow_down', message: 'slow_down' }]);
  });
});

describe('close 1011 or 1001 after ready: the status route decides (no blind retry, no needless failover)', () => {
  it.each([1011, 1001])('close %i, failed_retryable: resumes with retry_failed', (code) => {
    const h = interrupted();
    h.handle({ type: 'transport-closed', code, reason: '', wasClean: true });
    expect(effects(h.port.take())).toEqual([`startTimer:${TimerId.backoff}`]);
    h.handle({ type: 'timer', id: TimerId.backoff });
    expect(effects(h.port.take())).toEqual([`fetchStatus:${REQUEST_ID}`]);
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } });
    h.handle({ type: 'transport-opened' });
    expect(sent(h.port.take())).toEqual([`start:${REQUEST_ID}:retry_failed`]);
  });

  it('close 1011, failed_terminal: fails with request_failed_terminal (failover may act)', () => {
    const h = interrupted();
    h.handle({ type: 'transport-closed', code: 1011, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
    h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('failed_terminal') } });
    const error = emitted(h.port.take(), 'failed')[0]!.error;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.code).toBe(ResumeErrorCode.requestFailedTerminal);
  });

  it('close 1011 before any ready fails at once', () => {
    const h = harness();
    h.handle({ type: 'open' }).handle({ type: 'transport-opened' }).handle({ type: 'transport-closed', code: 1011, reason: '', wasClean: true });
    expect(emitted(h.port.take(), 'failed')[0]!.error.code).toBe('connection_closed');
  });
});

describe('audio order (spec 6, rule 2)', () => {
  it('emits frames in sequence order whatever the arrival order, and drops (and reports) exact repeats', () => {
    const h = harness().run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1'));
    h.frame(ev.audio('s1', [3], 3)).frame(ev.audio('s1', [1], 1)).frame(ev.audio('s1', [1], 1)).frame(ev.audio('s1', [2], 2));
    const calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([1, 2, 3]));
    expect(emitted(calls, 'warning').map((w) => w.code)).toEqual(['audio_repeat']);
  });

  it('a sequence skipped (the byte count says nothing is missing): the segment end releases the rest and warns audio_sequence_gap', () => {
    const h = harness().run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1'));
    // 1, 3, 4: not one constant step (1, 3, 5 would be a numbering in steps of 2, learnt, no gap).
    h.frame(ev.audio('s1', [1], 1)).frame(ev.audio('s1', [3], 3)).frame(ev.audio('s1', [4], 4));
    expect(audioOut(h.port.take())).toEqual(Buffer.from([1]));
    h.frame(ev.completed('s1', 1, 3));
    const calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([3, 4]));
    expect(emitted(calls, 'warning').map((w) => [w.code, w.message])).toEqual([['audio_sequence_gap', expect.stringContaining('sequence 2 skipped')]]);
    expect(emitted(calls, 'segment-completed')).toHaveLength(1);
  });

  it('a segment completed short of its byte count, the frames past the hole still held: they are dropped and the request resumes', () => {
    const h = harness().run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1'));
    h.frame(ev.audio('s1', [1], 1)).frame(ev.audio('s1', [3], 3));
    h.port.take();
    h.frame(ev.completed('s1', 1, 3));
    const calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.alloc(0));
    expect(emitted(calls, 'retry')).toHaveLength(1);
    expect(emitted(calls, 'retry')[0]!.error).toMatchObject({ code: 'audio_incomplete', segmentId: 's1', missing: { from: 2, to: 3 } });
    expect(emitted(calls, 'segment-completed')).toEqual([]);
  });

  it('a segment completed short after audio past the hole was emitted: audio_incomplete, never success', () => {
    const h = harness({ reorderWindowFrames: 0 }).run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1'));
    h.frame(ev.audio('s1', [1], 1)).frame(ev.audio('s1', [3], 3)).frame(ev.completed('s1', 1, 3));
    const calls = h.port.take();
    expect(emitted(calls, 'failed')[0]!.error).toMatchObject({ code: 'audio_incomplete', segmentId: 's1', expectedBytes: 3, receivedBytes: 2 });
    expect(emitted(calls, 'segment-completed')).toEqual([]);
  });

  it.each([
    ['per connection', [1, 2, 3, 4]],
    ['per segment', [1, 2, 1, 2]],
  ])('accepts audio sequences counted %s', (_scope, sequences) => {
    const h = harness().run();
    h.queue('s1', 'One.').queue('s2', 'Two.').handle({ type: 'stop-requested' });
    h.frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1], sequences[0])).frame(ev.audio('s1', [2], sequences[1]));
    h.frame(ev.completed('s1', 1, 2)).frame(ev.ack(2)).frame(ev.accepted('s2'));
    h.frame(ev.audio('s2', [4], sequences[3])).frame(ev.audio('s2', [3], sequences[2])).frame(ev.completed('s2', 1, 2)).frame(ev.finish());
    const calls = h.port.take();
    expect(audioOut(calls)).toEqual(Buffer.from([1, 2, 3, 4]));
    expect(emitted(calls, 'warning')).toEqual([]);
    expect(emitted(calls, 'finished')).toHaveLength(1);
  });
});

describe('progress deadline', () => {
  it('arms while an input_ack is owed; a quiet budget (four slices) resumes with a retryable TimeoutError', () => {
    const h = harness({ progressTimeoutMs: 5_000 }).run();
    h.queue('s1', 'One.');
    expect(h.port.take().filter((c) => c.call === 'startTimer')).toEqual([{ call: 'startTimer', id: TimerId.progress, ms: 1_250 }]);
    for (let slice = 0; slice < 3; slice++) h.handle({ type: 'timer', id: TimerId.progress });
    expect(emitted(h.port.take(), 'retry')).toEqual([]);
    h.handle({ type: 'timer', id: TimerId.progress });
    const calls = h.port.take();
    const retry = emitted(calls, 'retry')[0]!;
    expect(retry.error).toBeInstanceOf(TimeoutError);
    expect(retry.error.retryable).toBe(true);
    expect(effects(calls)).toContain('closeTransport:1000');
  });

  it('a period with frames arms the next one instead of failing', () => {
    const h = harness({ progressTimeoutMs: 5_000 }).run();
    h.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1'));
    h.port.take();
    h.handle({ type: 'timer', id: TimerId.progress });
    const calls = h.port.take();
    expect(emitted(calls, 'retry')).toEqual([]);
    expect(watchdogs(calls)).toEqual([`startTimer:${TimerId.progress}`]);
  });

  it('is not armed while the reader is paused, and again once it reads', () => {
    const h = harness({ progressTimeoutMs: 5_000 }).run();
    h.handle({ type: 'reader', paused: true }).queue('s1', 'One.');
    expect(watchdogs(h.port.take())).toEqual([]);
    h.handle({ type: 'reader', paused: false });
    expect(watchdogs(h.port.take())).toEqual([`startTimer:${TimerId.progress}`]);
  });

  it('is cancelled once nothing is owed', () => {
    const h = harness({ progressTimeoutMs: 5_000 }).run();
    h.queue('s1', 'One.').speak('s1', 1, [1]);
    expect(watchdogs(h.port.take()).at(-1)).toBe(`cancelTimer:${TimerId.progress}`);
  });

  it('a recovery longer than maxResumeMs gives up with the last failure', () => {
    const h = interrupted('pcm', { maxResumeMs: 30_000 });
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true });
    expect(watchdogs(h.port.take())).toContain(`startTimer:${TimerId.resumeDeadline}`);
    h.handle({ type: 'timer', id: TimerId.resumeDeadline });
    const failed = emitted(h.port.take(), 'failed')[0]!.error;
    expect(failed).toBeInstanceOf(ResumeError);
    expect(failed.code).toBe(ResumeErrorCode.retriesExhausted);
    expect(failed.message).toContain('30000 ms');
  });
});
