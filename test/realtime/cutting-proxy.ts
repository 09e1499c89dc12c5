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
import WebSocket from 'ws';
import { readServerFrame } from '../../src/protocol/codec.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { startWsProxy } from './ws-proxy.js';

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
  let cut = false;
  const proxy = await startWsProxy(upstreamWsUrl, ({ client, upstream, index }) => {
    const first = index === 1;
    let withholding = false;
    let openSegment = '';
    upstream.on('message', (data: Buffer) => {
      if (first && !cut) {
        // Read as the client reads (any dialect of the server).
        const read = readServerFrame(data);
        let event = read.kind === 'event' ? read.event : undefined;
        // A completion that names no segment the reader knows is the open one's (one flush at a time), as the client reads it.
        if (event?.event === 'audio') openSegment = event.segment_id;
        else if (event?.event === 'segment_completed' && event.segment_id === '') event = { ...event, segment_id: openSegment };
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
    client.on('close', () => {
      // After a cut the server must run to the planned event, so keep it open until then.
      if (!first || cut) upstream.close();
    });
  });
  return {
    wsUrl: proxy.wsUrl,
    get cut() {
      return cut;
    },
    close: () => proxy.close(),
  };
}
