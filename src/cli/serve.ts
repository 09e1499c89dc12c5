/**
 * `voxpipe serve [--host H] [--port P|0] [--engine espeak|tone] [--accounts FILE] [--faults JSON] [--allow-private-urls] [--rate-limit N] [--dialect reference|alt|minimal] [--demo] [--data DIR | --database URL [--database-schema NAME]]`
 * Prints exactly one JSON line when ready:
 * {"event":"listening","baseUrl":...,"rootUrl":...,"wsUrl":...,"rtHttpUrl":...}
 * SIGTERM (and SIGINT) drain: open realtime requests get finish `server_draining`, then close 1012.
 */
import { readFile } from 'node:fs/promises';
import { DIALECTS } from '../server/dialect.js';
import { startServer, type AccountSeed } from '../server/index.js';
import type { FaultPlan } from '../server/faults.js';
import { parseArgs } from 'node:util';
import type { SqlStore } from '../server/store/sql.js';
import { choice, numberOption, usage, UsageError } from './args.js';
import { ExitCode, note, type Io } from './io.js';

export const SERVE_USAGE = 'voxpipe serve [--host H] [--port P|0] [--engine espeak|tone|auto] [--accounts FILE] [--faults JSON] [--allow-private-urls] [--rate-limit REQUESTS_PER_SECOND] [--dialect reference|alt|minimal] [--demo] [--data DIR | --database URL [--database-schema NAME]]';

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

/**
 * --data DIR: PGlite there; --database URL (or VOXPIPE_DATABASE_URL): that
 * PostgreSQL; neither: in memory. Either way one server process per store.
 */
async function openStore(dataDir: string | undefined, databaseUrl: string | undefined, schema: string | undefined, io: Io): Promise<SqlStore | undefined> {
  if (dataDir !== undefined && databaseUrl !== undefined) throw new UsageError('--data and --database (or VOXPIPE_DATABASE_URL) name two stores; give one');
  if (schema !== undefined && databaseUrl === undefined) throw new UsageError('--database-schema needs --database URL (or VOXPIPE_DATABASE_URL)');
  if (dataDir !== undefined) return (await import('../server/store/pglite.js')).PgliteStore.open(dataDir);
  if (databaseUrl === undefined) return undefined;
  const { PostgresStore } = await import('../server/store/postgres.js');
  return PostgresStore.open(databaseUrl, { ...(schema !== undefined && { schema }), onError: (err) => note(io, `database connection failed: ${err instanceof Error ? err.message : String(err)}; changes from now on are not kept`) });
}

export async function serve(argv: string[], io: Io, signals: NodeJS.EventEmitter = process): Promise<number> {
  const { values } = usage(() =>
    parseArgs({
      args: argv,
      strict: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        engine: { type: 'string' },
        accounts: { type: 'string' },
        faults: { type: 'string' },
        'allow-private-urls': { type: 'boolean' },
        'rate-limit': { type: 'string' },
        dialect: { type: 'string' },
        demo: { type: 'boolean' },
        data: { type: 'string' },
        database: { type: 'string' },
        'database-schema': { type: 'string' },
      },
    }),
  );
  const port = numberOption(values.port, 'port', 0, 65_535);
  const rateLimit = numberOption(values['rate-limit'], 'rate-limit', 0.01, 1_000_000);
  const engine = choice(values.engine, 'engine', ['espeak', 'tone', 'auto'] as const);
  // Where the spec leaves a point open, the dialect takes it one way (src/server/dialect.ts); default VOXPIPE_DIALECT, else reference.
  const dialect = choice(values.dialect ?? (io.env['VOXPIPE_DIALECT'] || undefined), 'dialect', DIALECTS);
  let faults: FaultPlan | undefined;
  if (values.faults) {
    try {
      faults = JSON.parse(values.faults) as FaultPlan;
    } catch {
      throw new UsageError('--faults must be a JSON object (see FaultPlan)');
    }
  }
  const store = await openStore(values.data, values.database ?? (io.env['VOXPIPE_DATABASE_URL'] || undefined), values['database-schema'], io);
  const server = await startServer({
    ...(store && { store }),
    ...(values.host !== undefined && { host: values.host }),
    ...(port !== undefined && { port }),
    ...(engine !== undefined && { engine }),
    ...(values.accounts !== undefined && { accounts: await loadAccounts(values.accounts) }),
    ...(faults !== undefined && { faults }),
    ...(values['allow-private-urls'] && { allowPrivateUrls: true }),
    ...(rateLimit !== undefined && { rateLimit: { requestsPerSecond: rateLimit } }),
    ...(dialect !== undefined && { dialect }),
    ...(values.demo && { demo: true }),
  });
  io.stdout.write(`${JSON.stringify({ event: 'listening', baseUrl: server.baseUrl, rootUrl: server.rootUrl, wsUrl: server.wsUrl, rtHttpUrl: server.rtHttpUrl })}\n`);
  note(io, `engine ${server.ctx.engine.name}, formats ${server.ctx.formats.join(',')}, dialect ${server.ctx.dialect.name}`);
  if (values.demo) note(io, `demo at ${server.rootUrl}/demo (open it in a browser; it speaks for the first account)`);
  note(io, `accepts the key ${values.accounts ? `of each account in ${values.accounts}` : io.env['VOXPIPE_API_KEY'] ? 'in VOXPIPE_API_KEY' : '"sk-local-dev" (set VOXPIPE_API_KEY to choose another)'}; local files as inputs need --allow-private-urls`);
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      note(io, `${signal}: draining`);
      server.drain().then(
        () => (store ? store.close() : undefined),
      ).then(
        () => resolve(ExitCode.ok),
        () => resolve(ExitCode.error),
      );
    };
    signals.once('SIGTERM', () => stop('SIGTERM'));
    signals.once('SIGINT', () => stop('SIGINT'));
  });
}
