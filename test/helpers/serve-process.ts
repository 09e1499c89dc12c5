/**
 * `voxpipe serve` as its own OS process (the built CLI: `npm run build`
 * first), for tests of what holds across processes: started on port 0
 * unless told otherwise, resolved at its start-up line (the JSON the
 * contract fixes: baseUrl, rootUrl, wsUrl, rtHttpUrl), stopped by signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServiceConfig } from '../../src/config.js';

export const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  /** The service as a client reaches it, with `apiKey`. */
  config: ServiceConfig;
  /** What the process wrote to stderr so far. */
  stderr: () => string;
}

/** Spawns `voxpipe serve --port 0 ...args` (a `--port` in `args` wins) and waits for its start-up line. */
export async function spawnServe(apiKey: string, args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const port = args.includes('--port') ? [] : ['--port', '0'];
  const child = spawn(process.execPath, [BIN, 'serve', ...port, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  const l = JSON.parse(line) as Record<string, string>;
  return { child, stderr: () => err, config: { apiKey, baseUrl: l['baseUrl']!, rootUrl: l['rootUrl']!, wsUrl: l['wsUrl']!, rtHttpUrl: l['rtHttpUrl']! } };
}

/** Signals the process (SIGTERM unless told) and waits for it to exit; nothing if it already has. */
export async function stopServe(served: Pick<ServeProcess, 'child'>, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const { child } = served;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}
