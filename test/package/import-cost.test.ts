/**
 * `import 'voxpipe'` loads the client only: the reference server (about 110
 * modules) is imported on demand by `openService()` when nothing is
 * configured. Checked on the built package, as a consumer loads it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hooks = pathToFileURL(join(root, 'test/package/load-hooks.mjs')).href;

function modulesLoadedBy(code: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-load-'));
  const log = join(dir, 'load.log');
  try {
    execFileSync(process.execPath, ['--import', `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)});`, '--input-type=module', '-e', code], {
      env: { ...process.env, LOAD_LOG: log },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('import cost', () => {
  it("import('voxpipe') loads no module of the reference server", () => {
    const loaded = modulesLoadedBy(`await import(${JSON.stringify(pathToFileURL(join(root, 'dist/index.js')).href)})`);
    expect(loaded.some((u) => u.includes('/dist/index.js'))).toBe(true);
    expect(loaded.filter((u) => u.includes('/dist/server/'))).toEqual([]);
  });

  it("import('voxpipe') loads nothing of OpenTelemetry: only voxpipe/otel does", () => {
    const loaded = modulesLoadedBy(`await import(${JSON.stringify(pathToFileURL(join(root, 'dist/index.js')).href)})`);
    expect(loaded.filter((u) => u.includes('/@opentelemetry/') || u.includes('/dist/integrations/'))).toEqual([]);
    const otel = modulesLoadedBy(`await import(${JSON.stringify(pathToFileURL(join(root, 'dist/integrations/otel.js')).href)})`);
    expect(otel.some((u) => u.includes('/@opentelemetry/api/'))).toBe(true);
  });

  it('the CLI loads what its command uses when it runs: parsing and --help load no server, stream, realtime or sink module', () => {
    const loaded = modulesLoadedBy(`await import(${JSON.stringify(pathToFileURL(join(root, 'dist/cli/main.js')).href)})`);
    expect(loaded.some((u) => u.includes('/dist/cli/main.js'))).toBe(true);
    const heavy = loaded.filter((u) => /\/dist\/(server\/(?!dialect\.js|engines\/choices\.js)|stream\/|realtime\/|sinks\/(?!wav-header\.js|types\.js)|speech\.js|bench\/(?!cases\.js|texts\.js|capabilities\.js))/.test(u));
    expect(heavy).toEqual([]);
  });

  it("import('voxpipe/server') does load it (the check can fail)", () => {
    const loaded = modulesLoadedBy(`await import(${JSON.stringify(pathToFileURL(join(root, 'dist/server/index.js')).href)})`);
    expect(loaded.filter((u) => u.includes('/dist/server/')).length).toBeGreaterThan(50);
  });
});

describe('CommonJS consumers', () => {
  it("require('voxpipe') works on Node >= 20.19 (require of ESM, through the default export condition)", () => {
    const out = execFileSync(process.execPath, ['-e', "const v = require('voxpipe'); process.stdout.write(typeof v.createSpeechStream + ' ' + typeof require('voxpipe/server').startServer)"], { cwd: root, encoding: 'utf8' });
    expect(out).toBe('function function');
  });
});
