/**
 * The reliable machine's transitions as one table: every phase
 * crossed with every kind of input, the phase it moves to and the effects it
 * asks of its port. The table is written to `machine-transitions.md` next to
 * this file and compared on every run, so a change of behaviour shows up as
 * a reviewable diff of that document. Exhaustive by construction: a new
 * phase or input type fails the checks below until it has a row.
 */
import { describe, expect, it } from 'vitest';
import { AbortError, ConnectionError, PermissionDeniedError } from '../../src/errors.js';
import { Phase } from '../../src/realtime/reliable/machine.js';
import { TimerId, type MachineInput } from '../../src/realtime/reliable/types.js';
import { decideRecovery } from '../../src/realtime/reliable/recovery.js';
import { ev, harness, status } from './machine-harness.js';

type Harness = ReturnType<typeof harness>;

/** One input of each type. */
const INPUTS = {
  open: { type: 'open' },
  'transport-opened': { type: 'transport-opened' },
  'transport-failed': { type: 'transport-failed', error: new ConnectionError('connection_failed', 'refused', { retryable: true }) },
  frame: { type: 'frame', event: ev.ready() },
  'transport-closed': { type: 'transport-closed', code: 1012, reason: 'restart', wasClean: true },
  timer: { type: 'timer', id: TimerId.backoff },
  'segment-queued': { type: 'segment-queued', segmentId: 's9', text: 'More.' },
  'stop-requested': { type: 'stop-requested' },
  'abort-requested': { type: 'abort-requested', reason: new AbortError('user abort') },
  'status-fetched': { type: 'status-fetched', result: { kind: 'found', status: status('failed_retryable') } },
  'audio-fetched': { type: 'audio-fetched', segmentId: 's1', result: { kind: 'ok', data: new Uint8Array([9, 9]) } },
  reader: { type: 'reader', paused: true },
  // Every input type has a row: `satisfies` over the mapped type makes a new
  // MachineInput type a compile error here (npm run typecheck covers test/).
} satisfies { [K in MachineInput['type']]: Extract<MachineInput, { type: K }> };

/** A machine driven into each phase (with one queued segment where it matters). */
const RECIPES: Record<Phase, () => Harness> = {
  [Phase.idle]: () => harness(),
  [Phase.connecting]: () => harness().handle({ type: 'open' }),
  [Phase.starting]: () => harness().handle({ type: 'open' }).handle({ type: 'transport-opened' }),
  [Phase.running]: () => harness().run().queue('s1', 'One.'),
  [Phase.stopping]: () => harness().run().handle({ type: 'stop-requested' }),
  [Phase.waiting]: () => harness().run().queue('s1', 'One.').handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }),
  [Phase.fetchingStatus]: () => RECIPES[Phase.waiting]().handle({ type: 'timer', id: TimerId.backoff }),
  [Phase.recovering]: () => {
    const h = harness().run().queue('s1', 'One.').frame(ev.ack(1)).frame(ev.accepted('s1')).frame(ev.audio('s1', [1]));
    h.handle({ type: 'transport-closed', code: 1012, reason: '', wasClean: true }).handle({ type: 'timer', id: TimerId.backoff });
    return h.handle({ type: 'status-fetched', result: { kind: 'found', status: status('completed', [{ segment_id: 's1', index: 0, state: 'completed', characters: 4, units: 4, audio_bytes: 2, audio_url: '/a/s1' }]) } });
  },
  [Phase.completedRemotely]: () => {
    const h = RECIPES[Phase.recovering]();
    return h.handle({ type: 'audio-fetched', segmentId: 's1', result: { kind: 'ok', data: new Uint8Array([1, 2]) } });
  },
  [Phase.done]: () => harness().run().handle({ type: 'stop-requested' }).frame(ev.finish()),
  [Phase.failed]: () => harness().run().frame(ev.error('voice_not_found', false)),
  [Phase.aborted]: () => harness().run().handle({ type: 'abort-requested', reason: new AbortError('user abort') }),
};

/** The effects of one step, compact: frames sent, port calls, machine events. */
function effectsOf(h: Harness): string {
  const out: string[] = [];
  for (const c of h.port.take()) {
    switch (c.call) {
      case 'sendFrame':
        out.push(`send ${c.event.event}`);
        break;
      case 'emit':
        if (c.event.type !== 'mark') out.push(c.event.type === 'failed' ? `failed(${c.event.error.code})` : c.event.type);
        break;
      case 'emitAudio':
        out.push('audio');
        break;
      case 'listen':
      case 'discontinuity':
        break; // the listener's ledger, not the machine
      case 'startTimer':
      case 'cancelTimer':
        out.push(`${c.call === 'startTimer' ? '+' : '-'}${c.id}`);
        break;
      default:
        out.push(c.call);
    }
  }
  return out.join(', ') || '—';
}

