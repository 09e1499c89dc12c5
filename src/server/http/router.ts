/**
 * A small route table over node:http. Why not a framework: the server needs
 * one thing a framework would make us bend around — the same zod schemas
 * validate requests and generate `openapi.json` — and ~40 routes with path
 * parameters are a short loop. Each route is data (`RouteDef`), so the OpenAPI
 * generator reads the same table the dispatcher runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Account } from '../store/types.js';
import { ApiErrorCode, HttpError, badRequest } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler returns; or nothing when it wrote the response itself. */
export interface Reply {
  status?: number;
  /** JSON body. */
  json?: unknown;
  /** Raw body (audio, images, video). */
  body?: Buffer | string;
  headers?: Record<string, string | number>;
}

export interface RouteContext<B = unknown, Q = unknown> {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  /** Request id of this call, sent back in `x-request-id` and error bodies. */
  requestId: string;
  /** The authenticated account (routes with `auth: false` get undefined). */
  account: Account;
  /** Validated JSON body (when the route has `body`). */
  body: B;
  /** Validated query (when the route has `query`). */
  query: Q;
  /** The raw request body (read lazily; for multipart and binary uploads). */
  rawBody(): Promise<Buffer>;
}

export interface ResponseDoc {
  description: string;
  /** Content type; default application/json. */
  contentType?: string;
  schema?: z.ZodType;
}

export interface RouteDef<B = unknown, Q = unknown> {
  method: HttpMethod;
  /** OpenAPI-style path from the host root, e.g. `/api/open/v1/speech/tts/jobs/{taskId}`. */
  path: string;
  summary: string;
  tags?: string[];
  /** Default true: a Bearer key is required. */
  auth?: boolean;
  /** Capability name checked against the account's capabilities (403). */
  capability?: string;
  /** JSON body schema (a non-JSON body is the handler's business via rawBody). */
  body?: z.ZodType<B>;
  /** Query schema (values arrive as strings; use z.coerce). */
  query?: z.ZodType<Q>;
  /** Request headers documented (e.g. `Idempotency-Key`, `X-Request-Id`). */
  headers?: { name: string; required: boolean; description: string }[];
  responses?: Record<number, ResponseDoc>;
  /** Leave out of openapi.json (legacy aliases are listed by their current route). */
  hidden?: boolean;
  /** Accepts multipart/form-data too (documented in OpenAPI). */
  multipart?: boolean;
  /** A charging creation: counted against the account's concurrent generations while it runs (`concurrency.ts`); default false. */
  generation?: boolean;
  handler(ctx: RouteContext<B, Q>): Promise<Reply | void> | Reply | void;
}

/** Identity helper that infers B and Q from the schemas. */
export function defineRoute<B = unknown, Q = unknown>(def: RouteDef<B, Q>): RouteDef<B, Q> {
  return def;
}

interface CompiledRoute {
  def: RouteDef<unknown, unknown>;
  regex: RegExp;
  names: string[];
}

