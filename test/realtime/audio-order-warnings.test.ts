/**
 * Ordered audio as both machines use it (`AudioOrder` with their port,
 * src/realtime/sequence-window.ts): frames back in sequence order, and what
 * was dropped or skipped said as warnings through the machine's port: a
 * repeat, a late frame, the first gap of the connection only.
 */
import { describe, expect, it } from 'vitest';
import { WarningCode } from '../../src/protocol/codes.js';
import type { AudioEvent } from '../../src/protocol/events.js';
import { AudioOrder } from '../../src/realtime/sequence-window.js';
import { ev } from './machine-harness.js';

function recording() {
  const warnings: string[] = [];
  return { warnings, emit: (e: { code: string }) => void warnings.push(e.code) };
}

const frame = (segmentId: string, sequence: number) => ev.audio(segmentId, [sequence], sequence) as AudioEvent;
const sequences = (frames: AudioEvent[]) => frames.map((f) => f.sequence);
const push = (audio: AudioOrder<AudioEvent>, f: AudioEvent) => audio.push(f.segment_id, f.sequence, f);

describe('AudioOrder with a port', () => {
  it('releases in order; a repeat and a late frame are dropped and said', () => {
    const port = recording();
    const audio = new AudioOrder<AudioEvent>(4, 1, port);
    expect(sequences(push(audio, frame('a', 2)).release)).toEqual([]);
    expect(sequences(push(audio, frame('a', 1)).release)).toEqual([1, 2]);
    expect(push(audio, frame('a', 2)).duplicate).toBe(true);
    expect(port.warnings).toEqual([WarningCode.audioRepeat]);
    push(audio, frame('a', 5));
    push(audio, frame('a', 6));
    push(audio, frame('a', 7));
    push(audio, frame('a', 8));
    push(audio, frame('a', 9)); // past the window: 3-4 given up, a gap
    expect(push(audio, frame('a', 3)).late).toBe(true);
    expect(port.warnings).toEqual([WarningCode.audioRepeat, WarningCode.audioSequenceGap, WarningCode.audioLate]);
  });

  it('a gap is said once a connection: later gaps are released past, not said again', () => {
    const port = recording();
    const audio = new AudioOrder<AudioEvent>(1, 1, port);
    push(audio, frame('a', 1));
    push(audio, frame('a', 3));
    expect(sequences(push(audio, frame('a', 4)).release)).toEqual([3, 4]);
    const later = push(audio, frame('a', 6));
    expect(later.gaps).toEqual([{ from: 5, to: 5 }]);
    expect(sequences(later.release)).toEqual([6]);
    expect(port.warnings).toEqual([WarningCode.audioSequenceGap]);
  });

  it('what a segment still holds at its end is released past the missing sequence, the gap said', () => {
    const port = recording();
    const audio = new AudioOrder<AudioEvent>(16, 1, port);
    push(audio, frame('a', 1));
    push(audio, frame('a', 2));
    push(audio, frame('a', 4));
    push(audio, frame('a', 7));
    expect(sequences(audio.drainSegment('a').release)).toEqual([4, 7]);
    expect(port.warnings).toEqual([WarningCode.audioSequenceGap]);
  });
});
