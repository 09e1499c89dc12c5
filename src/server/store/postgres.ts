/**
 * The store on a PostgreSQL server, through `pg`:
 * `voxpipe serve --database postgres://...` (or `VOXPIPE_DATABASE_URL`).
 * The same schema and write-through cache as PGlite (`sql.ts`), in the
 * database schema `schema` (default `public`), so one PostgreSQL can hold
 * several independent services.
 *
 * Several server processes may share one store (`serve --workers N`, or
 * `serve` on several hosts with the same URL and schema): they behave as one
 * service (`sql.ts` says how). A process's claims live on its connection, so
 * PostgreSQL lets go of them when the process ends, killed or not.
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

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresStore extends SqlStore {
  private constructor(db: SqlDatabase, readonly schema: string) {
    // Its locks end with the connection: nothing else to release.
    super(db, async () => undefined, { lockPrefix: `voxpipe:${schema}` });
  }

  /** Connect, create the schema if needed and load every record. */
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
      if (schema !== 'public') {
        // Two processes creating it at once: one waits for the other.
        await client.query('begin');
        await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`voxpipe:${schema}:schema`]);
        await client.query(`create schema if not exists ${schema}`);
        await client.query('commit');
      }
      await client.query(`set search_path to ${schema}`);
      const store = new PostgresStore(db, schema);
      await store.load();
      return store;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }
}
