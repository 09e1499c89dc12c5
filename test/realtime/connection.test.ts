/**
 * `connect()` over real sockets: against the reference server (Bearer,
 * browser ticket, refused handshakes, keep-alive, backpressure) and against
 * small misbehaving WebSocket servers (bad frames, a silent peer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { AuthenticationError, AbortError, ConnectionError, ProtocolError, RealtimeServerError, TimeoutError } from '../../src/errors.js';
import { encodeFrame } from '../../src/protocol/codec.js';
import { SUBPROTOCOL } from '../../src/protocol/constants.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { createBrowserTicket, mintTicket } from '../../src/realtime/browser-ticket.js';
import { connect, liveUrl, type CloseInfo, type ConnectOptions } from '../../src/realtime/connection.js';
import type { ReferenceServer } from '../../src/server/index.js';
import { API_KEY, REQUEST, startTestServer } from './fixtures.js';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** Options with recording handlers. */
function recorder(extra: Partial<ConnectOptions> & { wsUrl: string }) {
  const events: ServerEvent[] = [];
  let resolveClose!: (info: CloseInfo) => void;
  const closed = new Promise<CloseInfo>((resolve) => (resolveClose = resolve));
  let closes = 0;
  const waiters: { name: string; resolve: (e: ServerEvent) => void }[] = [];
  const options: ConnectOptions = {
    apiKey: API_KEY,
    ...extra,
    onEvent: (e) => {
      events.push(e);
      for (const w of waiters.splice(0)) {
        if (w.name === e.event) w.resolve(e);
        else waiters.push(w);
      }
    },
    onClose: (info) => {
      closes++;
      resolveClose(info);
    },
  };
  const next = (name: string) =>
    new Promise<ServerEvent>((resolve) => {
      const seen = events.find((e) => e.event === name);
      if (seen) resolve(seen);
      else waiters.push({ name, resolve });
    });
  return { options, events, closed, next, closes: () => closes };
}

/** Reject reason of a promise (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

/** A WebSocket server that speaks the subprotocol, authenticates, then runs `behave`. */
async function fakeServer(behave: (ws: WebSocket) => void, protocol: string | false = SUBPROTOCOL) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, handleProtocols: () => protocol });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws) => {
    ws.send(encodeFrame({ event: 'authenticated', event_id: 'a', trace_id: 't', timestamp: 0, session_id: 'fake', site: 'local', protocol_version: 2, quota: 1 }));
    behave(ws);
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    wsUrl: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}

