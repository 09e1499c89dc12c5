import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { StdoutSink } from '../../src/sinks/stdout.js';
import { collect } from './audio-fixtures.js';

describe('StdoutSink', () => {
  it('copies the bytes to its output without ending it', async () => {
    const output = new PassThrough();
    const received = collect(output);
    const sink = new StdoutSink({ output });
    sink.write(Buffer.from('abc'));
    sink.end(Buffer.from('def'));
    const result = await sink.done;
    expect(result).toEqual({ kind: 'stdout', bytesIn: 6, readerClosed: false });
    expect(output.writableEnded).toBe(false);
    output.end();
    expect((await received).toString()).toBe('abcdef');
  });

  it('ends quietly when the reader goes away (EPIPE) and drops the rest', async () => {
    // A real pipe whose reader exits after 10 bytes, like `voxpipe say --out - | head -c 10`.
    const reader = spawn('head', ['-c', '10'], { stdio: ['pipe', 'ignore', 'ignore'] });
    const sink = new StdoutSink({ output: reader.stdin });
    await new Promise<void>((resolve) => sink.write(Buffer.alloc(10), () => resolve()));
    await once(reader, 'exit');
    for (let i = 0; i < 20; i++) sink.write(Buffer.alloc(65_536));
    sink.end();
    const result = await sink.done;
    expect(result.readerClosed).toBe(true);
    expect(result.bytesIn).toBe(10 + 20 * 65_536);
  });

  it('fails on other output errors', async () => {
    const output = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('disk on fire'), { code: 'EIO' }));
      },
    });
    const sink = new StdoutSink({ output });
    sink.end(Buffer.from('x'));
    await expect(sink.done).rejects.toMatchObject({ code: 'sink_failed' });
  });
});
