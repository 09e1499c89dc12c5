/**
 * A WebSocket proxy in front of the reference server's realtime route that
 * rewrites what the server sends: each server frame is decoded to a plain
 * map, handed to `rewrite`, and whatever maps it returns are encoded and
 * forwarded (none: the frame is dropped; several: extra events). Client
 * frames pass through untouched. It plays "a deployment that made other
 * choices where the spec leaves them open", on top of a real server.
 */
import WebSocket from 'ws';
import { decodeMap, encodeFrame } from '../../src/protocol/codec.js';
import { startWsProxy, type WsProxy } from './ws-proxy.js';

export type ServerMap = Record<string, unknown>;
export type Rewrite = (event: ServerMap) => ServerMap[];

export type RewritingProxy = WsProxy;

export async function startRewritingProxy(upstreamWsUrl: string, rewrite: Rewrite): Promise<RewritingProxy> {
  return startWsProxy(upstreamWsUrl, ({ client, upstream }) => {
    upstream.on('message', (data: Buffer) => {
      for (const out of rewrite(decodeMap(data))) {
        if (client.readyState === WebSocket.OPEN) client.send(encodeFrame(out));
      }
    });
    client.on('close', () => upstream.close());
  });
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