describe('against the reference server', () => {
  it('authenticates with the Bearer header and reports a clean close once', async () => {
    const r = recorder({ wsUrl: server.wsUrl });
    const connection = await connect(r.options);
    expect(connection.authenticated).toMatchObject({ event: 'authenticated', protocol_version: 2 });
    expect(connection.sessionId).toBe(connection.authenticated.session_id);
    connection.close();
    expect(await r.closed).toMatchObject({ code: 1000, wasClean: true });
    expect(connection.closed).toBe(true);
    expect(r.closes()).toBe(1);
  });

  it('builds the live URL under the ws root, with nothing but the path', () => {
    expect(liveUrl('ws://127.0.0.1:9/')).toBe('ws://127.0.0.1:9/v2/tts/live');
    expect(liveUrl('wss://host/prefix')).toBe('wss://host/prefix/v2/tts/live');
  });

  it('a wrong key: AuthenticationError 401 (the class a REST call gets) with the server code, not retryable', async () => {
    const error = await rejection(connect(recorder({ wsUrl: server.wsUrl, apiKey: 'sk-test-wrong-key-123' }).options));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', retryable: false });
    expect((error as Error).message).not.toContain('sk-test-wrong-key-123');
  });

  it('a draining server: 503, retryable', async () => {
    server.ctx.draining = true;
    try {
      const error = await rejection(connect(recorder({ wsUrl: server.wsUrl }).options));
      expect(error).toMatchObject({ status: 503, retryable: true });
    } finally {
      server.ctx.draining = false;
    }
  });

  it('authenticates with a browser ticket in the first frame (no Authorization header)', async () => {
    const origin = 'https://app.example.com';
    const { ticket } = await createBrowserTicket({ rtHttpUrl: server.rtHttpUrl, apiKey: API_KEY, origin });
    const r = recorder({ wsUrl: server.wsUrl, ticket, origin });
    delete r.options.apiKey;
    const connection = await connect(r.options);
    expect(connection.sessionId).toBeTruthy();
    connection.close();
  });

  it('mintTicket (the app-server helper): a ticket for an origin, good for one connection from it', async () => {
    const origin = 'https://shop.example.com';
    const { ticket, origin: bound } = await mintTicket({ rtHttpUrl: server.rtHttpUrl, apiKey: API_KEY }, origin);
    expect(bound).toBe(origin);
    const r = recorder({ wsUrl: server.wsUrl, ticket, origin });
    delete r.options.apiKey;
    const connection = await connect(r.options);
    connection.close();
    const again = recorder({ wsUrl: server.wsUrl, ticket, origin });
    delete again.options.apiKey;
    expect(await rejection(connect(again.options))).toMatchObject({ code: 'authentication_failed' });
  });

  it('a refused ticket: the server error event rejects the connect', async () => {
    const r = recorder({ wsUrl: server.wsUrl, ticket: 'not-a-real-ticket', origin: 'https://app.example.com' });
    delete r.options.apiKey;
    const error = await rejection(connect(r.options));
    expect(error).toBeInstanceOf(RealtimeServerError);
    expect(error).toMatchObject({ code: 'authentication_failed' });
  });

  it('keeps an idle connection alive with ping, answered by pong', async () => {
    const r = recorder({ wsUrl: server.wsUrl, keepAliveMs: 20 });
    const connection = await connect(r.options);
    const pong = await r.next('pong');
    expect(pong).toMatchObject({ event: 'pong', session_id: connection.sessionId });
    connection.close();
  });

  it('pause() holds frames back until resume()', async () => {
    const r = recorder({ wsUrl: server.wsUrl });
    const connection = await connect(r.options);
    connection.send({ event: 'start', mode: 'simple', request: REQUEST });
    await r.next('ready');
    connection.pause();
    expect(connection.paused).toBe(true);
    connection.send({ event: 'input', text: 'Hello while paused.', commit: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(r.events.some((e) => e.event === 'audio')).toBe(false);
    connection.resume();
    await r.next('finish');
    expect(r.events.filter((e) => e.event === 'audio').length).toBeGreaterThan(0);
  });
});

describe('network failures', () => {
  it('nothing listening: connection_failed, retryable', async () => {
    const tcp = createTcpServer();
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const port = (tcp.address() as AddressInfo).port;
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    const error = await rejection(connect(recorder({ wsUrl: `ws://127.0.0.1:${port}` }).options));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'connection_failed', retryable: true });
  });

  describe('a peer that never answers the handshake', () => {
    let tcp: TcpServer;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      tcp = createTcpServer((s) => sockets.push(s));
      await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    });
    const url = () => `ws://127.0.0.1:${(tcp.address() as AddressInfo).port}`;

    it('times out with a retryable TimeoutError', async () => {
      const error = await rejection(connect(recorder({ wsUrl: url(), connectTimeoutMs: 100 }).options));
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ retryable: true });
    });

    it('gives up with AbortError when the signal fires', async () => {
      const controller = new AbortController();
      const pending = connect(recorder({ wsUrl: url(), signal: controller.signal }).options);
      controller.abort();
      expect(await rejection(pending)).toBeInstanceOf(AbortError);
    });
  });
});

