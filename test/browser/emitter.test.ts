/**
 * The browser's emitter (src/browser/emitter.ts) keeps eventemitter3's
 * semantics for the API `BrowserSpeech` offers: each case runs the same
 * steps on both and compares what the listeners saw.
 */
import { EventEmitter } from 'eventemitter3';
import { describe, expect, it } from 'vitest';
import { Emitter } from '../../src/browser/emitter.js';

interface Events {
  a: [number];
  b: [string, number];
}

/** What either emitter exposes of the shared API. */
interface Shared {
  on(event: 'a' | 'b', fn: (...args: never[]) => void): unknown;
  once(event: 'a' | 'b', fn: (...args: never[]) => void): unknown;
  off(event: 'a' | 'b', fn?: (...args: never[]) => void): unknown;
  removeAllListeners(event?: 'a' | 'b'): unknown;
  emit(event: 'a' | 'b', ...args: unknown[]): boolean;
  listenerCount(event: 'a' | 'b'): number;
}

function both(steps: (e: Shared, log: unknown[]) => void): void {
  const ours: unknown[] = [];
  const theirs: unknown[] = [];
  steps(new Emitter<Events>() as unknown as Shared, ours);
  steps(new EventEmitter<Events>() as unknown as Shared, theirs);
  expect(ours).toEqual(theirs);
  expect(ours.length).toBeGreaterThan(0);
}

describe('the browser emitter behaves as eventemitter3', () => {
  it('listeners run in order with the arguments and the emitter as this; emit says whether any ran', () => {
    both((e, log) => {
      log.push(e.emit('a', 1));
      e.on('a', (n: never) => log.push(['first', n]));
      e.on('a', function (this: unknown, n: never) {
        log.push(['second', n, this === e]);
      });
      e.on('b', (s: never, n: never) => log.push(['b', s, n]));
      log.push(e.emit('a', 2), e.emit('b', 'x', 3), e.listenerCount('a'), e.listenerCount('b'));
    });
  });

  it('once runs one time, and is removed before it runs (an emit inside it does not reach it)', () => {
    both((e, log) => {
      e.once('a', (n: never) => {
        log.push(['once', n]);
        e.emit('a', 99);
      });
      e.on('a', (n: never) => log.push(['on', n]));
      e.emit('a', 1);
      e.emit('a', 2);
      log.push(e.listenerCount('a'));
    });
  });

  it('off removes every registration of a listener, or all of an event; removeAllListeners clears', () => {
    both((e, log) => {
      const f = (n: never) => log.push(['f', n]);
      const g = (n: never) => log.push(['g', n]);
      e.on('a', f);
      e.on('a', g);
      e.on('a', f);
      e.off('a', f);
      e.emit('a', 1);
      log.push(e.listenerCount('a'));
      e.off('a');
      log.push(e.emit('a', 2), e.listenerCount('a'));
      e.on('a', f);
      e.on('b', g);
      e.removeAllListeners();
      log.push(e.emit('a', 3), e.emit('b', 'y', 4));
    });
  });

  it('an emit under way calls the listeners registered when it began', () => {
    both((e, log) => {
      const late = (n: never) => log.push(['late', n]);
      const second = (n: never) => log.push(['second', n]);
      e.on('a', (n: never) => {
        log.push(['first', n]);
        e.on('a', late);
        e.off('a', second);
      });
      e.on('a', second);
      e.emit('a', 1);
      e.emit('a', 2);
    });
  });
});
