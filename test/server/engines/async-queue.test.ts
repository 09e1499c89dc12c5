import { describe, expect, it } from 'vitest';
import { AsyncQueue } from '../../../src/server/engines/async-queue.js';

async function drain<T>(queue: AsyncQueue<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of queue) items.push(item);
  return items;
}

describe('AsyncQueue', () => {
  it('delivers items pushed before and while the consumer waits, then ends', async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    const result = drain(queue);
    await Promise.resolve();
    queue.push(2);
    queue.push(3);
    queue.end();
    queue.push(4); // after end: dropped
    expect(await result).toEqual([1, 2, 3]);
  });

  it('fails a waiting consumer and refuses later items', async () => {
    const queue = new AsyncQueue<number>();
    const result = drain(queue);
    queue.fail(new Error('boom'));
    await expect(result).rejects.toThrow('boom');
    expect(queue.settled).toBe(true);
  });

  it('settles when the consumer stops early', async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    queue.push(2);
    for await (const _ of queue) break;
    expect(queue.settled).toBe(true);
  });
});
