/**
 * The reference server: one process, one port. REST under `/api/open/v1`,
 * compatible routes and downloads at the root, realtime at `/v2/tts/...`.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { registerSecret } from '../errors.js';
import { LOCAL_DEV_API_KEY } from '../protocol/constants.js';
import { defined } from '../defined.js';
import { createEngine, type EngineChoice, type SpeechEngine } from './engines/index.js';
import { supportedFormats } from './audio/encoder.js';
import { newId, stderrLog, type ServerContext, type ServerLog, type ServerUrls } from './context.js';
import { createDemoModule } from './demo/index.js';
import { dialectOf, type DialectName } from './dialect.js';
import { dialectReply, errorReply, startForeignHost, writeDialectReply, type ForeignHost } from './dialect-http.js';
import { resampledEngine } from './engines/resampled.js';
import { Faults, type FaultPlan } from './faults.js';
import { authenticate } from './http/auth.js';
import { ApiErrorCode, HttpError } from './http/errors.js';
import { ClientGoneError, describeZodError, HeldBodies, MAX_JSON_BYTES, MAX_UPLOAD_BYTES, parseJson, readBody, Router, type Reply, type RouteContext } from './http/router.js';
import { Ledger } from './ledger.js';
import { RateLimiter, type RateLimitOptions } from './http/rate-limit.js';
import { ConcurrencyCap } from './concurrency.js';
import { DrainingResponse } from './http/response.js';
import { endLingering } from './net/linger.js';
import type { ServerModule } from './module.js';
import { SERVER_MODULES } from './modules.js';
import { MemoryStore } from './store/memory.js';
import type { Account, Store } from './store/types.js';
import { HEADERS } from '../protocol/rest.js';

/** An account to create at start-up (`serve --accounts FILE` takes an array of these). */
export interface AccountSeed {
  apiKey: string;
  userId: string;
  tier?: string;
  credits?: number;
  apiQuota?: number;
  disabled?: boolean;
  capabilities?: string[];
  webhookUrl?: string;
}

/** The documented development key, used when VOXPIPE_API_KEY is not set (`LOCAL_DEV_API_KEY` of `voxpipe`). */
export const DEV_API_KEY = LOCAL_DEV_API_KEY;

export interface ServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /**
   * Default 'auto': espeak when installed, else tone. An engine (or its
   * promise: one already starting in its worker while the server's modules
   * load) is the server's from then on: it closes it.
   */
  engine?: EngineChoice | SpeechEngine | Promise<SpeechEngine>;
  /** Default: one account with key VOXPIPE_API_KEY or `sk-local-dev`. */
  accounts?: AccountSeed[];
  /** Faults armed at start (tests); default none. */
  faults?: FaultPlan;
  /** Accept loopback and private URLs as ASR/media inputs; default false (spec: public URLs only). */
  allowPrivateUrls?: boolean;
  /** First-frame auth timeout on realtime connections; default 10_000 ms. */
  authTimeoutMs?: number;
  /** Site name; default 'local'. */
  site?: string;
  /**
   * Storage; default in memory. A promise lets a store that takes time to
   * open (PGlite, about 0.5 s) open while the engine starts.
   */
  store?: Store | Promise<Store>;
  /** Per-account REST rate limit (429 with Retry-After); default none. */
  rateLimit?: RateLimitOptions;
  /**
   * Generations an account runs at once (realtime connections, charging HTTP
   * creations); beyond it 429 `rate_limited` with `Retry-After`, on REST and
   * on the realtime upgrade alike (`concurrency.ts`); default none.
   */
  maxConcurrentGenerations?: number;
  /** How the points the spec leaves open are taken (`dialect.ts`); default `VOXPIPE_DIALECT`, else `reference`. */
  dialect?: DialectName;
  /**
   * Throwaway syntheses the espeak engine runs before it takes requests, so
   * the first request is not slowed by V8's lazy compilation; default 3. A
   * process that speaks once and exits (the CLI's embedded server) gains
   * nothing from them and passes 0.
   */
  engineWarmUpRounds?: number;
  /** Serve the browser demo at `/demo` for the first account (`serve --demo`); default off. */
  demo?: boolean;
  /** Where internal errors go; default standard error with the stack. */
  log?: ServerLog;
  /**
   * Where events that are nobody's fault go (a client that aborts mid-body);
   * default standard error when `VOXPIPE_DEBUG` is set, otherwise nowhere.
   */
  debug?: (line: string) => void;
}

function stderrDebug(line: string): void {
  if (process.env['VOXPIPE_DEBUG']) process.stderr.write(`voxpipe server: debug: ${line}\n`);
}

