/**
 * Ordinary mistakes, run as a newcomer would (the real binary, as
 * a child process). Each gets exactly one stderr line naming a code that is
 * not `internal_error`, the documented exit code, nothing on stdout, no
 * stack trace and no API key.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));
const KEY = 'sk-newcomer-secret-key-123456';
const dir = mkdtempSync(join(tmpdir(), 'voxpipe-newcomer-'));
writeFileSync(join(dir, 'speech.wav'), Buffer.alloc(64));
let busy: Server;
let busyPort = 0;
let closedPort = 0;

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
afterAll(async () => {
  await new Promise<void>((resolve) => busy.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: dir, VOXPIPE_API_KEY: KEY, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const remote = (port: number) => ({ VOXPIPE_BASE_URL: `http://127.0.0.1:${port}/api/open/v1` });

interface Case {
  name: string;
  args: () => string[];
  env: () => Record<string, string>;
  code: string;
  exit: number;
  /** Text the line must contain. */
  names?: () => string;
}

const cases: Case[] = [
  { name: '--out into a folder that does not exist', args: () => ['say', 'Hi.', '--out', join(dir, 'missing', 'x.wav')], env: () => ({}), code: 'output_unwritable', exit: 1, names: () => 'does not exist' },
  { name: 'jobs download --out into a folder that does not exist', args: () => ['jobs', 'download', 'tts_any', '--out', join(dir, 'missing', 'j.wav')], env: () => ({}), code: 'output_unwritable', exit: 1, names: () => 'does not exist' },
  { name: 'image --out into a folder that does not exist', args: () => ['image', 'a fox', '--out', join(dir, 'missing', 'i.png')], env: () => ({}), code: 'output_unwritable', exit: 1 },
  { name: '--out naming a folder', args: () => ['say', 'Hi.', '--out', dir], env: () => ({}), code: 'output_unwritable', exit: 1, names: () => 'folder' },
  { name: '--out with an extension voxpipe cannot write', args: () => ['say', 'Hi.', '--out', 'x.xyz'], env: () => ({}), code: 'invalid_arguments', exit: 2, names: () => '.wav' },
  { name: 'image --out with an extension that is not what the service returns', args: () => ['image', 'a red fox', '--out', 'fox.jpg'], env: () => ({}), code: 'invalid_arguments', exit: 2, names: () => '.png' },
  { name: 'serve --port on a port in use', args: () => ['serve', '--port', String(busyPort)], env: () => ({}), code: 'address_in_use', exit: 1, names: () => `127.0.0.1:${busyPort}` },
  { name: 'VOXPIPE_BASE_URL on a closed port (voices)', args: () => ['voices'], env: () => remote(closedPort), code: 'connection_failed', exit: 1, names: () => `127.0.0.1:${closedPort}` },
  { name: 'VOXPIPE_BASE_URL on a closed port (say)', args: () => ['say', 'Hi.', '--out', 'x.wav'], env: () => remote(closedPort), code: 'connection_failed', exit: 1, names: () => `127.0.0.1:${closedPort}` },
  { name: 'VOXPIPE_BASE_URL on a port fetch refuses (9)', args: () => ['say', 'Hi.', '--out', 'x.wav'], env: () => remote(9), code: 'connection_failed', exit: 1 },
  { name: 'VOXPIPE_BASE_URL on an unknown host', args: () => ['voices'], env: () => ({ VOXPIPE_BASE_URL: 'http://voxpipe-no-such-host.invalid/api/open/v1' }), code: 'connection_failed', exit: 1, names: () => 'voxpipe-no-such-host.invalid' },
  { name: 'VOXPIPE_BASE_URL without a usable root', args: () => ['say', 'Hi.', '--out', 'x.wav'], env: () => ({ VOXPIPE_BASE_URL: 'voxpipe:/api/open/v1' }), code: 'invalid_config', exit: 1 },
  {
    name: 'a local file as input to a remote service',
    args: () => ['transcribe', join(dir, 'speech.wav')],
    env: () => ({ VOXPIPE_BASE_URL: 'https://tts.example.com/api/open/v1' }),
    code: 'invalid_arguments',
    exit: 2,
    names: () => 'tts.example.com cannot fetch',
  },
  { name: 'nothing to say', args: () => ['say', '--out', 'x.wav'], env: () => ({}), code: 'invalid_arguments', exit: 2 },
];

describe('newcomer mistakes', () => {
  it.each(cases)('$name: one line, $code, exit $exit', async (c) => {
    const r = await run(c.args(), c.env());
    const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('voxpipe: note') && !l.includes('tone engine'));
    expect(r.stdout).toBe('');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^voxpipe: error ${c.code}: `));
    expect(lines[0]).not.toContain('internal_error');
    if (c.names) expect(lines[0]).toContain(c.names());
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain(KEY);
    expect(r.code).toBe(c.exit);
  });
});
