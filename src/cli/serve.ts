/**
 * `voxpipe serve [--host H] [--port P|0] [--engine espeak|tone] [--accounts FILE] [--faults JSON] [--allow-private-urls] [--rate-limit N] [--max-concurrent N] [--dialect reference|alt|minimal] [--demo] [--data DIR | --database URL [--database-schema NAME] [--workers N]]`
 * Prints exactly one JSON line when ready:
 * {"event":"listening","baseUrl":...,"rootUrl":...,"wsUrl":...,"rtHttpUrl":...}
 * SIGTERM (and SIGINT, SIGHUP, the starting command gone) drain: open realtime requests get finish
 * `server_draining`, then close 1012.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DialectName } from '../server/dialect.js';
import type { AccountSeed } from '../server/index.js';
import type { FaultPlan } from '../server/faults.js';
import type { SqlStore } from '../server/store/sql.js';
import { numberOption, UsageError } from './args.js';
import { Option, type CliCommand } from './command.js';
import { ENGINE_CHOICES, type EngineChoice } from '../server/engines/choices.js';
import { ExitCode, note, STOP_CAUSES, type Io } from './io.js';
import { defined } from '../defined.js';
import { LOCAL_DEV_API_KEY } from '../protocol/constants.js';
import { VoxpipeError } from '../errors.js';
import { checkDataDir } from './data-dir.js';
import { watchParent } from './parent-watch.js';

/** The port `serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 8765;

interface Options {
  apiKey?: string;
  host?: string;
  port?: string;
  engine?: EngineChoice;
  accounts?: string;
  faults?: string;
  allowPrivateUrls?: boolean;
  rateLimit?: string;
  maxConcurrent?: string;
  dialect?: string;
  demo?: boolean;
  data?: string;
  database?: string;
  databaseSchema?: string;
  workers?: string;
  /** The global option: in memory, which serve is unless --data or --database. */
  ephemeral?: boolean;
}

export const command: CliCommand<Options> = {
  name: 'serve',
  summary: 'run the reference server (one JSON "listening" line on standard output when ready)',
  examples: [
    "voxpipe serve --port 0",
    "voxpipe serve --demo --engine espeak",
    "voxpipe serve --data ./state --faults '{\"latencyMs\":200}'",
  ],
  declare(cmd) {
    cmd
      .addOption(new Option('--host <H>', 'the address to listen on').default('127.0.0.1'))
      .addOption(new Option('--port <P>', 'a port, or 0 for a free one (the listening line says which)').default(String(DEFAULT_PORT)))
      .addOption(new Option('--api-key <KEY>', `the key the server accepts (one account); default VOXPIPE_API_KEY, else the public development key ${LOCAL_DEV_API_KEY}`).conflicts('accounts'))
      .addOption(new Option('--engine <E>', 'espeak when installed, else tone, with auto').choices(ENGINE_CHOICES).default('auto'))
      .addOption(new Option('--accounts <FILE>', 'a JSON array of { apiKey, userId, credits?, apiQuota? }; default one account with VOXPIPE_API_KEY, else sk-local-dev'))
      .addOption(new Option('--faults <JSON>', 'fault injection (FaultPlan), e.g. {"realtimeClose":{"afterAudioFrames":5,"code":1012}}; default none'))
      .addOption(new Option('--allow-private-urls', 'accept loopback and private URLs as task inputs; default off'))
      .addOption(new Option('--rate-limit <REQUESTS_PER_SECOND>', 'per account; default none'))
      .addOption(new Option('--max-concurrent <N>', 'generations an account runs at once (realtime connections, charging creations); beyond it 429 with Retry-After; default none'))
      .addOption(new Option('--dialect <D>', 'how the points the spec leaves open are taken: reference, alt, minimal, or random:SEED (every open point drawn; :off=POINT,... or :only=POINT,... switch points); default VOXPIPE_DIALECT, else reference'))
      .addOption(new Option('--demo', 'serve the browser demo at /demo; default off'))
      .addOption(new Option('--data <DIR>', 'keep accounts, voices, jobs, requests and the ledger in a PGlite database there, across restarts (one process per directory); default in memory').conflicts('database'))
      .addOption(new Option('--database <URL>', 'keep them in a PostgreSQL database instead (postgres://user:password@host:port/db; default VOXPIPE_DATABASE_URL), which several server processes may share'))
      .addOption(new Option('--database-schema <NAME>', 'the database schema the tables live in, created if missing; default public'))
      .addOption(new Option('--workers <N>', 'server processes sharing the port and the --database store (node:cluster), one service; default 1').default('1'));
  },
  run: (_args, values, io) => serve(values, io),
};

