/**
 * What the browser plugs into the driver (`realtime/driver.ts`): the link,
 * the browser's `WebSocket` with first-frame ticket auth (spec 4.10, 5.5; a
 * fresh single-use ticket for every connection, resumes included), and the
 * reads of the resume path through the page's callbacks (the app's server
 * holds the key the browser never does).
 */
import { ConnectionError, ProtocolError, RealtimeServerError, type VoxpipeError } from '../errors.js';
import { CloseCode, ErrorCode, isRetryableClose, REALTIME_PATHS, SUBPROTOCOL } from '../protocol/constants.js';
import { INVALID_SERVER_FRAME, readRequestStatus } from '../protocol/server-reader.js';
import { encodeFrame, readServerFrameCompact as readServerFrame } from '../protocol/wire.js';
import type { Link, LinkConnection, Reads } from '../realtime/driver.js';

export interface BrowserLinkOptions {
  /** `{ws_url}` of the realtime service, e.g. `wss://host`. */
  wsUrl: string;
  /** A fresh single-use ticket (from the app's server, `mintTicket`); called for every connection, resumes included. */
  getTicket: () => Promise<string>;
  /** Per connection: socket, ticket and `authenticated`; default 10_000 ms. */
  connectTimeoutMs?: number;
}

export interface BrowserReadsOptions {
  /**
   * The request-status body for `requestId` (the app's server reads
   * `GET {rt_http_url}/v2/tts/requests/{id}` with its key), or `null` when
   * the service answered 404.
   */
  getStatus: (requestId: string) => Promise<unknown>;
  /** A manifest entry's audio; default `fetch(url)` (signed URLs need no key). */
  getSegmentAudio?: (url: string) => Promise<ArrayBuffer>;
}

function asError(err: unknown): VoxpipeError {
  if (err && typeof err === 'object' && 'code' in err && err instanceof Error) return err as VoxpipeError;
  return new ConnectionError('connection_failed', err instanceof Error ? err.message : String(err), { retryable: true, cause: err });
}

/** Connections with a ticket; `opened` counts them (the first and each resume). What a dropped one still delivers, the driver ignores. */
export function browserLink(options: BrowserLinkOptions, opened: () => void): Link {
  const timeoutMs = options.connectTimeoutMs ?? 10_000; // 10 s
  return (handlers) =>
    new Promise<LinkConnection>((resolve, reject) => {
      let ws: WebSocket | undefined;
      let authenticated = false;
      let failed = false;
      const connection: LinkConnection = {
        send: (event) => {
          if (ws?.readyState === WebSocket.OPEN) ws.send(encodeFrame(event));
        },
        close: (code = CloseCode.normal, reason = '') => {
          if (ws && ws.readyState <= WebSocket.OPEN) ws.close(code >= 3000 || code === CloseCode.normal ? code : CloseCode.normal, reason.slice(0, 120));
        },
      };
      const fail = (error: VoxpipeError): void => {
        failed = true;
        clearTimeout(timer);
        connection.close();
        reject(error);
      };
      // A frame the client cannot use ends this connection: a protocol error once authenticated, a failed connect before.
      const refuse = (error: ProtocolError): void => {
        if (!authenticated) return fail(error);
        connection.close();
        handlers.onClose({ code: CloseCode.protocolError, reason: error.code, wasClean: false, error });
      };
      const timer = setTimeout(() => fail(new ConnectionError('connect_timeout', `realtime connect took over ${timeoutMs} ms`, { retryable: true })), timeoutMs);
      options.getTicket().then(
        (ticket) => {
          if (failed) return; // timed out while the page minted the ticket
          const socket = (ws = new WebSocket(`${options.wsUrl.replace(/\/+$/, '')}${REALTIME_PATHS.live}`, SUBPROTOCOL));
          socket.binaryType = 'arraybuffer';
          opened();
          socket.onopen = () => socket.send(encodeFrame({ event: 'auth', token: ticket }));
          socket.onmessage = (message: MessageEvent) => {
            if (!(message.data instanceof ArrayBuffer)) return refuse(new ProtocolError(INVALID_SERVER_FRAME, 'server sent a text frame; v2 frames are binary MessagePack'));
            const read = readServerFrame(new Uint8Array(message.data));
            if (read.kind === 'skip') return;
            if (read.kind === 'unusable') return refuse(read.error);
            const event = read.event;
            if (authenticated) return handlers.onEvent(event);
            if (event.event === 'authenticated') {
              clearTimeout(timer);
              authenticated = true;
              resolve(connection);
            } else if (event.event === 'error') fail(new RealtimeServerError(event.code, event.message, event.terminal, { retryable: event.retryable, stage: event.stage }));
            else fail(new ProtocolError(ErrorCode.invalidState, `expected authenticated, got ${event.event}`));
          };
          socket.onclose = (close: CloseEvent) => {
            if (authenticated) handlers.onClose({ code: close.code, reason: close.reason, wasClean: close.wasClean });
            else fail(new ConnectionError('connection_closed', `realtime connection closed during the handshake (${close.code})`, { closeCode: close.code, retryable: isRetryableClose(close.code, close.wasClean) }));
          };
        },
        (err: unknown) => fail(new ConnectionError('ticket_failed', `getTicket() failed: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err })),
      );
    });
}

/** The resume path's reads through the page's callbacks. */
export function browserReads({ getStatus, getSegmentAudio = async (url) => (await fetch(url)).arrayBuffer() }: BrowserReadsOptions): Reads {
  const failed = (err: unknown) => ({ kind: 'error', error: asError(err) }) as const;
  return {
    async status(requestId) {
      try {
        const body = await getStatus(requestId);
        if (body === null || body === undefined) return { kind: 'not-found' };
        const status = readRequestStatus(body);
        return status instanceof ProtocolError ? { kind: 'error', error: status } : { kind: 'found', status };
      } catch (err) {
        return failed(err);
      }
    },
    segmentAudio: (url) => getSegmentAudio(url).then((data) => ({ kind: 'ok', data: new Uint8Array(data) }), failed),
  };
}
