/**
 * Early answers a client still writing can read. A request may be answered
 * before its body is complete (413, 401, 404, 405, 400 on a path or query):
 * the answer goes out at once, but the response ends (after which node:http
 * closes a `Connection: close` socket, and the kernel resets a connection
 * with unread bytes, so the client's next write fails with EPIPE and the
 * answer it has not read yet may be lost) only once the rest of the body has
 * been read and thrown away. Bounded: past `MAX_DISCARD_BYTES`, or when the
 * client sends nothing for `DISCARD_IDLE_MS`, the response ends anyway.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';

/** Bytes of a body read and thrown away after its answer; past this the connection is given up (a client that never stops sending). */
export const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

/** How long a client still owing its body may stay silent before its answered request is ended anyway: 5 s. */
export const DISCARD_IDLE_MS = 5_000;

type EndCallback = () => void;

/**
 * The response class of the reference server (`createServer({ ServerResponse })`):
 * `end()` waits for the request's body to be read (see the module comment).
 */
export class DrainingResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override end(cb?: EndCallback): this;
  override end(chunk: unknown, cb?: EndCallback): this;
  override end(chunk: unknown, encoding: BufferEncoding, cb?: EndCallback): this;
  override end(chunk?: unknown, encoding?: BufferEncoding | EndCallback, cb?: EndCallback): this {
    const req = this.req;
    if (req.complete || this.destroyed || req.destroyed) return super.end(chunk, encoding as BufferEncoding, cb);
    const callback = typeof chunk === 'function' ? (chunk as EndCallback) : typeof encoding === 'function' ? encoding : cb;
    // The whole answer now; only the end waits.
    if (chunk !== undefined && typeof chunk !== 'function') {
      if (typeof encoding === 'string') this.write(chunk, encoding);
      else this.write(chunk);
    }
    discardThen(req, () => {
      if (!this.writableEnded) super.end(callback);
    });
    return this;
  }
}

/** Read `req`'s body into nothing, then `done` (at its end, past the bounds, or when the client goes away). */
function discardThen(req: IncomingMessage, done: () => void): void {
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const finish = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', finish);
    req.off('close', finish);
    done();
  };
  const giveUp = () => {
    finish();
    // The body will not be read to its end: nothing else can follow on this connection.
    req.socket.destroySoon();
  };
  const idle = () => {
    clearTimeout(timer);
    timer = setTimeout(giveUp, DISCARD_IDLE_MS);
  };
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_DISCARD_BYTES) giveUp();
    else idle();
  };
  req.on('data', onData);
  req.once('end', finish);
  req.once('close', finish);
  idle();
  req.resume();
}
