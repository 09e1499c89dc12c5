/**
 * A WebSocket proxy in front of the reference server's realtime route, for
 * tests that play a network or a deployment between client and server. It
 * forwards the Authorization header and the client's frames; `wire` decides
 * what happens to the server's frames and to a client's close. A server
 * close reaches the client (1005/1006 as 1000).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { SUBPROTOCOL } from '../../src/protocol/constants.js';

export interface ProxiedConnection {
  client: WebSocket;
  upstream: WebSocket;
  /** 1 for the first connection through the proxy. */
  index: number;
}

export interface WsProxy {
  wsUrl: string;
  close(): Promise<void>;
}

export async function startWsProxy(upstreamWsUrl: string, wire: (c: ProxiedConnection) => void): Promise<WsProxy> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => SUBPROTOCOL });
  const sockets = new Set<Socket>();
  let connections = 0;
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const index = ++connections;
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers['authorization'] = req.headers.authorization;
    const upstream = new WebSocket(`${upstreamWsUrl}${req.url ?? ''}`, SUBPROTOCOL, { headers, perMessageDeflate: false });
    upstream.on('error', () => socket.destroy());
    upstream.once('open', () => {
      wss.handleUpgrade(req, socket, head, (client) => {
        client.on('message', (data: Buffer) => {
          if (upstream.readyState === WebSocket.OPEN) upstream.send(data);
        });
        client.on('error', () => undefined);
        upstream.on('close', (code) => {
          if (client.readyState === WebSocket.OPEN) client.close(code === 1005 || code === 1006 ? 1000 : code);
        });
        wire({ client, upstream, index });
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
