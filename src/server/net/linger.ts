/**
 * A lingering close: the last answer on a raw connection (a refused
 * WebSocket upgrade, a request the HTTP parser could not read) is written
 * and the connection half-closed, then whatever the client still sends is
 * read into nothing until it closes its side. Closing at once would leave its
 * bytes unread, and the kernel then resets the connection: the client's next
 * write fails (EPIPE) and the answer it has not read yet may be lost.
 * Bounded like an early answer's body (`MAX_DISCARD_BYTES`, `DISCARD_IDLE_MS`).
 */
import type { Duplex } from 'node:stream';
import { DISCARD_IDLE_MS, MAX_DISCARD_BYTES } from '../http/response.js';

/** Write `answer`, half-close, read the rest into nothing, then close. */
export function endLingering(socket: Duplex, answer: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const idle = () => {
    clearTimeout(timer);
    timer = setTimeout(close, DISCARD_IDLE_MS);
  };
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_DISCARD_BYTES) close();
    else idle();
  });
  socket.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  socket.on('error', close);
  socket.end(answer);
  idle();
  socket.resume();
}
