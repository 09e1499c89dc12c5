/**
 * A hostile server's event sequences into the client: the
 * reliable machine gets generated runs of server events in any order (audio
 * for unknown segments, sequences repeated, out of order or gapped,
 * completions before audio, errors retryable or not, `finish` at any time,
 * closes with any code, status answers of every state, timers firing) mixed
 * with the user's own inputs. Properties: the machine never throws; audio
 * leaves it in strictly increasing `sequence`; nothing is released after it
 * finished or failed; a failure is a typed `VoxpipeError`.
 * Seeded (VOXPIPE_FUZZ_SEED replays); 2,000 runs in `npm test`.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { VoxpipeError } from '../../src/errors.js';
import { encodeFrame, readServerFrame } from '../../src/protocol/codec.js';
import { TimerId, type MachineInput } from '../../src/realtime/reliable/types.js';
import { ev, harness, status } from '../realtime/machine-harness.js';

const SEED = Number(process.env['VOXPIPE_FUZZ_SEED'] ?? 424242);
const RUNS = Number(process.env['VOXPIPE_MACHINE_FUZZ_RUNS'] ?? 2_000);
const SEGMENTS = ['a', 'b', 'c'];

const segment = fc.oneof({ weight: 5, arbitrary: fc.constant('a') }, { weight: 2, arbitrary: fc.constantFrom(...SEGMENTS, 'unknown') });
const bytes = fc.uint8Array({ minLength: 0, maxLength: 8 }).map((a) => Array.from(a.length % 2 ? a.subarray(1) : a));
const stateName = fc.constantFrom('running', 'completed', 'failed_retryable', 'failed_terminal', 'nonsense');
const manifest = fc.array(
  fc.record({ segment_id: segment, index: fc.nat(3), characters: fc.nat(9), audio_bytes: fc.nat(20), state: fc.constantFrom('completed' as const, 'failed' as const, 'accepted' as const), units: fc.nat(5), audio_url: fc.option(fc.constant('/audio/x'), { nil: undefined }) }),
  { maxLength: 3 },
);

const input: fc.Arbitrary<MachineInput> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(segment, bytes, fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 8 }) }, { weight: 1, arbitrary: fc.integer({ min: -1, max: 40 }) })).map(([s, b, q]) => ({ type: 'frame', event: ev.audio(s, b, q) }) as MachineInput) },
  { weight: 2, arbitrary: fc.integer({ min: -1, max: 8 }).map((q) => ({ type: 'frame', event: ev.ack(q) }) as MachineInput) },
  { weight: 2, arbitrary: segment.map((s) => ({ type: 'frame', event: ev.accepted(s) }) as MachineInput) },
  { weight: 3, arbitrary: fc.tuple(segment, fc.nat(4), fc.nat(20)).map(([s, u, b]) => ({ type: 'frame', event: ev.completed(s, u, b) }) as MachineInput) },
  { weight: 1, arbitrary: fc.tuple(segment, fc.nat(4)).map(([s, u]) => ({ type: 'frame', event: ev.usage(s, u) }) as MachineInput) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('provider_unavailable', 'generation_failed', 'invalid_state', 'quota_exceeded', ''), fc.boolean(), fc.boolean()).map(([c, r, t]) => ({ type: 'frame', event: ev.error(c, r, t) }) as MachineInput) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('completed', 'error', 'server_draining', 'timeout', 'weird'), fc.nat(9)).map(([r, u]) => ({ type: 'frame', event: ev.finish(r, u) }) as MachineInput) },
  { weight: 1, arbitrary: stateName.map((s) => ({ type: 'frame', event: ev.requestStatus(s) }) as MachineInput) },
  { weight: 1, arbitrary: fc.constantFrom('ready', 'warning').map((k) => ({ type: 'frame', event: k === 'ready' ? ev.ready() : ev.warning('w') }) as MachineInput) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(1000, 1001, 1006, 1011, 1012, 1013, 4000), fc.boolean()).map(([code, wasClean]) => ({ type: 'transport-closed', code, reason: '', wasClean }) as MachineInput) },
  { weight: 1, arbitrary: fc.constant({ type: 'transport-opened' } as MachineInput) },
  { weight: 1, arbitrary: fc.constant({ type: 'transport-failed', error: new VoxpipeError('connection_failed', 'refused', { retryable: true }) } as MachineInput) },
  { weight: 2, arbitrary: fc.constantFrom(...Object.values(TimerId)).map((id) => ({ type: 'timer', id }) as MachineInput) },
  { weight: 2, arbitrary: fc.tuple(stateName, manifest).map(([s, m]) => ({ type: 'status-fetched', result: { kind: 'found', status: status(s, m) } }) as MachineInput) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'status-fetched', result: { kind: 'not-found' } } as MachineInput) },
  { weight: 1, arbitrary: fc.tuple(segment, bytes).map(([s, b]) => ({ type: 'audio-fetched', segmentId: s, result: { kind: 'ok', data: Uint8Array.from(b) } }) as MachineInput) },
  { weight: 1, arbitrary: fc.constantFrom('a', 'b', 'c').map((s) => ({ type: 'segment-queued', segmentId: s, text: `Text ${s}.` }) as MachineInput) },
  { weight: 1, arbitrary: fc.constant({ type: 'stop-requested' } as MachineInput) },
  { weight: 1, arbitrary: fc.boolean().map((paused) => ({ type: 'reader', paused }) as MachineInput) },
);

it(`hostile event sequences into the reliable machine (${RUNS} runs, seed ${SEED}): no throw, audio in order, nothing after the end, typed failures`, () => {
  const outcomes = { finished: 0, failed: 0, open: 0, audioFrames: 0 };
  const codes = new Map<string, number>();
  fc.assert(
    fc.property(fc.array(input, { minLength: 1, maxLength: 40 }), (inputs) => {
      const h = harness({ backoff: { baseMs: 1, maxMs: 2 } });
      h.run();
      h.queue('a', 'Text a.');
      // The server took segment a: its audio may flow (or not: the inputs decide).
      h.frame(ev.ack(1)).frame(ev.accepted('a'));
      h.port.take();
      let ended = false;
      for (const i of inputs) {
        // Queuing a segment id twice is the caller's bug (the session refuses it before the machine): not a server input.
        if (i.type === 'segment-queued' && h.machine.has(i.segmentId)) continue;
        // Server events go through the wire as the connection reads them: encoded, then read tolerantly.
        let next: MachineInput | undefined = i;
        if (i.type === 'frame') {
          const read = readServerFrame(encodeFrame(i.event));
          next = read.kind === 'event' ? { type: 'frame', event: read.event } : read.kind === 'unusable' ? { type: 'transport-closed', code: 1002, reason: read.error.code, wasClean: false, error: read.error } : undefined;
        }
        if (next === undefined) continue;
        const step = next;
        expect(() => h.handle(step)).not.toThrow();
        for (const call of h.port.take()) {
          if (call.call === 'emitAudio') {
            expect(ended).toBe(false);
            // Placed where the ledger has the attempt up to: never a repeat (a hole would have thrown).
            expect(h.port.ledger.segment(call.audio.segmentId).repeatedBytes).toBe(0);
            outcomes.audioFrames++;
          }
          if (call.call === 'emit' && call.event.type === 'failed') {
            expect(call.event.error).toBeInstanceOf(VoxpipeError);
            expect(call.event.error.code).toMatch(/^[a-z0-9_]+$/);
            codes.set(call.event.error.code, (codes.get(call.event.error.code) ?? 0) + 1);
            ended = true;
            outcomes.failed++;
          }
          if (call.call === 'emit' && call.event.type === 'finished') {
            ended = true;
            outcomes.finished++;
          }
        }
      }
      if (!ended) outcomes.open++;
    }),
    { seed: SEED, numRuns: RUNS },
  );
  console.log(`machine fuzz seed ${SEED}: ${RUNS} runs, finished ${outcomes.finished}, failed ${outcomes.failed} (${[...codes].map(([c, n]) => `${c} ${n}`).join(', ')}), still waiting ${outcomes.open}; ${outcomes.audioFrames} audio frames released, all in order`);
});