function table(): string {
  const rows = ['| phase | input | next phase | effects |', '|---|---|---|---|'];
  for (const phase of Object.values(Phase)) {
    for (const [name, input] of Object.entries(INPUTS)) {
      const h = RECIPES[phase]();
      h.port.take();
      h.handle(input as MachineInput);
      rows.push(`| ${phase} | ${name} | ${h.machine.phase} | ${effectsOf(h)} |`);
    }
  }
  return `# Reliable machine: transitions\n\nGenerated by test/realtime/machine-transitions.test.ts (every phase x every input type).\n\n${rows.join('\n')}\n`;
}

describe('transition table', () => {
  it.each(Object.values(Phase))('the recipe for %s reaches it', (phase) => {
    expect(RECIPES[phase]().machine.phase).toBe(phase);
  });

  it('every phase x every input type, as documented in machine-transitions.md', async () => {
    const doc = table();
    // One row per phase x input type, each naming a real phase it moved to.
    const rows = doc.split('\n').filter((line) => /^\| \w/.test(line) && !line.startsWith('| phase'));
    expect(rows).toHaveLength(Object.values(Phase).length * Object.keys(INPUTS).length);
    for (const row of rows) expect(Object.values(Phase)).toContain(row.split('|')[3]!.trim());
    await expect(doc).toMatchFileSnapshot('./machine-transitions.md');
  });

  it('terminal phases ignore every input', () => {
    for (const phase of [Phase.done, Phase.failed, Phase.aborted]) {
      for (const input of Object.values(INPUTS)) {
        const h = RECIPES[phase]();
        h.port.take();
        h.handle(input as MachineInput);
        expect(h.machine.phase).toBe(phase);
        expect(h.port.take()).toEqual([]);
      }
    }
  });
});

describe('decideRecovery (pure)', () => {
  const pending = [
    { segmentId: 'a', everFlushed: true },
    { segmentId: 'b', everFlushed: true },
    { segmentId: 'c', everFlushed: false },
  ];
  const entry = (id: string, state: 'completed' | 'accepted', url?: string) => ({ segment_id: id, index: 0, state, characters: 1, units: 3, audio_bytes: 2, ...(url && { audio_url: url }) });

  it('failed_retryable: settles only the leading run of completed segments with audio, then reopens', () => {
    const action = decideRecovery({ kind: 'found', status: status('failed_retryable', [entry('a', 'completed', '/a'), entry('b', 'accepted'), entry('c', 'completed', '/c')]) }, pending, 'r');
    expect(action).toEqual({ kind: 'recover', after: 'reopen', items: [{ segmentId: 'a', url: '/a', units: 3 }] });
  });

  it('completed: a pending segment never sent cannot be recovered', () => {
    const action = decideRecovery({ kind: 'found', status: status('completed', [entry('a', 'completed', '/a'), entry('b', 'completed')]) }, pending, 'r');
    expect(action).toMatchObject({ kind: 'fail', error: { code: 'request_completed' } });
  });

  it('completed: every sent segment settled, audio where offered', () => {
    const action = decideRecovery({ kind: 'found', status: status('completed', [entry('a', 'completed', '/a'), entry('b', 'completed')]) }, pending.slice(0, 2), 'r');
    expect(action).toEqual({ kind: 'recover', after: 'finish', items: [{ segmentId: 'a', url: '/a', units: 3, audioBytes: 2 }, { segmentId: 'b', url: undefined, units: 3, audioBytes: 2 }] });
  });

  it.each([
    ['running', { kind: 'found', status: status('running') }, { kind: 'poll' }],
    ['not found', { kind: 'not-found' }, { kind: 'restart' }],
    ['failed_terminal', { kind: 'found', status: status('failed_terminal') }, { kind: 'fail', error: expect.objectContaining({ code: 'request_failed_terminal' }) }],
    ['a state not in the spec', { kind: 'found', status: status('paused') }, { kind: 'fail', error: expect.objectContaining({ code: 'request_failed_terminal' }) }],
    ['a retryable read error', { kind: 'error', error: new ConnectionError('connection_failed', 'x', { retryable: true }) }, { kind: 'retry', error: expect.objectContaining({ code: 'connection_failed' }) }],
    ['a final read error', { kind: 'error', error: new PermissionDeniedError(403, 'forbidden', 'x') }, { kind: 'fail', error: expect.objectContaining({ code: 'forbidden' }) }],
  ] as const)('%s', (_name, result, expected) => {
    expect(decideRecovery(result as Parameters<typeof decideRecovery>[0], pending, 'r')).toEqual(expected);
  });
});
