/**
 * The ledger across processes on one PostgreSQL: two OS
 * processes holding against one account at once cannot overdraw it — the
 * balance check is inside each hold's transaction — and one `refId` held
 * by both at once charges once. The processes run the built store
 * (`npm run build` first) and start their holds together on a signal.
 *
 * Needs a PostgreSQL (VOXPIPE_TEST_DATABASE_URL; `.ci/run` sets one up):
 * without one the tests are skipped, and their titles say so.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountFromSeed } from '../../../src/server/app.js';
import { PostgresStore } from '../../../src/server/store/postgres.js';
import { DATABASE_URL, available, skipped, testSchemas } from '../../helpers/postgres.js';

const DIST = fileURLToPath(new URL('../../../dist/server/', import.meta.url));
const RUN = randomBytes(4).toString('hex');
const schemaFor = testSchemas('ledger');

/** One process: open the store, say ready, and on "go" run `holds` holds of 1 credit at once; print what each did. */
const CHILD = `
import { PostgresStore } from ${JSON.stringify(join(DIST, 'store/postgres.js'))};
import { Ledger } from ${JSON.stringify(join(DIST, 'ledger.js'))};
const [url, schema, refIds] = process.argv.slice(2);
const store = await PostgresStore.open(url, { schema });
const ledger = new Ledger(store);
process.stdout.write('ready\\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
const account = store.accounts.get('u');
const results = await Promise.all(JSON.parse(refIds).map((refId) =>
  Promise.resolve().then(() => ledger.hold(account, 'credits', 1, refId, 'race')).then((r) => (r.charged ? 'charged' : 'existing'), (e) => e.constructor.name)));
await store.flush();
process.stdout.write(JSON.stringify(results) + '\\n');
await store.close();
`;

let dir: string;
let script: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-shared-ledger-'));
  script = join(dir, 'holder.mjs');
  await writeFile(script, CHILD);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let accounts = 0;
/** A schema whose account `u` has `credits`. */
async function accountWith(credits: number): Promise<string> {
  const schema = schemaFor(`c${(accounts += 1)}`);
  const store = await PostgresStore.open(DATABASE_URL!, { schema });
  store.accounts.set('u', accountFromSeed({ apiKey: `sk-ledger-${RUN}`, userId: 'u', credits, apiQuota: 0 }));
  await store.close();
  return schema;
}

/** Two processes, each holding its `refIds` at once, started together; what each hold did. */
async function race(schema: string, refIds: [string[], string[]]): Promise<string[]> {
  const children = refIds.map((ids) => spawn(process.execPath, [script, DATABASE_URL!, schema, JSON.stringify(ids)], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const outputs = children.map(
    (child) =>
      new Promise<string[]>((resolve, reject) => {
        let out = '';
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.once('exit', (code) => {
          const lines = out.trim().split('\n');
          if (code !== 0 || lines.length < 2) reject(new Error(`holder exited with ${code}: ${err}`));
          else resolve(JSON.parse(lines[1]!) as string[]);
        });
      }),
  );
  // Both open and ready before either holds.
  await Promise.all(children.map((child) => new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))));
  for (const child of children) child.stdin.end('go\n');
  return (await Promise.all(outputs)).flat();
}

/** The balance and the live holds as a third process reads them. */
async function ledgerOf(schema: string): Promise<{ credits: number; held: string[] }> {
  const store = await PostgresStore.open(DATABASE_URL!, { schema });
  try {
    return { credits: store.accounts.get('u')!.credits, held: [...store.ledger.values()].filter((e) => e.state === 'held').map((e) => e.refId) };
  } finally {
    await store.close();
  }
}

describe(`the ledger shared by two processes on PostgreSQL${skipped}`, () => {
  it.runIf(available)('12 concurrent holds of 1 against a balance of 7: exactly 7 charged, the rest refused, the balance 0', { timeout: 60_000 }, async () => {
    const schema = await accountWith(7);
    const ids = (p: string) => Array.from({ length: 6 }, (_, i) => `${p}-${i}`);
    const results = await race(schema, [ids('a'), ids('b')]);
    expect(results.filter((r) => r === 'charged')).toHaveLength(7);
    expect(results.filter((r) => r === 'InsufficientBalance')).toHaveLength(5);
    const after = await ledgerOf(schema);
    expect(after.credits).toBe(0);
    expect(after.held).toHaveLength(7);
  });

  it.runIf(available)('one refId held by both processes at once charges once', { timeout: 60_000 }, async () => {
    const schema = await accountWith(10);
    const results = await race(schema, [['same', 'same'], ['same', 'same']]);
    expect(results.filter((r) => r === 'charged')).toHaveLength(1);
    expect(results.filter((r) => r === 'existing')).toHaveLength(3);
    const after = await ledgerOf(schema);
    expect(after.credits).toBe(9);
    expect(after.held).toEqual(['same']);
  });
});
