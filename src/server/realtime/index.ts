/**
 * Module: realtime TTS (spec 3.4b, 3.5, 4.10, 5, 6, 7.6, 8).
 *
 * - `GET  /v2/tts/capabilities` (public)
 * - `GET  /v2/tts/live` WebSocket upgrade, subprotocol `realtime.tts.msgpack.v2`
 * - `POST /v2/tts/browser-tickets` (Bearer)
 * - `GET  /v2/tts/requests/{request_id}` and `.../segments/{segment_id}/audio` (Bearer)
 *
 * Behaviour decisions are documented where they are made: session.ts
 * (authentication, errors, timeouts), simple-mode.ts, reliable-mode.ts
 * (every rule violation and its code), billing.ts, status-routes.ts
 * (manifest audio), audio-pump.ts (framing, backpressure).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { ErrorCode, REALTIME_PATHS, RequestState, SUBPROTOCOL } from '../../protocol/constants.js';
import { LIMITS } from '../../protocol/limits.js';
import type { ModuleFactory, ServerModule } from '../module.js';
import type { ServerContext } from '../context.js';
import { ApiErrorCode, HttpError } from '../http/errors.js';
import type { RouteDef } from '../http/router.js';
import { capabilitiesRoute } from './capabilities.js';
import { checkHandshake, rejectUpgrade, type HandshakeResult } from './handshake.js';
import { RequestStore, SegmentState, type RequestRecord } from './request-store.js';
import { Session } from './session.js';
import { statusRoutes } from './status-routes.js';
import { browserTicketRoute, TicketBook } from './tickets.js';

export { buildCapabilities } from './capabilities.js';
export { REALTIME_TUNING, overrideRealtimeTuning, type RealtimeTuning } from './tuning.js';
import { REALTIME_TUNING } from './tuning.js';

/**
 * A server starting on a store that outlived its previous process (a
 * persistent store, or a test's snapshot) finds requests still `running`
 * that no connection of this process generates: the process that did is
 * gone. They become `failed_retryable`, as a dropped connection makes them
 * (in-flight segments failed, their units kept only where the charge was
 * committed), so the client's `retry_failed` resumes them with no second
 * charge for what was already paid.
 */
export function recoverOrphans(ctx: ServerContext, requests: RequestStore): number {
  const orphans = requests.running();
  for (const record of orphans) failOrphan(requests, record, 'the server restarted while the request ran');
  return orphans.length;
}

function failOrphan(requests: RequestStore, record: RequestRecord, message: string): void {
  const inFlight = record.segments.filter((s) => s.state === SegmentState.accepted).map((s) => s.index);
  requests.failInFlight(record, inFlight, RequestState.failedRetryable, { code: ErrorCode.connectionClosed, message });
}

/**
 * Several processes on one store: a request `running` on a process that is
 * gone (killed, crashed) is recovered by a live one, as above. Recoverers take
 * turns on a claim and read the record again under it, so a request another
 * process recovered, or resumed since, is left alone.
 */
export async function recoverDeadOwners(ctx: ServerContext, requests: RequestStore): Promise<number> {
  const processes = ctx.store.processes;
  if (!processes) return 0;
  await ctx.store.sync?.();
  let recovered = 0;
  for (const record of requests.running()) {
    const owner = record.ownerProcess;
    if (owner === processes.ownerId || (owner !== undefined && (await processes.alive(owner)))) continue;
    const release = await processes.claim(`recover:${record.site}:${record.userId}:${record.requestId}`);
    if (!release) continue;
    try {
      await ctx.store.sync?.();
      const current = requests.get(record.userId, record.requestId);
      if (current?.state !== RequestState.running || current.ownerProcess !== owner) continue;
      failOrphan(requests, current, 'the server process generating it stopped');
      await ctx.store.flush?.();
      recovered++;
    } finally {
      await release();
    }
  }
  return recovered;
}

/** Build the realtime module over the server context. */
export const createRealtimeModule: ModuleFactory = (ctx: ServerContext): ServerModule => {
  const tickets = new TicketBook(ctx);
  const requests = new RequestStore(ctx.store, ctx.site, ctx.now);
  let scanTimer: NodeJS.Timeout | undefined;
  let closing = false;
  if (ctx.store.processes) {
    const scan = () => {
      void recoverDeadOwners(ctx, requests)
        .catch((err: unknown) => ctx.log('realtime: looking for requests of stopped processes failed', err))
        .finally(() => {
          if (closing) return;
          scanTimer = setTimeout(scan, REALTIME_TUNING.orphanScanMs);
          scanTimer.unref();
        });
    };
    scan();
  } else recoverOrphans(ctx, requests);
  const sessions = new Set<Session>();
  const wss = new WebSocketServer({
    noServer: true,
    // Deflate costs about 10x latency on loopback (measured: README, Decisions worth knowing); frames are MessagePack.
    perMessageDeflate: false,
    // A larger frame is refused by ws with close 1009 before it is buffered whole.
    maxPayload: LIMITS.maxFrameBytes,
    // The handshake check already required it; ws echoes it in the 101.
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });

  const services = {
    ctx,
    tickets,
    requests,
    onClosed: (session: Session) => sessions.delete(session),
  };

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const requestId = ctx.newId('req');
    socket.on('error', () => undefined);
    try {
      // Several processes on one store: the account and the request journal as the others left them.
      await ctx.store.sync?.();
    } catch (err) {
      ctx.log('realtime: reading the shared store failed', err);
      rejectUpgrade(ctx, socket, new HttpError(500, ApiErrorCode.internalError, 'internal server error'), requestId);
      return;
    }
    let handshake: HandshakeResult;
    try {
      handshake = checkHandshake(ctx, req);
      // One generation per connection (spec 8): a keyed connection counts from here until its request finished or it closed.
      if (handshake.account) handshake.endGeneration = ctx.concurrency.take(handshake.account.userId);
    } catch (err) {
      rejectUpgrade(ctx, socket, err instanceof HttpError ? err : new HttpError(500, ApiErrorCode.internalError, 'internal server error'), requestId);
      return;
    }
    if (handshake.endGeneration) socket.once('close', handshake.endGeneration);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (ctx.draining) {
        ws.close(1012, 'server draining');
        return;
      }
      sessions.add(new Session(ws, handshake, services));
    });
  }

  return {
    routes: [capabilitiesRoute(ctx), browserTicketRoute(ctx, tickets), ...statusRoutes(ctx, requests)] as RouteDef<never, never>[],
    upgrade: { [REALTIME_PATHS.live]: (req, socket, head) => void upgrade(req, socket, head) },
    async drain() {
      await Promise.all([...sessions].map((s) => s.drain()));
    },
    async close() {
      closing = true;
      if (scanTimer) clearTimeout(scanTimer);
      for (const s of sessions) s.terminate();
      await Promise.all([...sessions].map((s) => s.closed));
      wss.close();
    },
  };
};