/** A dialect's name, checked (a preset, or random:SEED...): a bad one is a usage error naming the choices. */
async function dialectName(value: string | undefined): Promise<DialectName | undefined> {
  if (value === undefined) return undefined;
  // Loaded when serve runs: the drawn dialects' generators are not the parser's concern.
  const { dialectOf } = await import('../server/dialect.js');
  try {
    return dialectOf(value).name;
  } catch (err) {
    throw new UsageError(`--dialect: ${(err as Error).message}`);
  }
}

async function loadAccounts(path: string): Promise<AccountSeed[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--accounts ${path}: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new UsageError('--accounts must hold a JSON array of { apiKey, userId, tier, credits, apiQuota }');
  return parsed.map((a, i) => {
    if (!a || typeof a.apiKey !== 'string' || typeof a.userId !== 'string') throw new UsageError(`--accounts entry ${i} needs string apiKey and userId`);
    return a as AccountSeed;
  });
}

/** The faults `--faults` may arm, and the fields of each (FaultPlan in src/server/faults.ts). */
const FAULT_FIELDS: Record<string, readonly string[] | 'number'> = {
  realtimeClose: ['afterAudioFrames', 'code', 'times'],
  realtimeError: ['afterAudioFrames', 'code', 'retryable', 'times'],
  realtimeDrop: ['afterAudioFrames', 'times'],
  latencyMs: 'number',
  engineFailure: ['match', 'afterChunks', 'times'],
};

/** `--faults JSON`: a FaultPlan; an unknown fault or field is named (a typo would otherwise arm nothing, silently). */
export function parseFaults(json: string): FaultPlan {
  let plan: unknown;
  try {
    plan = JSON.parse(json);
  } catch {
    throw new UsageError('--faults must be a JSON object (see FaultPlan)');
  }
  if (plan === null || typeof plan !== 'object' || Array.isArray(plan)) throw new UsageError('--faults must be a JSON object (see FaultPlan)');
  const known = Object.keys(FAULT_FIELDS).join(', ');
  for (const [key, value] of Object.entries(plan)) {
    const fields = FAULT_FIELDS[key];
    if (fields === undefined) throw new UsageError(`--faults: unknown fault ${JSON.stringify(key)}; the faults are ${known}`);
    if (fields === 'number') {
      if (typeof value !== 'number' || !(value >= 0)) throw new UsageError(`--faults: ${key} must be a number of ms, 0 or more`);
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`--faults: ${key} must be an object with ${fields.join(', ')}`);
    const unknown = Object.keys(value).filter((f) => !fields.includes(f));
    if (unknown.length > 0) throw new UsageError(`--faults: ${key} has no ${unknown.map((f) => JSON.stringify(f)).join(', ')}; its fields are ${fields.join(', ')}`);
  }
  return plan as FaultPlan;
}

/**
 * --data DIR: PGlite there (one process per directory); --database URL (or
 * VOXPIPE_DATABASE_URL): that PostgreSQL, which several processes may
 * share; neither: in memory.
 */
async function openStore(dataDir: string | undefined, databaseUrl: string | undefined, schema: string | undefined, io: Io, setting = '--database'): Promise<SqlStore | undefined> {
  if (dataDir !== undefined && databaseUrl !== undefined) throw new UsageError('--data and --database (or VOXPIPE_DATABASE_URL) name two stores; give one');
  if (schema !== undefined && databaseUrl === undefined) throw new UsageError('--database-schema needs --database URL (or VOXPIPE_DATABASE_URL)');
  if (dataDir !== undefined) {
    await checkDataDir(dataDir, '--data');
    return (await import('../server/store/pglite.js')).PgliteStore.open(dataDir);
  }
  if (databaseUrl === undefined) return undefined;
  const { PostgresStore } = await import('../server/store/postgres.js');
  try {
    return await PostgresStore.open(databaseUrl, { ...defined({ schema }), onError: (err) => note(io, `database connection failed: ${err instanceof Error ? err.message : String(err)}; changes from now on are not kept`) });
  } catch (err) {
    throw databaseError(err, databaseUrl, setting);
  }
}

