/**
 * A small realtime v2 server (reliable mode only) that can misbehave in the
 * ways a real one can: audio out of order or repeated, silence where a reply
 * is owed, a failure after every `ready`, the caller's Authorization value
 * echoed into its errors, an error with no code. It speaks MessagePack over
 * a real socket on port 0 and answers the request-status route, so the
 * client's whole recovery path runs against it.
 *
 * Each connection gets the behaviour of `plan(connectionIndex)`; audio is a
 * deterministic byte ramp per segment (`audioOf`), so a test can tell exactly
 * what the client should have emitted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { decodeMap, encodeFrame } from '../../src/protocol/codec.js';
import { REALTIME_PATHS, SUBPROTOCOL } from '../../src/protocol/constants.js';

export interface Misbehaviour {
  /** Send each segment's audio frames in this order of their sequences (e.g. [2, 1, 3]); default in order. */
  audioOrder?: number[];
  /** Send these sequences of each segment twice. */
  repeat?: number[];
  /** Leave out these sequences of each segment. */
  omit?: number[];
  /** Answer nothing to `text` (no `input_ack`). */
  silentAfterText?: boolean;
  /** Send the audio but never `segment_completed`. */
  silentAfterAudio?: boolean;
  /** From `start` on, a `warning` every 50 ms (chatter that is no progress), until the connection closes. */
  chatter?: boolean;
  /** Close with 1012 right after `ready`. */
  failAfterReady?: boolean;
  /** After `ready`, send an error whose code, request id, stage, path and message carry the caller's Authorization value. */
  echoKey?: boolean;
  /** After `ready`, send an error with `code: ''`. */
  emptyErrorCode?: boolean;
  /**
   * The `sequence` of frame `frame` (from 1) of the `segment`-th segment
   * flushed on the connection (from 0); default per connection from 1
   * (`segment * FRAMES + frame`). Spec 6 leaves start, scope and gaps open.
   */
  sequenceOf?: (segment: number, frame: number) => number;
  /** The name `segment_completed` gives its audio bytes (spec 6 leaves it open; `null`: not said); default `audio_bytes`. */
  audioBytesField?: string | null;
}

/** Frames per segment, bytes per frame. */
export const FRAMES = 3;
export const FRAME_BYTES = 4;

/** The audio of a segment: FRAMES frames, distinct bytes per segment and frame. */
export function audioOf(segmentIndex: number): Buffer[] {
  return Array.from({ length: FRAMES }, (_, f) => Buffer.alloc(FRAME_BYTES, (segmentIndex * FRAMES + f + 1) & 0xff));
}

export interface HostileServer {
  wsUrl: string;
  rtHttpUrl: string;
  /** Connections opened so far. */
  readonly connections: number;
  /** Status-route reads so far. */
  readonly statusReads: number;
  close(): Promise<void>;
}