/** Whether the request carries a body (announced by its length or chunked). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

export type { ModuleFactory, ServerModule } from './module.js';

export interface ReferenceServer extends ServerUrls {
  port: number;
  host: string;
  ctx: ServerContext;
  router: Router;
  faults: Faults;
  /** Concurrent generations per account: the cap (`set`) and what ran (`stats`: running, peak, refusals). */
  concurrency: ConcurrencyCap;
  /** Create (or replace) an account. */
  addAccount(seed: AccountSeed): Account;
  /** Drain realtime sessions (finish `server_draining`, close 1012) and stop. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function accountFromSeed(seed: AccountSeed): Account {
  registerSecret(seed.apiKey);
  return {
    userId: seed.userId,
    apiKey: seed.apiKey,
    tier: seed.tier ?? 'developer',
    credits: seed.credits ?? 1_000_000,
    apiQuota: seed.apiQuota ?? 1_000_000,
    disabled: seed.disabled ?? false,
    capabilities: seed.capabilities,
    webhookUrl: seed.webhookUrl,
    webhookSecret: newId('whsec'),
  };
}

/**
 * A persistent store keeps its accounts, and their balances, across restarts:
 * a missing account is created; an existing one keeps its balances and takes
 * the seed's key (the key may change between runs, e.g. VOXPIPE_API_KEY).
 */
function seedAccount(store: Store, seed: AccountSeed): void {
  const existing = store.accounts.get(seed.userId);
  if (!existing) {
    store.accounts.set(seed.userId, accountFromSeed(seed));
    return;
  }
  registerSecret(seed.apiKey);
  registerSecret(existing.apiKey);
  if (existing.apiKey !== seed.apiKey) store.accounts.set(seed.userId, { ...existing, apiKey: seed.apiKey });
}

/** Every reply goes out in the dialect's form (`dialect-http.ts`; a preset's is ours). */
function writeReply(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, reply: Reply, head: boolean): void {
  writeDialectReply(ctx.dialect.wire, req, res, dialectReply(ctx.dialect.wire, reply), head);
}

function writeError(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, requestId: string, err: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeReply(ctx, req, res, errorReply(ctx.dialect, err.status, { code: err.code, message: err.message, requestId, ...err.extra }, err.headers), false);
}

