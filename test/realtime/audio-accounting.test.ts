/**
 * The ledger is the only count of a segment's audio, for both machines: the
 * same segment, stated the same way by the server, gives the same
 * `expectedBytes` (one header rule) and the same `audioBytes` (the ledger's)
 * in reliable and in simple mode.
 */
import { describe, expect, it } from 'vitest';
import { emitted, ev, harness, wavHeader } from './machine-harness.js';
import { simpleEmitted, simpleHarness } from './simple-machine-harness.js';

describe('one header rule for both modes', () => {
  const audio = [...wavHeader(), 1, 2, 3, 4];

  it.each([
    ['with the stream header', audio.length, 4],
    ['without it', 4, 0],
  ])('a wav segment whose server counts its bytes %s', (_name, stated, expected) => {
    const reliable = harness().run('wav');
    reliable.queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', audio, 1, 'wav')).frame(ev.completed('s1', 1, stated));
    const r = emitted(reliable.port.take(), 'segment-completed')[0]!.result;

    const simple = simpleHarness();
    simple.port.format = 'wav';
    simple.committed('One.').frame(ev.audio('srv-1', audio, 1, 'wav')).frame(ev.completed('srv-1', 1, stated)).frame(ev.finish('completed', 1));
    const s = simpleEmitted(simple.port.take(), 'segment-completed')[0]!.result;

    expect(r.expectedBytes).toBe(expected);
    expect(s.expectedBytes).toBe(expected);
    // What the listener got, as the ledger counts it (the request's first header included).
    expect(r.audioBytes).toBe(audio.length);
    expect(s.audioBytes).toBe(audio.length);
  });
});
