/**
 * The PostgreSQL the store tests run against (VOXPIPE_TEST_DATABASE_URL;
 * `.ci/run` sets one up) and the schemas a test file makes on it: named
 * uniquely per run, dropped after the file. Without a database the tests
 * that need one are skipped (`needs.ts`; in CI they fail), and `skipped`
 * says so in their titles.
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { has, TEST_DATABASE_URL } from './needs.js';

export const DATABASE_URL = TEST_DATABASE_URL;
export const available = has('postgresql');
export const skipped = available ? '' : ' (skipped: no PostgreSQL reachable; set VOXPIPE_TEST_DATABASE_URL=postgres://user:password@host:port/database)';

/**
 * Schemas for one test file, `voxpipe_<prefix>_<name>_<run>`: each name
 * gives the same schema within the run (a process restarted on it finds its
 * data); all of them are dropped after the file.
 */
export function testSchemas(prefix: string): (name: string) => string {
  const run = randomBytes(4).toString('hex');
  const made = new Set<string>();
  afterAll(async () => {
    if (!available || made.size === 0) return;
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      for (const schema of made) await admin.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await admin.end();
    }
  });
  return (name) => {
    const schema = `voxpipe_${prefix}_${name}_${run}`;
    made.add(schema);
    return schema;
  };
}
