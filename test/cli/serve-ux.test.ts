/**
 * `serve` for people. It says the key it accepts when that
 * is the public development key (a real key stays redacted), takes
 * `--api-key`, and listens on a fixed default port (8765), with a clear error
 * when that port is taken. The real binary in child processes (`npm run build` first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

interface Served {
  line: { baseUrl: string } | undefined;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** `voxpipe serve ARGS`: its listening line once it listens, or its exit. */
async function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const base = { ...process.env };
  delete base['VOXPIPE_API_KEY'];
  delete base['VOXPIPE_DATABASE_URL'];
  const proc = spawn(process.execPath, [BIN, 'serve', '--engine', 'tone', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...base, ...env } });
  children.push(proc);
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  let exited = false;
  void exit.then(() => (exited = true));
  const deadline = Date.now() + 20_000;
  // The listening line, and the notes that follow it.
  while (!(out.includes('\n') && err.includes('accepts')) && !exited) {
    if (Date.now() > deadline) throw new Error(`serve did not start: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { line: out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as { baseUrl: string }) : undefined, stderr: () => err, exit };
}

describe('voxpipe serve for people', () => {
  it('says the public development key it accepts', async () => {
    const s = await serve(['--port', '0']);
    expect(s.stderr()).toContain('accepts the key sk-local-dev');
    const res = await fetch(`${s.line!.baseUrl}/profile`, { headers: { authorization: 'Bearer sk-local-dev' } });
    expect(res.status).toBe(200);
  });

  it('--api-key: that key is accepted, and never printed', async () => {
    const key = 'sk-my-own-secret-4242';
    const s = await serve(['--port', '0', '--api-key', key]);
    expect(s.stderr()).not.toContain(key);
    expect(s.stderr()).toContain('accepts the key given by --api-key');
    expect((await fetch(`${s.line!.baseUrl}/profile`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(`${s.line!.baseUrl}/profile`, { headers: { authorization: 'Bearer sk-local-dev' } })).status).toBe(401);
  });

  it('listens on port 8765 by default; a second one there is told the port is taken', async () => {
    const first = await serve([]);
    if (first.line) expect(new URL(first.line.baseUrl).port).toBe('8765');
    // Whether this test's first server holds 8765 or something else does, a server there is refused clearly.
    const second = await serve([]);
    expect(second.line).toBeUndefined();
    expect(await second.exit).toBe(1);
    expect(second.stderr()).toMatch(/address_in_use: 127\.0\.0\.1:8765 is already in use; pick another --port, or --port 0 for a free one/);
  });

  it('says at start which faults are on and where the store is', async () => {
    const plain = await serve(['--port', '0']);
    expect(plain.stderr()).toContain('voxpipe: no faults injected');
    expect(plain.stderr()).toContain('voxpipe: store: in memory');
    const dir = mkdtempSync(join(tmpdir(), 'voxpipe-serve-ux-'));
    try {
      const faulty = await serve(['--port', '0', '--faults', '{"latencyMs":10}', '--data', dir]);
      expect(faulty.stderr()).toContain('voxpipe: faults on: {"latencyMs":10}');
      expect(faulty.stderr()).toContain(`voxpipe: store: PGlite in ${dir} (kept across restarts)`);
      for (const c of children.splice(0)) c.kill('SIGKILL');
      await faulty.exit;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
