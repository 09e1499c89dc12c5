/**
 * A WebSocket proxy in front of the reference server's realtime route that
 * rewrites what the server sends: each server frame is decoded to a plain
 * map, handed to `rewrite`, and whatever maps it returns are encoded and
 * forwarded (none: the frame is dropped; several: extra events). Client
 * frames pass through untouched. It plays "a deployment that made other
 * choices where the spec leaves them open", on top of a real server.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { decodeMap, encodeFrame } from '../../src/protocol/codec.js';
import { SUBPROTOCOL } from '../../src/protocol/constants.js';

export type ServerMap = Record<string, unknown>;
export type Rewrite = (event: ServerMap) => ServerMap[];

export interface RewritingProxy {
  wsUrl: string;
  close(): Promise<void>;
}

export async function startRewritingProxy(upstreamWsUrl: string, rewrite: Rewrite): Promise<RewritingProxy> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => SUBPROTOCOL });
  const sockets = new Set<Socket>();
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers['authorization'] = req.headers.authorization;
    const upstream = new WebSocket(`${upstreamWsUrl}${req.url ?? ''}`, SUBPROTOCOL, { headers, perMessageDeflate: false });
    upstream.on('error', () => socket.destroy());
    upstream.once('open', () => {
      wss.handleUpgrade(req, socket, head, (client) => {
        upstream.on('message', (data: Buffer) => {
          for (const out of rewrite(decodeMap(data))) {
            if (client.readyState === WebSocket.OPEN) client.send(encodeFrame(out));
          }
        });
        client.on('message', (data: Buffer) => {
          if (upstream.readyState === WebSocket.OPEN) upstream.send(data);
        });
        client.on('close', () => upstream.close());
        client.on('error', () => undefined);
        upstream.on('close', (code) => {
          if (client.readyState === WebSocket.OPEN) client.close(code === 1005 || code === 1006 ? 1000 : code);
        });
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${port}`,
    async close() {
      for (const client of wss.clients) client.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Rename `from` to `to` in events named `event`. */
export function rename(event: string, from: string, to: string): Rewrite {
  return (m) => {
    if (m['event'] !== event || !(from in m)) return [m];
    const { [from]: value, ...rest } = m;
    return [{ ...rest, [to]: value }];
  };
}

/** Drop `field` from events named `event` (`*`: every event). */
export function without(event: string, field: string): Rewrite {
  return (m) => {
    if (event !== '*' && m['event'] !== event) return [m];
    const { [field]: _dropped, ...rest } = m;
    return [rest];
  };
}

/** Set `field` of events named `event`. */
export function setField(event: string, field: string, value: unknown): Rewrite {
  return (m) => [m['event'] === event ? { ...m, [field]: value } : m];
}
