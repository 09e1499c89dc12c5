/**
 * What a server module is: routes and WebSocket endpoints over the shared
 * context. Its own file so that `app.ts` (which assembles the modules) and
 * the modules (which implement this) do not import each other.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerContext } from './context.js';
import type { RouteDef, Router } from './http/router.js';

/** A module of routes and WebSocket endpoints (realtime, TTS REST, media, account...). */
export interface ServerModule {
  routes?: RouteDef<never, never>[];
  /** WebSocket upgrade handlers by exact path. */
  upgrade?: Record<string, (req: IncomingMessage, socket: Socket, head: Buffer) => void>;
  /** SIGTERM drain: finish open work politely. */
  drain?(): Promise<void>;
  close?(): Promise<void>;
}

export type ModuleFactory = (ctx: ServerContext, router: Router) => ServerModule;