function compile(def: RouteDef<unknown, unknown>): CompiledRoute {
  const names: string[] = [];
  const pattern = def.path
    .split('/')
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (m) {
        names.push(m[1]!);
        return '([^/]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { def, regex: new RegExp(`^${pattern}/?$`), names };
}

export interface MatchResult {
  def: RouteDef<unknown, unknown>;
  params: Record<string, string>;
}

export class Router {
  readonly #routes: CompiledRoute[] = [];

  add(...defs: RouteDef<never, never>[]): void {
    for (const def of defs) this.#routes.push(compile(def as unknown as RouteDef<unknown, unknown>));
  }

  get routes(): RouteDef<unknown, unknown>[] {
    return this.#routes.map((r) => r.def);
  }

  /** The route for method and path; `methodNotAllowed` when only the path matched. */
  match(method: string, pathname: string): MatchResult | 'methodNotAllowed' | undefined {
    let pathMatched = false;
    for (const r of this.#routes) {
      const m = r.regex.exec(pathname);
      if (!m) continue;
      pathMatched = true;
      if (r.def.method !== method && !(method === 'HEAD' && r.def.method === 'GET')) continue;
      const params: Record<string, string> = {};
      r.names.forEach((name, i) => {
        const raw = m[i + 1]!;
        try {
          params[name] = decodeURIComponent(raw);
        } catch {
          // `%E0%A4%A`: a malformed percent-encoding is the client's mistake, not a server error.
          throw badRequest(`path parameter ${name} is not valid percent-encoding`);
        }
      });
      return { def: r.def, params };
    }
    return pathMatched ? 'methodNotAllowed' : undefined;
  }
}

/** Largest JSON body accepted: 1 MiB. */
export const MAX_JSON_BYTES = 1024 * 1024;
/** Largest multipart or binary upload (reference audio, media): 25 MiB. */
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/**
 * Bytes of request bodies the server holds at once, all requests together:
 * 64 MiB (two uploads at their limit and change). A body that would go past
 * it is answered 429 (retry shortly) instead of being held, so many large
 * bodies at once cannot take the process's memory.
 */
export const MAX_HELD_BODY_BYTES = 64 * 1024 * 1024;

/** What one request may hold of the server's `HeldBodies`: `take` says whether `bytes` more fit. */
export interface BodyAllowance {
  take(bytes: number): boolean;
}

/** The server's account of body bytes held (`MAX_HELD_BODY_BYTES`); each request's share is given back when its response closes. */
export class HeldBodies {
  #held = 0;
  constructor(readonly limit: number = MAX_HELD_BODY_BYTES) {}

  /** The allowance of the request answered by `res`. */
  for(res: ServerResponse): BodyAllowance {
    let mine = 0;
    res.once('close', () => {
      this.#held -= mine;
      mine = 0;
    });
    return {
      take: (bytes) => {
        if (this.#held + bytes > this.limit) return false;
        this.#held += bytes;
        mine += bytes;
        return true;
      },
    };
  }
}

/** The 429 of a body that would take the server past `MAX_HELD_BODY_BYTES`. */
export function tooManyBodies(): HttpError {
  return new HttpError(429, ApiErrorCode.rateLimited, 'the server is holding too many request bodies at once; retry after 1 s', {}, { 'retry-after': '1' });
}

/** The client went away before its request body was complete: nothing to answer, and no fault of the server's. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
}

/** The 413 of a body over `limit`, in the spec's error body. */
export function tooLarge(limit: number): HttpError {
  return new HttpError(413, ApiErrorCode.invalidRequest, `request body exceeds ${limit} bytes`);
}

/**
 * The request body, at most `limit` bytes, held within `keep` (the request's
 * share of the server's `HeldBodies`); without `keep` it is counted and
 * thrown away as it arrives (a route that reads no body holds none), and the
 * promise resolves with an empty buffer. Past the limit (or a
 * `Content-Length` announcing more) it rejects with 413 at once, past the
 * allowance with 429, and stops reading: the response reads the rest into
 * nothing after its answer (`DrainingResponse`), so the client, still
 * writing, can read it. A client that aborts mid-body rejects with
 * `ClientGoneError`.
 */
export function readBody(req: IncomingMessage, limit: number, keep?: BodyAllowance): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const announced = Number(req.headers['content-length']);
    if (Number.isFinite(announced) && announced > limit) {
      reject(tooLarge(limit));
      return;
    }
    if (req.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    // A body of announced length is taken from the allowance at once and read into one buffer (no copy at the end).
    let whole: Buffer | undefined;
    if (keep && Number.isFinite(announced) && announced > 0) {
      if (!keep.take(announced)) {
        reject(tooManyBodies());
        return;
      }
      whole = Buffer.allocUnsafe(announced);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onClose);
    };
    const refuse = (err: HttpError) => {
      done();
      whole = undefined;
      chunks.length = 0;
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) refuse(tooLarge(limit));
      else if (!keep) return;
      else if (whole) chunk.copy(whole, size - chunk.length);
      else if (keep.take(chunk.length)) chunks.push(chunk);
      else refuse(tooManyBodies());
    };
    const onEnd = () => {
      done();
      resolve(whole ? whole.subarray(0, size) : Buffer.concat(chunks));
    };
    const gone = (cause?: unknown) => {
      done();
      reject(new ClientGoneError('the client closed the connection before the request body was complete', cause === undefined ? undefined : { cause }));
    };
    const onError = (err: Error) => gone(err);
    const onAborted = () => gone();
    const onClose = () => {
      if (!req.readableEnded) gone();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    req.on('close', onClose);
  });
}

/** Zod issues to one readable sentence naming the field. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => {
      const path = i.path.map(String).join('.');
      if (i.code === 'unrecognized_keys') return `unknown field ${[path, i.keys[0]].filter(Boolean).join('.')}`;
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}

export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest('body is not valid JSON');
  }
}