/** Start the reference server and resolve once it listens. */
export async function startServer(options: ServerOptions = {}): Promise<ReferenceServer> {
  const dialect = dialectOf(options.dialect); // an unknown name fails before anything starts
  const [opened, started] = await Promise.allSettled([
    options.store ?? new MemoryStore(),
    typeof options.engine === 'object' ? options.engine : createEngine(options.engine ?? 'auto', defined({ warmUpRounds: options.engineWarmUpRounds })),
  ]);
  if (opened.status === 'rejected') {
    if (started.status === 'fulfilled') await started.value.close();
    throw opened.reason;
  }
  if (started.status === 'rejected') throw started.reason; // the caller closes the store it gave
  const store: Store = opened.value;
  // A dialect that draws the PCM rate gets the engine's output resampled to it.
  const engine = dialect.sampleRate === undefined ? started.value : resampledEngine(started.value, dialect.sampleRate);
  const seeds = options.accounts ?? [{ apiKey: process.env['VOXPIPE_API_KEY'] || DEV_API_KEY, userId: 'local-dev' }];
  for (const seed of seeds) seedAccount(store, seed);

  const faults = new Faults();
  if (options.faults) faults.set(options.faults);
  // One clock for the whole server (ledger, request store, tickets, event timestamps).
  const now = () => new Date();
  const ctx: ServerContext = {
    store,
    ledger: new Ledger(store, now),
    faults,
    engine,
    formats: supportedFormats(),
    urls: { baseUrl: '', rootUrl: '', wsUrl: '', rtHttpUrl: '' },
    site: options.site ?? 'local',
    allowPrivateUrls: options.allowPrivateUrls ?? false,
    authTimeoutMs: options.authTimeoutMs ?? 10_000, // 10 s
    now,
    newId,
    draining: false,
    dialect,
    log: options.log ?? stderrLog,
    concurrency: new ConcurrencyCap(options.maxConcurrentGenerations),
  };

  const debug = options.debug ?? stderrDebug;
  const heldBodies = new HeldBodies();
  const limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : undefined;
  const router = new Router();
  const modules = SERVER_MODULES.map((factory) => factory(ctx, router));
  if (options.demo && seeds[0]) modules.push(createDemoModule(ctx, { apiKey: seeds[0].apiKey }));
  for (const m of modules) if (m.routes) router.add(...m.routes);
  const upgrades = new Map<string, NonNullable<ServerModule['upgrade']>[string]>();
  for (const m of modules) for (const [path, handler] of Object.entries(m.upgrade ?? {})) upgrades.set(path, handler);

  // Answers given before a body is complete must stay readable by a client still writing it (http/response.ts).
  const server: Server = createServer({ ServerResponse: DrainingResponse }, (req, res) => {
    void handle(req, res);
  });
  server.keepAliveTimeout = 5_000; // 5 s

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newId('req');
    res.setHeader(HEADERS.requestId, requestId);
    res.setHeader(HEADERS.svcRequestId, requestId);
    let release: (() => void) | undefined;
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = req.method ?? 'GET';
      const match = router.match(method, url.pathname);
      if (match === undefined) throw new HttpError(404, ApiErrorCode.notFound, `no route ${url.pathname}`);
      if (match === 'methodNotAllowed') throw new HttpError(405, ApiErrorCode.invalidRequest, `method ${method} not allowed on ${url.pathname}`);
      const { def, params } = match;
      // Several processes on one store: what another one acknowledged is read first.
      await store.sync?.();
      const account = def.auth === false ? (undefined as unknown as Account) : authenticate(store, req.headers, url);
      if (account && limiter) limiter.take(account.userId);
      if (account && def.generation) release = ctx.concurrency.take(account.userId);
      if (account && def.capability && account.capabilities && !account.capabilities.includes(def.capability)) {
        throw new HttpError(403, ApiErrorCode.forbidden, `this API key has no access to ${def.capability}`);
      }
      let query: unknown = undefined;
      if (def.query) {
        const parsed = def.query.safeParse(Object.fromEntries(url.searchParams));
        if (!parsed.success) throw new HttpError(400, ApiErrorCode.invalidRequest, `invalid query: ${describeZodError(parsed.error)}`);
        query = parsed.data;
      }
      let raw: Buffer | undefined;
      const contentType = req.headers['content-type'] ?? '';
      const isMultipart = contentType.startsWith('multipart/form-data');
      // Only a route that reads a body keeps one: an upload where the route takes multipart, else JSON. Any
      // other body is held to the JSON limit too (413) but thrown away as it arrives.
      const upload = def.multipart === true && isMultipart;
      const keep = upload || def.body !== undefined ? heldBodies.for(res) : undefined;
      const rawBody = async () => (raw ??= await readBody(req, upload ? MAX_UPLOAD_BYTES : MAX_JSON_BYTES, keep));
      if (hasBody(req)) await rawBody();
      let body: unknown = undefined;
      if (def.body && !(def.multipart && isMultipart)) {
        const parsed = def.body.safeParse(parseJson(await rawBody()) ?? {});
        if (!parsed.success) throw new HttpError(400, ApiErrorCode.invalidRequest, `invalid body: ${describeZodError(parsed.error)}`);
        body = parsed.data;
      }
      const routeCtx: RouteContext = { req, res, url, params, requestId, account, body, query, rawBody };
      const reply = await def.handler(routeCtx);
      // Nothing is acknowledged before it is kept: a persistent store's writes for this request land first.
      await store.flush?.();
      if (reply) writeReply(ctx, req, res, reply, method === 'HEAD');
      else if (!res.writableEnded && !res.headersSent) res.end();
    } catch (err) {
      await store.flush?.().catch(() => undefined);
      if (err instanceof ClientGoneError) {
        // The client aborted mid-body: nobody to answer, nothing of ours failed.
        debug(`${req.method} ${(req.url ?? '').split('?')[0]}: ${err.message}`);
        res.destroy();
        return;
      }
      if (err instanceof HttpError) writeError(ctx, req, res, requestId, err);
      else {
        ctx.log(`internal error on ${req.method} ${(req.url ?? '').split('?')[0]}`, err);
        writeError(ctx, req, res, requestId, new HttpError(500, ApiErrorCode.internalError, 'internal server error'));
      }
    } finally {
      release?.();
    }
  }

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const handler = upgrades.get(path);
    if (!handler) {
      endLingering(socket, 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    handler(req, socket, head);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // The parser reports every later chunk of a connection it gave up on too: the first report answers.
    if (socket.writableEnded) return;
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    endLingering(socket, `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: 1,000 clients connecting at once overflowed Node's default of 511 (bench/concurrency.mjs).
    server.listen({ port: options.port ?? 0, host, backlog: 4_096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const rootUrl = `http://${hostPart}:${port}`;
  Object.assign(ctx.urls, { rootUrl, baseUrl: `${rootUrl}/api/open/v1`, wsUrl: `ws://${hostPart}:${port}`, rtHttpUrl: rootUrl });
  // A drawn dialect may redirect signed files to another origin: a second listener (dialect-http.ts).
  const foreign: ForeignHost | undefined =
    dialect.wire.redirectHost === 'other'
      ? await startForeignHost(
          dialect.wire,
          host,
          (req, res) => void handle(req, res),
          (req, res) => writeError(ctx, req, res, newId('req'), new HttpError(403, ApiErrorCode.forbidden, 'an Authorization header was sent to another origin than the service (this host serves signed URLs only)')),
        )
      : undefined;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      for (const m of modules) await m.close?.();
      await foreign?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await engine.close();
    })());

  return {
    ...ctx.urls,
    port,
    host,
    ctx,
    router,
    faults,
    concurrency: ctx.concurrency,
    addAccount(seed) {
      const account = accountFromSeed(seed);
      store.accounts.set(account.userId, account);
      return account;
    },
    async drain() {
      ctx.draining = true;
      for (const m of modules) await m.drain?.();
      await close();
    },
    close,
  };
}
