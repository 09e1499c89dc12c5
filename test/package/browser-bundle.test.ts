/**
 * The browser entry bundles only the browser path: the machine, the
 * tolerant reader, the wire codec, the player; no schema library. The build
 * script prints each bundle's gzipped size and warns over its budget or
 * when zod is bundled, without failing (`npm install` runs the build); this
 * test holds the budget, with the script's `--check`, into a folder of the
 * test's own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'scripts/build-browser.mjs');
const dirs: string[] = [];

function outdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-bundle-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('browser bundle budget', () => {
  it('the browser entry is under 33 KiB gzipped and carries no zod; the script prints the gzipped size', () => {
    const dir = outdir();
    const out = execFileSync(process.execPath, [script, '--outdir', dir, '--check'], { cwd: root, encoding: 'utf8' });
    expect(out).toMatch(/voxpipe\.js: [\d.]+ KiB minified, [\d.]+ KiB gzipped \(budget 33 KiB\)/);
    const bundle = readFileSync(join(dir, 'voxpipe.js'));
    expect(gzipSync(bundle, { level: 9 }).byteLength).toBeLessThan(33 * 1024);
    const map = JSON.parse(readFileSync(join(dir, 'voxpipe.js.map'), 'utf8')) as { sources: string[] };
    expect(map.sources.filter((s) => s.includes('node_modules/zod/'))).toEqual([]);
    // Not the Node ledger's encoded-stream probes (FORBIDDEN_MODULES in the script).
    expect(map.sources.filter((s) => s.endsWith('src/protocol/audio-probe.ts'))).toEqual([]);
    // The browser path is in it: the machine, the tolerant reader, the wire codec, the player.
    for (const module of ['src/realtime/reliable/machine.ts', 'src/protocol/server-reader.ts', 'src/protocol/wire.ts', 'src/browser/player.ts']) {
      expect(map.sources.some((s) => s.endsWith(module))).toBe(true);
    }
  });

  it('an entry over budget that imports the zod parsers fails the check, naming zod and the budget (the check can fail)', () => {
    const dir = outdir();
    const run = spawnSync(process.execPath, [script, '--outdir', dir, '--entry', 'test/package/fixtures/browser-entry-with-schemas.ts', '--check'], { cwd: root, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('carries zod');
    expect(run.stderr).toMatch(/voxpipe\.js is \d+ bytes gzipped, over its budget of 33792/);
  });

  it('the build itself (what npm install runs) never fails on a budget: it prints the size and warns', () => {
    const dir = outdir();
    const run = spawnSync(process.execPath, [script, '--outdir', dir, '--entry', 'test/package/fixtures/browser-entry-with-schemas.ts'], { cwd: root, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/voxpipe\.js: [\d.]+ KiB minified, [\d.]+ KiB gzipped \(budget 33 KiB\)/);
    expect(run.stderr).toMatch(/over its budget of 33792[\s\S]*npm test fails on this/);
  });
});