export async function startHostileServer(plan: (connection: number) => Misbehaviour, statusState = 'failed_retryable'): Promise<HostileServer> {
  let connections = 0;
  let statusReads = 0;
  // A segment keeps its audio across connections (a resume re-sends it under the same id).
  const indexes = new Map<string, number>();
  const segmentIndex = (id: string): number => {
    if (!indexes.has(id)) indexes.set(id, indexes.size);
    return indexes.get(id)!;
  };
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const prefix = `${REALTIME_PATHS.requests}/`;
    if (req.url?.startsWith(prefix)) {
      statusReads++;
      const requestId = decodeURIComponent(req.url.slice(prefix.length));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ request_id: requestId, state: statusState, retryable: true, units: 0, result_available: false }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found', message: 'no such route' } }));
  });
  const sockets = new Set<Socket>();
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const wss = new WebSocketServer({ server: http, path: REALTIME_PATHS.live, perMessageDeflate: false, handleProtocols: () => SUBPROTOCOL });
  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const behaviour = plan(connections++);
    speak(ws, behaviour, req.headers.authorization ?? '', segmentIndex);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${port}`,
    rtHttpUrl: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    get statusReads() {
      return statusReads;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function speak(ws: WebSocket, b: Misbehaviour, authorization: string, segmentIndex: (id: string) => number): void {
  let counter = 0;
  let sequence = 0;
  let requestId = '';
  let segments = 0;
  let completed = 0;
  let stopping = false;
  const send = (event: string, body: Record<string, unknown>, inReplyTo?: string) =>
    ws.send(encodeFrame({ event, event_id: `h-${++counter}`, trace_id: 'hostile', timestamp: Date.now(), ...(inReplyTo && { in_reply_to: inReplyTo }), ...body }));
  const finishIfDone = () => {
    if (stopping && completed === segments) send('finish', { request_id: requestId, session_id: 'hs', reason: 'completed', units: completed });
  };
  send('authenticated', { session_id: 'hs', site: 'hostile', protocol_version: 2, quota: 1_000 });
  ws.on('message', (data: Buffer) => {
    const m = decodeMap(data);
    const eventId = String(m['event_id'] ?? '');
    switch (m['event']) {
      case 'start': {
        requestId = String(m['request_id'] ?? 'simple-request');
        const request = m['request'] as Record<string, unknown>;
        send('ready', { mode: m['mode'] ?? 'simple', request_id: requestId, session_id: 'hs', provider: 'hostile', model: request['model'], voice_id: request['voice_id'], format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16 }, eventId);
        if (b.chatter) {
          const timer = setInterval(() => send('warning', { request_id: requestId, code: 'still_here', message: 'working on it' }), 50);
          ws.once('close', () => clearInterval(timer));
        }
        if (b.failAfterReady) ws.close(1012, 'restarting');
        else if (b.echoKey) {
          send('error', { request_id: authorization, code: `bad_${authorization}`, message: `refused ${authorization}`, retryable: false, terminal: true, stage: authorization, path: `request.${authorization}` }, eventId);
          ws.close(1000);
        } else if (b.emptyErrorCode) {
          send('error', { request_id: requestId, code: '', message: 'something failed', retryable: false, terminal: true }, eventId);
          ws.close(1000);
        }
        return;
      }
      case 'input': {
        // Simple mode: speak once the request is committed.
        if (b.silentAfterText || m['commit'] === false) return;
        const frames = audioOf(0);
        frames.forEach((audio, i) => send('audio', { request_id: requestId, session_id: 'hs', segment_id: 'simple-1', sequence: i + 1, audio, format: 'pcm' }));
        send('finish', { request_id: requestId, session_id: 'hs', reason: 'completed', units: 1 });
        return;
      }
      case 'text':
        if (b.silentAfterText) return;
        sequence = Number(m['sequence']);
        send('input_ack', { request_id: requestId, sequence, characters: String(m['text']).length, buffered_characters: 0, remaining_capacity: 10_000 }, eventId);
        return;
      case 'flush': {
        const segmentId = String(m['segment_id']);
        const onConnection = segments++;
        const sequenceOf = b.sequenceOf ?? ((segment: number, frame: number) => segment * FRAMES + frame); // per connection by default
        const index = segmentIndex(segmentId);
        send('segment_accepted', { request_id: requestId, segment_id: segmentId, characters: 1, reserved_units: 1 }, eventId);
        const frames = audioOf(index);
        const order = b.audioOrder ?? frames.map((_, i) => i + 1);
        for (const seq of order) {
          if (b.omit?.includes(seq)) continue;
          const times = b.repeat?.includes(seq) ? 2 : 1;
          for (let t = 0; t < times; t++) {
            send('audio', { request_id: requestId, session_id: 'hs', segment_id: segmentId, sequence: sequenceOf(onConnection, seq), audio: frames[seq - 1], format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16 });
          }
        }
        if (b.silentAfterAudio) return;
        completed++;
        const bytesField = b.audioBytesField === undefined ? 'audio_bytes' : b.audioBytesField;
        send('segment_completed', { request_id: requestId, segment_id: segmentId, units: 1, ...(bytesField !== null && { [bytesField]: FRAMES * FRAME_BYTES }) });
        finishIfDone();
        return;
      }
      case 'stop':
        stopping = true;
        finishIfDone();
        return;
      case 'ping':
        send('pong', { session_id: 'hs', request_id: requestId }, eventId);
        return;
      default:
        return;
    }
  });
}
