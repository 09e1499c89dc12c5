/**
 * Setup mistakes are one typed line naming the setting and
 * the fix, exit 1 (never 70, "a bug in voxpipe"), and never a hang. Real
 * sockets: a fake PostgreSQL that refuses the password, an HTTP server that
 * answers 404 to everything.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fakeIo } from '../helpers/fake-io.js';

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-setup-'));
  file = join(dir, 'a-file');
  await writeFile(file, 'not a folder');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs the CLI; the one stderr line and the exit code. */
async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; line: string; err: string }> {
  const io = fakeIo(env);
  const code = await main(argv, io);
  const lines = io.err().trim().split('\n').filter((l) => l.includes('error'));
  return { code, line: lines[0] ?? '', err: io.err() };
}

function expectUserError(r: { code: number; line: string; err: string }, ...names: RegExp[]): void {
  expect(r.code).toBe(1);
  expect(r.err).not.toMatch(/internal_error|a bug in voxpipe/);
  expect(r.err.trim().split('\n').filter((l) => l.includes('error'))).toHaveLength(1);
  for (const n of names) expect(r.line).toMatch(n);
}

/** A PostgreSQL server that asks for a password and refuses it (SQLSTATE 28P01), as a real one does. */
function refusingPostgres(): Promise<Server> {
  const server = createServer((socket) => {
    let startup = true;
    socket.on('data', () => {
      if (startup) {
        startup = false;
        // AuthenticationCleartextPassword
        const r = Buffer.alloc(9);
        r.write('R', 0);
        r.writeInt32BE(8, 1);
        r.writeInt32BE(3, 5);
        socket.write(r);
        return;
      }
      const fields = Buffer.from('SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user "u"\0\0', 'latin1');
      const head = Buffer.alloc(5);
      head.write('E', 0);
      head.writeInt32BE(4 + fields.length, 1);
      socket.end(Buffer.concat([head, fields]));
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('serve: setup mistakes', () => {
  it('--host an address not of this machine', async () => {
    expectUserError(await run(['serve', '--host', '1.2.3.4', '--port', '0', '--engine', 'tone']), /invalid_config/, /1\.2\.3\.4 is not an address of this machine/, /--host/);
  });

  it('--data a file', async () => {
    expectUserError(await run(['serve', '--data', file, '--port', '0']), /invalid_config/, /--data .*a-file: is a file, not a folder/);
  });

  it('--database with a wrong password: names the setting and the fix, never the password', async () => {
    const pg = await refusingPostgres();
    const { port } = pg.address() as AddressInfo;
    try {
      const r = await run(['serve', '--port', '0', '--database', `postgres://u:hunter2secret@127.0.0.1:${port}/db`]);
      expectUserError(r, /database_unavailable/, /--database/, /password is wrong/);
      expect(r.err).not.toContain('hunter2secret');
    } finally {
      pg.close();
    }
  });

  it('--database that cannot be reached: the database, not VOXPIPE_BASE_URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const r = await run(['serve', '--port', '0', '--database', `postgres://u:p@127.0.0.1:${port}/db`]);
    expectUserError(r, /database_unavailable/, /cannot reach the database server \(ECONNREFUSED\)/);
    expect(r.err).not.toContain('VOXPIPE_BASE_URL');
  });
});

describe('VOXPIPE_DATA_DIR mistakes', () => {
  it('a file', async () => {
    expectUserError(await run(['say', 'hi', '--out', join(dir, 'x.wav')], { VOXPIPE_DATA_DIR: file }), /invalid_config/, /VOXPIPE_DATA_DIR .*: is a file, not a folder/, /--ephemeral/);
  });

  it.skipIf(!existsSync('/proc/self'))('under /proc: an error at once, no hang', async () => {
    expectUserError(await run(['say', 'hi', '--out', join(dir, 'x.wav')], { VOXPIPE_DATA_DIR: '/proc/voxpipe-x' }), /invalid_config/, /VOXPIPE_DATA_DIR \/proc\/voxpipe-x: cannot create/);
  }, 10_000);
});

describe('a base URL with no deployment behind it', () => {
  let http: HttpServer;
  let base: string;
  beforeAll(async () => {
    http = createHttpServer((_req, res) => {
      res.statusCode = 404;
      res.end('not found');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => new Promise((resolve) => http.close(resolve)));

  it.each([[['say', 'hi']], [['voices']], [['usage']]])('%j says so, not voice_not_found', async (argv) => {
    const r = await run([...argv, ...(argv[0] === 'say' ? ['--out', join(dir, 'y.wav')] : [])], { VOXPIPE_BASE_URL: base, VOXPIPE_API_KEY: 'sk-some-key-1234' });
    expectUserError(r, /not_a_deployment/, /no deployment of the service at http:\/\/127\.0\.0\.1:\d+\/api\/v1/);
    expect(r.err).not.toContain('sk-some-key-1234');
  });
});
