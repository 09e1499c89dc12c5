import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { defaultPartialPolicy, PartialSegmentPolicy, splice } from '../src/splice.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('splice: one rule for a segment generated again (reliable machine and SpeechStream)', () => {
  it('continue: releases only what lies beyond what the listener has, to the byte', () => {
    expect([...splice({ emitted: 3, received: 0 }, bytes(0, 1, 2, 3, 4), 'continue').data]).toEqual([3, 4]);
    expect([...splice({ emitted: 3, received: 2 }, bytes(2, 3, 4), 'continue').data]).toEqual([3, 4]);
    expect(splice({ emitted: 5, received: 0 }, bytes(0, 1, 2), 'continue').data.byteLength).toBe(0);
    expect([...splice({ emitted: 0, received: 0 }, bytes(9), 'continue').data]).toEqual([9]);
    // 6 heard bytes of 4-byte frames: the listener holds half of the second
    // frame, so the next byte it needs is byte 6 (not 4 again: that repeated
    // two bytes and shifted every sample after them; drawn seed 885eff6e).
    expect([...splice({ emitted: 6, received: 0 }, bytes(0, 1, 2, 3, 4, 5, 6, 7), 'continue').data]).toEqual([6, 7]);
    expect(splice({ emitted: 3, received: 0 }, bytes(1, 2), 'continue').restart).toBeUndefined();
  });

  it('restart: the first payload of a new attempt announces the bytes heard before, then everything is released again', () => {
    const first = splice({ emitted: 7, received: 0 }, bytes(0, 1), 'restart');
    expect(first.restart).toEqual({ droppedBytes: 7 });
    expect([...first.data]).toEqual([0, 1]);
    expect(splice({ emitted: 7, received: 2 }, bytes(2), 'restart').restart).toBeUndefined();
    expect(splice({ emitted: 0, received: 0 }, bytes(2), 'restart').restart).toBeUndefined();
    expect(splice({ emitted: 7, received: 0 }, bytes(), 'restart').restart).toBeUndefined();
  });

  it('keeps a Buffer a Buffer', () => {
    expect(Buffer.isBuffer(splice({ emitted: 1, received: 0 }, Buffer.from([1, 2]), 'continue').data)).toBe(true);
  });

  it('continue: a cut-off attempt followed by a whole new one, in any chunking, yields the segment exactly once', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 20 }), (segment, cutAt, sizes) => {
        const heard = cutAt % (segment.length + 1);
        let emitted = heard;
        const out: number[] = [...segment.subarray(0, heard)];
        let received = 0;
        for (let i = 0, at = 0; at < segment.length; i++) {
          const size = sizes[i % sizes.length]!;
          const payload = segment.subarray(at, at + size);
          const cut = splice({ emitted, received }, payload, 'continue');
          received += payload.length;
          emitted += cut.data.length;
          out.push(...cut.data);
          at += size;
        }
        expect(out).toEqual([...segment]);
      }),
    );
  });

  it('the default policy: continue for pcm and wav, restart for mp3 and opus', () => {
    expect(defaultPartialPolicy('pcm')).toBe(PartialSegmentPolicy.continue);
    expect(defaultPartialPolicy('wav')).toBe(PartialSegmentPolicy.continue);
    expect(defaultPartialPolicy('mp3')).toBe(PartialSegmentPolicy.restart);
    expect(defaultPartialPolicy('opus')).toBe(PartialSegmentPolicy.restart);
  });
});
