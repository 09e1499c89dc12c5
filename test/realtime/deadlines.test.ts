/**
 * The deadlines both machines share (src/realtime/deadlines.ts): armed
 * timers as one number, stale fires ignored, and the progress watch in
 * slices with overload read from the server's other streams. No clock: the
 * timers are a recording port, fired by hand.
 */
import { describe, expect, it } from 'vitest';
import { OverloadWatch, PROGRESS_SLICES } from '../../src/realtime/budgets.js';
import { Deadlines, progressSliceMs, type TimerPort } from '../../src/realtime/deadlines.js';

type Id = 'start' | 'progress' | 'poll';
const TABLE: readonly Id[] = ['start', 'progress', 'poll'];

function recording(): TimerPort<Id> & { calls: string[] } {
  const calls: string[] = [];
  return { calls, startTimer: (id, ms) => calls.push(`+${id}:${ms}`), cancelTimer: (id) => calls.push(`-${id}`) };
}

describe('armed timers', () => {
  it('a cancel reaches the port only for an armed timer; a fire after a cancel is stale', () => {
    const port = recording();
    const d = new Deadlines(port, TABLE, 'progress');
    d.start('start', 10);
    d.cancel('poll');
    d.cancel('start');
    d.cancel('start');
    expect(port.calls).toEqual(['+start:10', '-start']);
    expect(d.fired('start')).toBe(false);
    d.start('poll', 5);
    expect(d.fired('poll')).toBe(true);
    expect(d.armed('poll')).toBe(false);
  });

  it('cancelAll cancels the armed ones, in the table order', () => {
    const port = recording();
    const d = new Deadlines(port, TABLE, 'progress');
    d.start('poll', 1);
    d.start('start', 2);
    port.calls.length = 0;
    d.cancelAll();
    expect(port.calls).toEqual(['-start', '-poll']);
  });
});

describe('the progress watch', () => {
  it('armed in slices while owed, kept while the budget is the same, afresh for another budget, cancelled when nothing is owed', () => {
    const port = recording();
    const d = new Deadlines(port, TABLE, 'progress');
    d.watch(true, 400);
    d.watch(true, 400);
    d.watch(true, 200);
    d.watch(false, 200);
    expect(port.calls).toEqual([`+progress:${progressSliceMs(400)}`, `+progress:${progressSliceMs(200)}`, '-progress']);
    expect(progressSliceMs(400)).toBe(400 / PROGRESS_SLICES);
    expect(progressSliceMs(1)).toBe(1);
  });

  it('stalls after PROGRESS_SLICES quiet slices in a row; progress in a slice starts the count again', () => {
    const d = new Deadlines(recording(), TABLE, 'progress');
    d.watch(true, 400);
    const slice = () => d.fired('progress') && d.sliceEnded();
    for (let i = 0; i < PROGRESS_SLICES - 1; i++) expect(slice()).toBe(false);
    d.progress();
    expect(slice()).toBe(false);
    for (let i = 0; i < PROGRESS_SLICES - 1; i++) expect(slice()).toBe(false);
    expect(slice()).toBe(true);
    expect(d.armed('progress')).toBe(false);
  });

  it('a slice in which another stream on the server progressed is busy, not quiet', () => {
    const activity = { progress: 0, frames: 0 };
    const d = new Deadlines(recording(), TABLE, 'progress', new OverloadWatch(activity));
    const other = new OverloadWatch(activity);
    d.watch(true, 400);
    for (let i = 0; i < PROGRESS_SLICES * 3; i++) {
      other.progress();
      expect(d.fired('progress') && d.sliceEnded()).toBe(false);
    }
    for (let i = 0; i < PROGRESS_SLICES - 1; i++) expect(d.fired('progress') && d.sliceEnded()).toBe(false);
    expect(d.fired('progress') && d.sliceEnded()).toBe(true);
  });

  it('its own progress counts for the server’s other streams', () => {
    const activity = { progress: 0, frames: 0 };
    const d = new Deadlines(recording(), TABLE, 'progress', new OverloadWatch(activity));
    d.progress();
    expect(activity.progress).toBe(1);
  });
});
