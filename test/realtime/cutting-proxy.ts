/**
 * A WebSocket proxy in front of the reference server's realtime route that
 * can cut the client off while the server carries on: it keeps reading the
 * server until a chosen frame, withholds from the client whatever the cut
 * covers, then drops the client's TCP connection without a close frame.
 * That reproduces "the request completed (or a segment completed) on the
 * server, but the client never heard of it", which the server's own fault
 * injection cannot (it fails the request when it drops the socket).
 *
 * Only the first connection is cut; later ones pass through untouched.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { readServerFrame } from '../../src/protocol/codec.js';
import { SUBPROTOCOL } from '../../src/protocol/constants.js';
import type { ServerEvent } from '../../src/protocol/events.js';

export interface CutPlan {
  /** Stop forwarding to the client from the first server event for which this holds (that event included). */
  withholdFrom(event: ServerEvent): boolean;
  /** Drop the client's connection once the server has sent an event for which this holds. */
  dropAfter(event: ServerEvent): boolean;
}

export interface CuttingProxy {
  wsUrl: string;
  /** The client was cut off (the plan ran). */
  readonly cut: boolean;
  close(): Promise<void>;
}

export async function startCuttingProxy(upstreamWsUrl: string, plan: CutPlan): Promise<CuttingProxy> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => SUBPROTOCOL });
  let connections = 0;
  let cut = false;
  const sockets = new Set<Socket>();
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const first = ++connections === 1;
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers['authorization'] = req.headers.authorization;
    const upstream = new WebSocket(`${upstreamWsUrl}${req.url ?? ''}`, SUBPROTOCOL, { headers, perMessageDeflate: false });
    upstream.on('error', () => socket.destroy());
    upstream.once('open', () => {
      wss.handleUpgrade(req, socket, head, (client) => {
        let withholding = false;
        upstream.on('message', (data: Buffer) => {
          if (first && !cut) {
            // Read as the client reads (any dialect of the server).
            const read = readServerFrame(data);
            const event = read.kind === 'event' ? read.event : undefined;
            if (event && plan.withholdFrom(event)) withholding = true;
            if (event && plan.dropAfter(event)) {
              cut = true;
              // No close frame: the client sees an abnormal closure (1006).
              client.terminate();
              upstream.close();
              return;
            }
          }
          if (!withholding && client.readyState === WebSocket.OPEN) client.send(data);
        });
        client.on('message', (data: Buffer) => {
          if (upstream.readyState === WebSocket.OPEN) upstream.send(data);
        });
        client.on('close', () => {
          // After a cut the server must run to the planned event, so keep it open until then.
          if (!first || cut) upstream.close();
        });
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
    get cut() {
      return cut;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
