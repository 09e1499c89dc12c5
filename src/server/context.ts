/**
 * What every part of the reference server shares: options, store, ledger,
 * faults, the speech engine, working formats, URLs and the clock.
 */
import type { Dialect } from './dialect.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AudioFormat } from '../protocol/audio.js';
import type { SpeechEngine } from './engines/types.js';
import type { Faults } from './faults.js';
import type { ConcurrencyCap } from './concurrency.js';
import type { Ledger } from './ledger.js';
import type { Store } from './store/types.js';

export interface ServerUrls {
  /** `{base_url}`: root plus `/api/open/v1`. */
  baseUrl: string;
  /** `{root_url}`: the host root. */
  rootUrl: string;
  /** `{ws_url}`: WebSocket root of realtime TTS. */
  wsUrl: string;
  /** `{rt_http_url}`: HTTP root of the realtime service. */
  rtHttpUrl: string;
}

export interface ServerContext {
  store: Store;
  ledger: Ledger;
  faults: Faults;
  engine: SpeechEngine;
  /** Formats whose encoders work on this machine. */
  formats: readonly AudioFormat[];
  /** Filled in once the server listens. */
  urls: ServerUrls;
  /** Site name announced in `authenticated` and bound into browser tickets. */
  site: string;
  /** Allow loopback/LAN URLs as ASR and media inputs (local tests only). Default false. */
  allowPrivateUrls: boolean;
  /** Timeout of the first-frame `auth` on realtime connections, ms. */
  authTimeoutMs: number;
  now(): Date;
  /** A new opaque id with a prefix, e.g. `req_...`. */
  newId(prefix: string): string;
  /** Emitted by the server when draining begins. */
  draining: boolean;
  /** How this server takes the points the spec leaves open (`dialect.ts`). */
  dialect: Dialect;
  /** Where the server reports its own internal errors (never to a client). */
  log: ServerLog;
  /** The account's concurrent generations and their cap (`concurrency.ts`). */
  concurrency: ConcurrencyCap;
}

/** One internal error of the server: where it happened, and the error. */
export type ServerLog = (where: string, error: unknown) => void;

/** The default log: one line per error on standard error, with the stack (`voxpipe serve`). */
export const stderrLog: ServerLog = (where, error) => {
  process.stderr.write(`voxpipe server: ${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
};

/** A REST error body in the dialect's shape (spec 7.1 describes both). */
export function errorBody(ctx: Pick<ServerContext, 'dialect'>, fields: { code: string; message: string; requestId: string } & Record<string, unknown>): Record<string, unknown> {
  return ctx.dialect.errorBody === 'flat' ? fields : { error: fields };
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}

export { randomUUID };
