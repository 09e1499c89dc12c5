/**
 * A deployment behind a path prefix: a reverse proxy on port 0
 * that serves the upstream (the reference server) under `prefix`, for plain
 * HTTP and for WebSocket upgrades, and answers 404 to anything outside the
 * prefix, so a client that loses the prefix anywhere fails. It counts what
 * it forwarded, by kind.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface PrefixProxy {
  /** `http://127.0.0.1:PORT` + the prefix: what the client is configured with. */
  url: string;
  /** Requests forwarded: plain HTTP, WebSocket upgrades, and refused (outside the prefix). */
  readonly counts: { http: number; upgrades: number; outside: number };
  /** Paths (after the prefix) of the forwarded requests, in order. */
  readonly paths: string[];
  close(): Promise<void>;
}

/** The path under `prefix`, or undefined when `url` is outside it. */
function strip(url: string | undefined, prefix: string): string | undefined {
  if (url === undefined) return undefined;
  if (url === prefix) return '/';
  if (url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) return url.slice(prefix.length) || '/';
  return undefined;
}

/** Headers of `req` as they go upstream: the host is the upstream's. */
function upstreamHeaders(req: IncomingMessage, host: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = v;
  headers['host'] = host;
  return headers;
}

/** Serve `upstream` (an `http://host:port` origin) under `prefix` (e.g. `/some/prefix`). */
export async function startPrefixProxy(upstream: string, prefix: string): Promise<PrefixProxy> {
  const target = new URL(upstream);
  const counts = { http: 0, upgrades: 0, outside: 0 };
  const paths: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const path = strip(req.url, prefix);
    if (path === undefined) {
      counts.outside++;
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not under ${prefix}`);
      return;
    }
    counts.http++;
    paths.push(path);
    const forward = request({ host: target.hostname, port: target.port, method: req.method, path, headers: upstreamHeaders(req, target.host) }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = strip(req.url, prefix);
    if (path === undefined) {
      counts.outside++;
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    counts.upgrades++;
    paths.push(path);
    // The handshake goes upstream as it came, with the path under the prefix; then bytes flow both ways.
    const up = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method ?? 'GET'} ${path} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        lines.push(`${name}: ${name.toLowerCase() === 'host' ? target.host : req.rawHeaders[i + 1]!}`);
      }
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    counts,
    paths,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
