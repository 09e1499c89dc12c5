import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AudioIncompleteError } from '../src/errors.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../src/sinks/wav-header.js';
import { AudioLedger, defaultPartialPolicy, expectedAudioBytes, PartialSegmentPolicy, shortOf, splice, SpliceLedger } from '../src/splice.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('splice: one rule for a segment generated again (reliable machine and SpeechStream)', () => {
  it('continue: releases only what lies beyond what the listener has, to the byte', () => {
    expect([...splice({ emitted: 3, received: 0 }, bytes(0, 1, 2, 3, 4), 'continue').data]).toEqual([3, 4]);
    expect([...splice({ emitted: 3, received: 2 }, bytes(2, 3, 4), 'continue').data]).toEqual([3, 4]);
    expect(splice({ emitted: 5, received: 0 }, bytes(0, 1, 2), 'continue').data.byteLength).toBe(0);
    expect([...splice({ emitted: 0, received: 0 }, bytes(9), 'continue').data]).toEqual([9]);
    // 6 heard bytes of 4-byte frames: the listener holds half of the second
    // frame, so the next byte it needs is byte 6 (not 4 again: that would
    // repeat two bytes and shift every sample after them).
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

describe('AudioLedger: raw bytes tagged with attempt and offset', () => {
  const pcm = (segmentId: string, attempt: number | undefined, offset: number | undefined, ...values: number[]) => ({
    data: Buffer.from(values),
    segmentId,
    format: 'pcm' as const,
    sampleRate: 24_000,
    channels: 1,
    bitDepth: 16,
    ...(attempt !== undefined && { attempt }),
    ...(offset !== undefined && { offset }),
  });

  it('a new tag is a new attempt, even after untagged audio: continue skips what the listener has', () => {
    const ledger = new AudioLedger();
    const out: number[] = [];
    for (const c of [pcm('s', undefined, undefined, 0, 1, 2), pcm('s', 7, 0, 0, 1), pcm('s', 7, 2, 2, 3, 4)]) out.push(...ledger.accept(c).chunk.data);
    expect(out).toEqual([0, 1, 2, 3, 4]);
    expect(ledger.segment('s').audioBytes).toBe(5);
  });

  it('restart (mp3): a new tag sends the segment whole again after a discontinuity naming the bytes heard', () => {
    const ledger = new AudioLedger();
    const mp3 = (attempt: number, offset: number, ...values: number[]) => ({ ...pcm('s', attempt, offset, ...values), format: 'mp3' as const });
    expect(ledger.accept(mp3(1, 0, 1, 2, 3)).restart).toBeUndefined();
    const again = ledger.accept(mp3(2, 0, 1, 2));
    expect(again.restart).toEqual({ droppedBytes: 3 });
    expect([...again.chunk.data, ...ledger.accept(mp3(2, 2, 3, 4, 5)).chunk.data]).toEqual([1, 2, 3, 4, 5]);
    expect(ledger.segment('s').emittedBytes).toBe(8);
  });

  it('an offset behind what the attempt brought is a repeat: its overlap is dropped and counted', () => {
    const ledger = new AudioLedger();
    const out: number[] = [];
    for (const c of [pcm('s', 1, 0, 0, 1, 2, 3), pcm('s', 1, 2, 2, 3, 4, 5), pcm('s', 1, 0, 0, 1)]) out.push(...ledger.accept(c).chunk.data);
    expect(out).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ledger.segment('s').repeatedBytes).toBe(4);
  });

  it('an offset beyond what the attempt brought is a hole: audio_incomplete naming the segment and the missing range', () => {
    const ledger = new AudioLedger();
    ledger.accept(pcm('s', 1, 0, 0, 1, 2, 3));
    let error: unknown;
    try {
      ledger.accept(pcm('s', 1, 6, 6, 7));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AudioIncompleteError);
    expect((error as AudioIncompleteError).segmentId).toBe('s');
    expect((error as AudioIncompleteError).missing).toEqual({ from: 4, to: 6 });
  });

  it('wav: the stream keeps the first header only; a header a later attempt brings counts in its offsets but is not audio', () => {
    const header = buildWavHeader({ sampleRate: 24_000, channels: 1, bitDepth: 16 }, WAV_UNKNOWN_SIZE);
    const wav = (attempt: number, offset: number, data: Buffer) => ({ data, segmentId: 's', attempt, offset, format: 'wav' as const, sampleRate: 24_000, channels: 1, bitDepth: 16 });
    const ledger = new AudioLedger();
    const out: Buffer[] = [];
    out.push(ledger.accept(wav(1, 0, Buffer.concat([header, Buffer.from([1, 2, 3, 4])]))).chunk.data);
    // A failover: the new attempt brings its own header, then the whole segment.
    out.push(ledger.accept(wav(2, 0, Buffer.concat([header, Buffer.from([1, 2])]))).chunk.data);
    out.push(ledger.accept(wav(2, header.length + 2, Buffer.from([3, 4, 5, 6]))).chunk.data);
    expect(Buffer.concat(out)).toEqual(Buffer.concat([header, Buffer.from([1, 2, 3, 4, 5, 6])]));
    expect(ledger.segment('s').audioBytes).toBe(6);
  });

  it('the layout: AudioLedger takes it from the first audio (an mp3 frame header read) and refuses PCM that changes it; SpliceLedger (the browser\'s) splices alike and decides none', () => {
    const mp3 = { data: Buffer.from([0xff, 0xfb, 0x90, 0xc4, 0, 0]), segmentId: 'm', format: 'mp3' as const, sampleRate: 24_000, channels: 2, bitDepth: 16 };
    expect(new AudioLedger().accept(mp3).layout).toEqual({ sampleRate: 44_100, channels: 1, bitDepth: 16 });
    const full = new AudioLedger();
    const plain = new SpliceLedger();
    expect(full.accept(pcm('s', 1, 0, 1, 2)).layout).toEqual({ sampleRate: 24_000, channels: 1, bitDepth: 16 });
    expect(plain.accept(pcm('s', 1, 0, 1, 2)).layout).toBeUndefined();
    const other = { ...pcm('t', 1, 0, 3, 4), sampleRate: 48_000 };
    expect(() => full.accept(other)).toThrow(expect.objectContaining({ code: 'pcm_layout_changed' }));
    expect([...plain.accept(other).chunk.data]).toEqual([3, 4]);
    // The same splice: a resumed attempt releases only what the listener lacks.
    expect([...plain.accept(pcm('s', 2, 0, 1, 2, 5)).chunk.data]).toEqual([5]);
    expect(new AudioLedger({ layout: false }).accept(other).layout).toBeUndefined();
  });

  it('any cut, any chunking, any number of tagged attempts: the segment exactly once (continue)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.array(fc.nat(), { minLength: 0, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 10 }), (segment, cuts, sizes) => {
        const ledger = new AudioLedger();
        const out: number[] = [];
        let tag = 100;
        // Each attempt but the last is cut off somewhere; the last one runs to the end.
        for (const end of [...cuts.map((c) => c % (segment.length + 1)), segment.length]) {
          tag++;
          for (let i = 0, at = 0; at < end; i++) {
            const size = Math.min(sizes[i % sizes.length]!, end - at);
            out.push(...ledger.accept({ ...pcm('s', tag, at), data: Buffer.from(segment.subarray(at, at + size)) }).chunk.data);
            at += size;
          }
        }
        expect(out).toEqual([...segment]);
      }),
    );
  });
});