describe('misbehaving servers', () => {
  it('a text frame after authentication: ProtocolError invalid_server_frame, connection closed', async () => {
    const fake = await fakeServer((ws) => setTimeout(() => ws.send('{"event":"audio"}'), 10));
    try {
      const r = recorder({ wsUrl: fake.wsUrl });
      await connect(r.options);
      const info = await r.closed;
      expect(info.error).toBeInstanceOf(ProtocolError);
      expect(info.error).toMatchObject({ code: 'invalid_server_frame' });
      expect(info.code).toBe(1002);
    } finally {
      await fake.close();
    }
  });

  it('malformed MessagePack: ProtocolError invalid_server_frame naming the problem', async () => {
    const fake = await fakeServer((ws) => setTimeout(() => ws.send(Buffer.from([0x81, 0xc1, 0x00])), 10));
    try {
      const r = recorder({ wsUrl: fake.wsUrl });
      await connect(r.options);
      expect((await r.closed).error).toMatchObject({ code: 'invalid_server_frame', message: expect.stringContaining('malformed MessagePack') });
    } finally {
      await fake.close();
    }
  });

  it('a frame before authenticated other than error: ProtocolError at connect', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => SUBPROTOCOL });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    wss.on('connection', (ws) => ws.send(encodeFrame({ event: 'pong', event_id: 'p', trace_id: 't', timestamp: 0, session_id: 's' })));
    try {
      const error = await rejection(connect(recorder({ wsUrl: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}` }).options));
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error).toMatchObject({ code: 'invalid_state' });
    } finally {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });

  it('a server that does not choose the subprotocol is refused', async () => {
    const fake = await fakeServer(() => undefined, false);
    try {
      const error = await rejection(connect(recorder({ wsUrl: fake.wsUrl }).options));
      expect(error).toBeInstanceOf(ConnectionError);
    } finally {
      await fake.close();
    }
  });

  it('a peer that stops answering: keep-alive timeout, reported as a retryable drop', async () => {
    const fake = await fakeServer(() => undefined);
    try {
      const r = recorder({ wsUrl: fake.wsUrl, keepAliveMs: 20, pongTimeoutMs: 50 });
      await connect(r.options);
      const info = await r.closed;
      expect(info).toMatchObject({ code: 1006, wasClean: false });
      expect(info.error).toMatchObject({ code: 'keepalive_timeout', retryable: true });
    } finally {
      await fake.close();
    }
  });

  it('overload is not death: a ping unanswered while other connections to the server receive frames keeps the connection, and ends it once the server is silent everywhere', async () => {
    // Connection A's pings are never answered; connection B is sent a frame every 10 ms while `busy`.
    let busy = true;
    let feeder: NodeJS.Timeout | undefined;
    let sockets = 0;
    const fake = await fakeServer((ws) => {
      if (++sockets !== 2) return;
      feeder = setInterval(() => {
        if (busy) ws.send(encodeFrame({ event: 'pong', event_id: `p${Date.now()}`, trace_id: 't', timestamp: 0, session_id: 'fake' }));
      }, 10);
    });
    try {
      const activity = { progress: 0, frames: 0 };
      const a = recorder({ wsUrl: fake.wsUrl, keepAliveMs: 20, pongTimeoutMs: 50, activity });
      await connect(a.options);
      const b = recorder({ wsUrl: fake.wsUrl, keepAliveMs: 0, activity });
      const connB = await connect(b.options);
      // Twelve pong deadlines of A pass while B hears the server.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(a.closes()).toBe(0);
      expect(activity.frames).toBeGreaterThan(20);
      // The server goes quiet on every connection: A's next check ends it.
      busy = false;
      const started = Date.now();
      const info = await a.closed;
      expect(info.error).toMatchObject({ code: 'keepalive_timeout', retryable: true });
      expect(Date.now() - started).toBeLessThan(2_000);
      connB.close();
    } finally {
      clearInterval(feeder);
      await fake.close();
    }
  });
});
