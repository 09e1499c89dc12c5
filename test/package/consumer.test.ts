/**
 * voxpipe as a consumer gets it (issues 12 and 16): the package is packed,
 * installed alone into an empty project (from the npm cache where it can),
 * and then
 * - `npm ls` shows none of the frameworks the integrations speak to (they
 *   are optional peers or dev dependencies),
 * - `import('voxpipe')` and `import('voxpipe/ai-sdk')` load, and
 *   `import('voxpipe/livekit')` without LiveKit installed fails naming the
 *   missing package,
 * - `npx voxpipe say` on the embedded default writes a WAV.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWavHeader } from '../../src/sinks/wav-header.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const FRAMEWORKS = ['ai', '@ai-sdk/provider', '@livekit/agents', '@livekit/rtc-node', '@openai/agents', '@mastra/core', 'openai'];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-consumer-'));
  // dist/ is built by `npm test` before the suite runs; pack it as is.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, filename)], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
}, 240_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a consumer that installs only voxpipe', () => {
  it('has none of the integrations\' frameworks installed', async () => {
    const { stdout } = await run('npm', ['ls', '--all', '--json'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch((e: { stdout: string }) => e);
    const names = new Set<string>();
    // Optional peers that are not installed appear as empty entries: count installed ones (with a version).
    const walk = (deps: Record<string, { version?: string; dependencies?: Record<string, unknown> }> | undefined) => {
      for (const [name, node] of Object.entries(deps ?? {})) {
        if (node.version !== undefined) names.add(name);
        walk(node.dependencies as never);
      }
    };
    walk((JSON.parse(stdout) as { dependencies?: never }).dependencies);
    expect(names.has('voxpipe')).toBe(true);
    expect(names.has('ws')).toBe(true); // a real dependency: the walk does see installed packages
    expect(FRAMEWORKS.filter((f) => names.has(f))).toEqual([]);
    await expect(readFile(join(dir, 'node_modules/@livekit/agents/package.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('loads voxpipe and voxpipe/ai-sdk; voxpipe/livekit names the missing peer', async () => {
    const script = `
      const v = await import('voxpipe');
      const ai = await import('voxpipe/ai-sdk');
      let livekit = 'loaded';
      try { await import('voxpipe/livekit'); } catch (e) { livekit = e.code + ' ' + e.message; }
      console.log(JSON.stringify({ speech: typeof v.createSpeechStream, ai: typeof ai.createVoxpipe, livekit }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
    const out = JSON.parse(stdout) as { speech: string; ai: string; livekit: string };
    expect(out.speech).toBe('function');
    expect(out.ai).toBe('function');
    expect(out.livekit).toMatch(/ERR_MODULE_NOT_FOUND.*@livekit\/agents/);
  });

  it('the installed package runs no install script of its own (nothing compiles on a consumer\'s machine)', async () => {
    const manifest = JSON.parse(await readFile(join(dir, 'node_modules/voxpipe/package.json'), 'utf8')) as { scripts?: Record<string, string> };
    const lifecycle = ['preinstall', 'install', 'postinstall'].filter((name) => manifest.scripts?.[name] !== undefined);
    expect(lifecycle).toEqual([]);
    // dist/ is in the tarball: nothing to build (`prepare` runs for git checkouts only).
    await expect(readFile(join(dir, 'node_modules/voxpipe/dist/index.js'))).resolves.toBeInstanceOf(Buffer);
    await expect(readFile(join(dir, 'node_modules/voxpipe/dist/browser/voxpipe.js'))).resolves.toBeInstanceOf(Buffer);
  });

  it('npx voxpipe say writes speech on the embedded default', async () => {
    await run('npx', ['--no-install', 'voxpipe', 'say', 'Hello from a consumer.', '--out', 'hello.wav'], { cwd: dir, env: { ...process.env, VOXPIPE_BASE_URL: '' } });
    const header = parseWavHeader(await readFile(join(dir, 'hello.wav')));
    expect(header?.dataBytes).toBeGreaterThan(1_000);
  });
});
