/**
 * Secret scan: everything a test file's process writes to
 * standard output or error (logs of the reference server, notes, warnings,
 * serialized errors a test prints) is checked for API keys. The keys of the
 * tests all start with `sk-`; the documented development key `sk-local-dev`
 * is public and allowed. A hit fails the file, naming where it was written.
 *
 * Every URL an HTTP server of the test process is asked for (the reference
 * server's routes, its WebSocket upgrades, the stand-ins tests start) is
 * checked the same way: a key in a URL ends up in access logs and proxies.
 */
import { Server } from 'node:http';
import { afterAll, expect } from 'vitest';

const KEY = /\bsk-(?!local-dev\b)[A-Za-z0-9._-]{4,}/g;
const hits: string[] = [];

for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
    for (const m of text.matchAll(KEY)) hits.push(`${stream === process.stdout ? 'stdout' : 'stderr'}: …${text.slice(Math.max(0, (m.index ?? 0) - 40), (m.index ?? 0) + 40)}…`);
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

const allowedUrls: RegExp[] = [];
/**
 * For a test file that puts a key in a URL on purpose (to show the server
 * refuses it there): URLs matching `pattern` are not counted.
 */
export function allowKeyInUrls(pattern: RegExp): void {
  allowedUrls.push(pattern);
}

const emit = Server.prototype.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
  if (event === 'request' || event === 'upgrade') {
    const url = String((args[0] as { url?: unknown } | undefined)?.url ?? '');
    let decoded = url;
    try {
      decoded = decodeURIComponent(url);
    } catch {
      // a malformed escape (the fuzzers send them): scan it as it came
    }
    if (allowedUrls.some((re) => re.test(decoded))) return emit.call(this, event, ...args);
    for (const m of decoded.matchAll(KEY)) hits.push(`URL of a ${String(event)}: …${decoded.slice(Math.max(0, (m.index ?? 0) - 40), (m.index ?? 0) + 40)}…`);
  }
  return emit.call(this, event, ...args);
} as typeof Server.prototype.emit;

afterAll(() => {
  expect(hits, 'an API key was written to the output').toEqual([]);
});
