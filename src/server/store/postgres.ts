/**
 * The store on a PostgreSQL server, through `pg`:
 * `voxpipe serve --database postgres://...` (or `VOXPIPE_DATABASE_URL`).
 * The same schema and write-through cache as PGlite (`sql.ts`), in the
 * database schema `schema` (default `public`), so one PostgreSQL can hold
 * several independent services.
 *
 * One server process per store: `open` takes a session advisory lock on the
 * schema's name and fails with `database_in_use` while another process
 * holds it. PostgreSQL releases the lock when that process's connection
 * ends, killed or not, so a restart after `kill -9` just works.
 */
import { VoxpipeError, registerSecret } from '../../errors.js';
import { LocalErrorCode } from '../../protocol/codes.js';
import { SqlStore, type SqlDatabase } from './sql.js';

export interface PostgresStoreOptions {
  /** Database schema the tables live in; created if missing. Default `public`. */
  schema?: string;
  /** Told when the connection fails after opening (the writes after that fail; `flush()` throws). */
  onError?: (error: unknown) => void;
}

export class DatabaseInUseError extends VoxpipeError {
  override name = 'DatabaseInUseError';
  constructor(readonly schema: string) {
    super(LocalErrorCode.databaseInUse, `the store in database schema ${schema} is in use by another voxpipe server (one process per store; stop it, or give this one another --database-schema)`);
  }
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresStore extends SqlStore {
  /** Connect, take the store's lock, create the schema if needed and load every record. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const schema = options.schema ?? 'public';
    if (!IDENTIFIER.test(schema)) throw new VoxpipeError(LocalErrorCode.invalidConfig, `database schema ${JSON.stringify(schema)}: use lower-case letters, digits and _`);
    // The password must never reach a message: errors that quote the URL are redacted.
    try {
      const password = new URL(url).password;
      if (password) registerSecret(decodeURIComponent(password));
    } catch {
      throw new VoxpipeError(LocalErrorCode.invalidConfig, 'the database URL is not a URL (postgres://user:password@host:port/database)');
    }
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    client.on('error', (err) => options.onError?.(err));
    await client.connect();
    const db: SqlDatabase = {
      query: (sql, params) => client.query(sql, params),
      exec: (sql) => client.query(sql),
      close: () => client.end(),
    };
    try {
      const locked = (await client.query('select pg_try_advisory_lock(hashtext($1)) as locked', [`voxpipe:${schema}`])).rows as { locked: boolean }[];
      if (!locked[0]?.locked) throw new DatabaseInUseError(schema);
      if (schema !== 'public') await client.query(`create schema if not exists ${schema}`);
      await client.query(`set search_path to ${schema}`);
      // The advisory lock ends with the connection: nothing else to release.
      const store = new PostgresStore(db, async () => undefined);
      await store.load();
      return store;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }
}
