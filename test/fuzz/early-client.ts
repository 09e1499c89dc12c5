/**
 * A client that keeps writing its request body whatever the server answers,
 * over a raw socket (nothing between it and the server buffers, retries or
 * closes early): what a server must survive when it answers a request before
 * its body is complete (too large, no key, wrong method, unknown path,
 * malformed parameters). The outcome says whether a whole response was read
 * and whether a write failed.
 */
import { connect } from 'node:net';

/** One request to answer early. */
export interface EarlyRequest {
  method: string;
  /** Path and query, sent as they are. */
  target: string;
  headers: Record<string, string>;
  /** Body bytes the client writes, whatever it hears meanwhile. */
  bodyBytes: number;
  /** Chunked transfer coding instead of `Content-Length`. */
  chunked: boolean;
  /** Send `Connection: close` (the server ends the connection after its answer). */
  close: boolean;
  /** Bytes per write; default 64 KiB. */
  chunkBytes?: number;
  /**
   * Keep writing after the server's FIN (`allowHalfOpen`); otherwise the
   * client's socket ends its side when the server ends its own, as Node's
   * default does. Default false.
   */
  halfOpen?: boolean;
  /** Pause between writes, as a slow uplink would; default 0 ms. */
  pauseMs?: number;
  /** Give up after this long; default 30_000 ms. */
  timeoutMs?: number;
}

/** What the client saw. */
export interface EarlyOutcome {
  /** Status of the response; 0 when no status line was read. */
  status: number;
  /** A complete response (status line, headers, and all of its body) was read. */
  answered: boolean;
  /** Body bytes handed to the socket before it failed or the body ended. */
  sent: number;
  /** The whole body was written. */
  wroteAll: boolean;
  /** Code of a socket error (EPIPE, ECONNRESET), or `timeout`. */
  error: string | undefined;
  /** The response body, as text. */
  body: string;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** The status and body once `data` holds a complete response; undefined while it does not. */
function parseResponse(data: Buffer, ended: boolean): { status: number; body: Buffer } | undefined {
  const headEnd = data.indexOf(CRLF2);
  if (headEnd < 0) return undefined;
  const lines = data.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const rest = data.subarray(headEnd + 4);
  const length = headers.get('content-length');
  if (length !== undefined) return rest.length >= Number(length) ? { status, body: rest.subarray(0, Number(length)) } : undefined;
  if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) return rest.length >= lineEnd + 4 ? { status, body: Buffer.concat(parts) } : undefined;
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  return ended ? { status, body: rest } : undefined;
}

/** Send `request` to `port` on loopback, writing all of its body whatever is answered; resolves when the connection is closed. */
export function sendEarly(port: number, request: EarlyRequest): Promise<EarlyOutcome> {
  const chunkBytes = request.chunkBytes ?? 64 * 1024; // 64 KiB
  const head = [`${request.method} ${request.target} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`)];
  head.push(request.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${request.bodyBytes}`);
  if (request.close) head.push('Connection: close');
  const chunk = Buffer.alloc(chunkBytes, 0x20);
  chunk[0] = 0x7b; // '{' then spaces: JSON that is merely too long

  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: request.halfOpen ?? false });
    const received: Buffer[] = [];
    let response: { status: number; body: Buffer } | undefined;
    let sent = 0;
    let wroteAll = false;
    let error: string | undefined;
    const timer = setTimeout(() => {
      error ??= 'timeout';
      socket.destroy();
    }, request.timeoutMs ?? 30_000); // 30 s
    const finish = () => {
      if (!wroteAll || !response) return;
      // Both sides said what they had to: the client ends its side.
      if (!socket.writableEnded) socket.end();
    };
    socket.on('data', (data: Buffer) => {
      received.push(data);
      response ??= parseResponse(Buffer.concat(received), false);
      finish();
    });
    socket.on('end', () => {
      response ??= parseResponse(Buffer.concat(received), true);
      finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(received);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(all.subarray(0, 16).toString('latin1'))?.[1] ?? 0);
      resolve({ status: response?.status ?? status, answered: response !== undefined, sent, wroteAll, error, body: response?.body.toString('utf8') ?? '' });
    });
    const write = () => {
      while (!wroteAll && !socket.destroyed) {
        if (sent < request.bodyBytes) {
          const part = chunk.subarray(0, Math.min(chunkBytes, request.bodyBytes - sent));
          sent += part.length;
          const more = socket.write(request.chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part);
          if (sent < request.bodyBytes || request.chunked) {
            if (!more) socket.once('drain', write);
            else if (request.pauseMs) setTimeout(write, request.pauseMs);
            else continue;
            return;
          }
        } else socket.write('0\r\n\r\n');
        wroteAll = true;
        finish();
      }
    };
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    write();
  });
}
