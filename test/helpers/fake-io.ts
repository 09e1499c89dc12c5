/** An in-memory Io for CLI tests: captured stdout/stderr, a given stdin and env. */
import { PassThrough, Readable, Writable } from 'node:stream';
import type { Io } from '../../src/cli/io.js';

export interface FakeIo extends Io {
  out(): string;
  outBytes(): Buffer;
  err(): string;
}

export function fakeIo(env: NodeJS.ProcessEnv = {}, stdinText?: string | Readable): FakeIo {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = new Writable({ write(c, _e, cb) { out.push(Buffer.from(c)); cb(); } });
  const stderr = new Writable({ write(c, _e, cb) { err.push(Buffer.from(c)); cb(); } });
  let stdin: Readable & { isTTY?: boolean };
  if (stdinText instanceof Readable) stdin = stdinText;
  else if (stdinText === undefined) {
    stdin = new PassThrough();
    (stdin as { isTTY?: boolean }).isTTY = true;
  } else stdin = Readable.from([stdinText]);
  return {
    stdout,
    stderr,
    stdin,
    env,
    out: () => Buffer.concat(out).toString('utf8'),
    outBytes: () => Buffer.concat(out),
    err: () => Buffer.concat(err).toString('utf8'),
  };
}