describe('the one count of a segment: where an attempt stands, the header rule, a short segment', () => {
  const wav = (...audio: number[]) => Uint8Array.from([...buildWavHeader({ sampleRate: 24_000, channels: 1, bitDepth: 16 }, WAV_UNKNOWN_SIZE), ...audio]);
  const chunk = (data: Uint8Array, attempt: number, offset?: number) => ({ data, segmentId: 's', attempt, ...(offset !== undefined && { offset }), format: 'wav' as const, sampleRate: 24_000, channels: 1, bitDepth: 16 });

  it('nextOffset: the raw bytes the current attempt brought, its header included; a new attempt starts at 0', () => {
    const ledger = new SpliceLedger();
    ledger.accept(chunk(wav(1, 2, 3, 4), 1, 0));
    expect(ledger.segment('s').nextOffset).toBe(48);
    ledger.accept(chunk(bytes(5, 6), 1, 48));
    expect(ledger.segment('s').nextOffset).toBe(50);
    ledger.accept(chunk(wav(1, 2), 2, 0));
    expect(ledger.segment('s')).toMatchObject({ nextOffset: 46, attemptBytes: 2, headerBytes: 44 });
  });

  it('expectedAudioBytes: a stated count with the header or without it, less the header, never below 0', () => {
    expect(expectedAudioBytes(48, 44)).toBe(4);
    expect(expectedAudioBytes(48, 0)).toBe(48);
    expect(expectedAudioBytes(4, 44)).toBe(0);
  });

  it('shortOf: the audio had (or, when more, what the attempt brought) against the audio expected', () => {
    expect(shortOf({ audioBytes: 4 }, 4)).toBeUndefined();
    expect(shortOf({ audioBytes: 3 }, 4)).toBe(3);
    expect(shortOf({ audioBytes: 3 }, 4, 4)).toBeUndefined();
    expect(shortOf({ audioBytes: 3 }, undefined)).toBeUndefined();
    const ledger = new SpliceLedger();
    ledger.accept(chunk(wav(1, 2), 1, 0));
    expect(ledger.segment('s').shortfall(4, 'r')).toMatchObject({ code: 'audio_incomplete', expectedBytes: 4, receivedBytes: 2 });
  });
});