/** PostgreSQL's SQLSTATE classes a user fixes in the URL or on the server. */
const DATABASE_FIXES: Record<string, string> = {
  '28P01': 'the password is wrong: fix it in the URL',
  '28000': 'the server refuses this user: check the user name in the URL and pg_hba.conf',
  '3D000': 'that database does not exist: create it, or name another in the URL',
  '42501': 'this user may not create the tables: grant it CREATE on the database or schema',
  '3F000': 'that schema does not exist and cannot be created: check --database-schema',
};

/** A store that cannot be opened: one line naming the setting, where (no password) and the fix; not VOXPIPE_BASE_URL. */
export function databaseError(err: unknown, url: string, setting: string): VoxpipeError {
  let where: string;
  try {
    const u = new URL(url);
    where = `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return new VoxpipeError('invalid_config', `${setting} is not a URL; give postgres://user:password@host:port/database`);
  }
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    const fix = DATABASE_FIXES[code];
    if (fix) return new VoxpipeError('database_unavailable', `${setting} (${where}): ${fix}`);
    if (/^E[A-Z]+$/.test(code)) {
      return new VoxpipeError('database_unavailable', `${setting} (${where}): cannot reach the database server (${code}); check the host and port in the URL and that PostgreSQL is running`);
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return new VoxpipeError('database_unavailable', `${setting} (${where}): ${redactUrl(message, url)}; check the URL and the server`);
}

function redactUrl(message: string, url: string): string {
  try {
    const password = new URL(url).password;
    return password ? message.split(decodeURIComponent(password)).join('***').split(password).join('***') : message;
  } catch {
    return message;
  }
}

/** How a worker of `serve --workers N` tells the primary it listens (then it prints nothing to standard output). */
export interface WorkerRole {
  /** The first worker: it says the notes a single server says. */
  first: boolean;
  listening(urls: ListeningLine): void;
}

export interface ListeningLine {
  event: 'listening';
  baseUrl: string;
  rootUrl: string;
  wsUrl: string;
  rtHttpUrl: string;
}

export async function serve(values: Options, io: Io, signals: NodeJS.EventEmitter = process, worker?: WorkerRole): Promise<number> {
  const workers = numberOption(values.workers, 'workers', 1, 256) ?? 1;
  if (!Number.isInteger(workers)) throw new UsageError('--workers must be a whole number');
  const port = numberOption(values.port, 'port', 0, 65_535);
  const rateLimit = numberOption(values.rateLimit, 'rate-limit', 0.01, 1_000_000);
  const maxConcurrent = numberOption(values.maxConcurrent, 'max-concurrent', 1, 1_000_000);
  if (maxConcurrent !== undefined && !Number.isInteger(maxConcurrent)) throw new UsageError('--max-concurrent must be a whole number');
  const engine = values.engine;
  // Where the spec leaves a point open, the dialect takes it one way (src/server/dialect.ts); default VOXPIPE_DIALECT, else reference.
  const dialect = await dialectName(values.dialect ?? (io.env['VOXPIPE_DIALECT'] || undefined));
  let faults: FaultPlan | undefined;
  if (values.faults) faults = parseFaults(values.faults);
  // --ephemeral (a global option): in memory, which serve is unless told where to keep its state.
  if (values.ephemeral && (values.data !== undefined || values.database !== undefined)) throw new UsageError('--ephemeral keeps nothing; it cannot be combined with --data or --database');
  const databaseUrl = values.database ?? (values.ephemeral ? undefined : io.env['VOXPIPE_DATABASE_URL'] || undefined);
  if (workers > 1 && !worker) {
    if (databaseUrl === undefined || values.data !== undefined) {
      throw new UsageError('--workers N needs --database URL (or VOXPIPE_DATABASE_URL): the processes share one PostgreSQL store; a data directory or memory belongs to one process');
    }
    if (values.demo) throw new UsageError('--demo serves one process; run it without --workers');
    const { serveCluster } = await import('./serve-cluster.js');
    return serveCluster(workers, { ...values, database: databaseUrl }, io, signals);
  }
  if (values.apiKey !== undefined && values.apiKey.trim() === '') throw new UsageError('--api-key needs a key');
  const apiKey = values.apiKey ?? (io.env['VOXPIPE_API_KEY'] || LOCAL_DEV_API_KEY);
  const store = await openStore(values.data, databaseUrl, values.databaseSchema, io, values.database !== undefined ? '--database' : 'VOXPIPE_DATABASE_URL');
  const { startServer } = await import('../server/index.js');
  const server = await startServer(
    defined({
      store,
      host: values.host,
      port,
      engine,
      accounts: values.accounts === undefined ? [{ apiKey, userId: 'local-dev' }] : await loadAccounts(values.accounts),
      faults,
      allowPrivateUrls: values.allowPrivateUrls,
      rateLimit: rateLimit === undefined ? undefined : { requestsPerSecond: rateLimit },
      maxConcurrentGenerations: maxConcurrent,
      dialect,
      demo: values.demo,
    }),
  );
  const line: ListeningLine = { event: 'listening', baseUrl: server.baseUrl, rootUrl: server.rootUrl, wsUrl: server.wsUrl, rtHttpUrl: server.rtHttpUrl };
  if (worker) worker.listening(line);
  else io.stdout.write(`${JSON.stringify(line)}\n`);
  if (worker && !worker.first) return waitForStop(server, store, io, signals, false);
  note(io, `engine ${server.ctx.engine.name}, formats ${server.ctx.formats.join(',')}, dialect ${(await import('../server/dialect.js')).describeDialect(server.ctx.dialect.name)}`);
  if (values.demo) note(io, `demo at ${server.rootUrl}/demo (open it in a browser; it speaks for the first account)`);
  note(io, faults ? `faults on: ${JSON.stringify(faults)}` : 'no faults injected');
  note(io, values.data !== undefined ? `store: PGlite in ${resolve(values.data)} (kept across restarts)` : databaseUrl !== undefined ? 'store: PostgreSQL (--database)' : 'store: in memory (nothing kept after it stops; --data DIR keeps it)');
  // The public development key is no secret: say it (note() would redact it, as every key the server holds).
  if (values.accounts === undefined && apiKey === LOCAL_DEV_API_KEY) {
    io.stderr.write(`voxpipe: accepts the key ${LOCAL_DEV_API_KEY} (the public development key; --api-key KEY or VOXPIPE_API_KEY for your own); local files as inputs need --allow-private-urls\n`);
  } else {
    note(io, `accepts the key ${values.accounts ? `of each account in ${values.accounts}` : values.apiKey !== undefined ? 'given by --api-key' : 'in VOXPIPE_API_KEY'}; local files as inputs need --allow-private-urls`);
  }
  return waitForStop(server, store, io, signals, true);
}

/**
 * SIGTERM, SIGINT and SIGHUP drain the server, then close its store (once,
 * whichever comes first or twice); so does the command that started it going
 * away (`npx voxpipe serve` stopped: see parent-watch.ts), watched when
 * `signals` is this process and it is not a worker (a worker's primary stops it).
 */
function waitForStop(server: { drain(): Promise<void> }, store: SqlStore | undefined, io: Io, signals: NodeJS.EventEmitter, say: boolean): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const listeners = STOP_SIGNALS.map((signal) => [signal, () => stop(signal)] as const);
    const unwatch = signals === process && say ? watchParent(io.env, (event) => stop(event === 'parent_gone' ? STOP_CAUSES.parent_gone.text : event)) : () => undefined;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      unwatch();
      for (const [signal, listener] of listeners) signals.off(signal, listener);
      if (say) note(io, `${why}: draining`);
      server.drain().then(
        () => (store ? store.close() : undefined),
      ).then(
        () => resolve(ExitCode.ok),
        () => resolve(ExitCode.error),
      );
    };
    for (const [signal, listener] of listeners) signals.once(signal, listener);
  });
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
