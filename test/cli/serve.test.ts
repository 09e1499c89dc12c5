/**
 * `voxpipe serve` as users run it: a child process that prints exactly one
 * JSON line when ready and drains on SIGTERM (open realtime requests get
 * `finish` with reason `server_draining`, then close 1012).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/realtime/connection.js';
import type { ServerEvent } from '../../src/protocol/events.js';

const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

async function startServe(args: string[]): Promise<{ proc: ChildProcess; line: Record<string, string>; stdout: () => string }> {
  const proc = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VOXPIPE_API_KEY: 'sk-serve-test' } });
  child = proc;
  let out = '';
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (d: string) => (out += d));
  const deadline = Date.now() + 20_000;
  while (!out.includes('\n')) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`serve did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { proc, line: JSON.parse(out.split('\n')[0]!), stdout: () => out };
}

describe('voxpipe serve', () => {
  it('--demo serves the browser demo and says where on standard error; without it there is none', async () => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--engine', 'tone', '--demo'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VOXPIPE_API_KEY: 'sk-serve-test' } });
    child = proc;
    let err = '';
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const deadline = Date.now() + 20_000;
    while (!/demo at (\S+)/.test(err)) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`no demo note: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const url = /demo at (\S+)/.exec(err)![1]!;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain("from '/demo/voxpipe.js'");
    expect((await fetch(`${new URL(url).origin}/demo/voxpipe.js`)).status).toBe(200);
    proc.kill('SIGKILL');

    const plain = await startServe(['--port', '0', '--engine', 'tone']);
    expect((await fetch(`${plain.line.rootUrl}/demo`)).status).toBe(404);
  });

  it('--dialect random:SEED prints the draw on standard error, so the seed replays; a bad point is a usage error', async () => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--engine', 'tone', '--dialect', 'random:replay7:off=rate'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VOXPIPE_API_KEY: 'sk-serve-test' } });
    child = proc;
    let err = '';
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const deadline = Date.now() + 20_000;
    while (!err.includes('replay: VOXPIPE_DIALECT=')) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`no dialect note: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(err).toMatch(/dialect random:replay7:off=rate \(replay: VOXPIPE_DIALECT=random:replay7:off=rate\).*pcm rate engine.*capabilities \S+/);
    proc.kill('SIGKILL');

    const bad = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--engine', 'tone', '--dialect', 'random:x:off=nope'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let badErr = '';
    bad.stderr!.setEncoding('utf8').on('data', (d: string) => (badErr += d));
    const [code] = await once(bad, 'exit');
    expect(code).toBe(2);
    expect(badErr).toMatch(/invalid_arguments.*unknown dialect point "nope"/);
  });

  it('prints one listening line with the four URLs, and drains on SIGTERM', async () => {
    const { proc, line, stdout } = await startServe(['--port', '0', '--engine', 'tone']);
    expect(Object.keys(line).sort()).toEqual(['baseUrl', 'event', 'rootUrl', 'rtHttpUrl', 'wsUrl']);
    expect(line.event).toBe('listening');
    expect(line.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/open\/v1$/);
    expect(line.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    // The default account's key is VOXPIPE_API_KEY.
    const profile = await fetch(`${line.rtHttpUrl}/v2/tts/capabilities`);
    expect(profile.status).toBe(200);

    const events: ServerEvent[] = [];
    let closeCode = 0;
    const closed = new Promise<void>((resolve) => {
      void connect({
        wsUrl: line.wsUrl!,
        apiKey: 'sk-serve-test',
        onEvent: (e) => events.push(e),
        onClose: (info) => {
          closeCode = info.code;
          resolve();
        },
      }).then((conn) => {
        conn.send({ event: 'start', mode: 'reliable', event_id: 'e1', request_id: 'drain-1', request: { voice_id: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01', model: 'svc-s21pro-flash', format: 'pcm' } });
      });
    });
    while (!events.some((e) => e.event === 'ready')) await new Promise((r) => setTimeout(r, 10));
    proc.kill('SIGTERM');
    await closed;
    const [code] = await once(proc, 'exit');
    const finish = events.find((e) => e.event === 'finish');
    expect(finish).toMatchObject({ event: 'finish', reason: 'server_draining' });
    expect(closeCode).toBe(1012);
    expect(code).toBe(0);
    // Exactly one line on stdout.
    expect(stdout().trim().split('\n')).toHaveLength(1);
  });

  it('--max-concurrent N refuses a generation beyond N with 429 and Retry-After', async () => {
    const { line } = await startServe(['--port', '0', '--engine', 'tone', '--max-concurrent', '1']);
    const first = await connect({ wsUrl: line['wsUrl']!, apiKey: 'sk-serve-test', onEvent: () => undefined, onClose: () => undefined });
    const refused = await connect({ wsUrl: line['wsUrl']!, apiKey: 'sk-serve-test', onEvent: () => undefined, onClose: () => undefined }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 1_000 });
    first.close();
  });

  it('takes accounts from --accounts', async () => {
    const { writeFile, mkdtemp } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'voxpipe-serve-'));
    const file = join(dir, 'accounts.json');
    await writeFile(file, JSON.stringify([{ apiKey: 'sk-acct-one', userId: 'one', tier: 'pro', credits: 7, apiQuota: 9 }]));
    const { line } = await startServe(['--port', '0', '--engine', 'tone', '--accounts', file]);
    const ok = await fetch(`${line.baseUrl}/speech/tts`, { method: 'POST', headers: { authorization: 'Bearer sk-acct-one', 'content-type': 'application/json' }, body: JSON.stringify({ text: 'This is more than seven credits.', voiceId: '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01', format: 'wav' }) });
    // Seven credits do not pay for 32 characters.
    expect(ok.status).toBe(402);
    const bad = await fetch(`${line.baseUrl}/speech/tts`, { method: 'POST', headers: { authorization: 'Bearer sk-serve-test', 'content-type': 'application/json' }, body: '{}' });
    expect(bad.status).toBe(401);
  });
});
