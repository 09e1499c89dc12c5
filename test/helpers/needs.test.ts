/**
 * The tests' system dependencies (`needs.ts`): a skip with its reason on a
 * developer's machine, a failure naming what is missing in CI, and an empty
 * VOXPIPE_TEST_DATABASE_URL is no database. Each case imports the helper in
 * a Node process of its own, with the environment it is about.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Run `has(...deps)` in a fresh process; what it returned, threw and wrote. */
function ask(deps: string[], env: NodeJS.ProcessEnv): { stdout: string; stderr: string } {
  const script = `const { has } = await import('./test/helpers/needs.ts');
try { console.log(JSON.stringify({ has: has(${deps.map((d) => JSON.stringify(d)).join(', ')}) })); }
catch (err) { console.log(JSON.stringify({ threw: err.message })); }`;
  const { CI: _ci, VOXPIPE_TEST_DATABASE_URL: _url, ...base } = process.env;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: { ...base, ...env } });
  return { stdout: run.stdout, stderr: run.stderr };
}

const NO_TOOLS = { PATH: '/nonexistent' };

describe('system dependencies of the tests', () => {
  it('on a developer machine a missing one is a skip, and standard error says what is missing and how to get it', () => {
    const run = ask(['ffmpeg'], NO_TOOLS);
    expect(JSON.parse(run.stdout)).toEqual({ has: false });
    expect(run.stderr).toMatch(/skipping what needs ffmpeg: not found here; apt-get install ffmpeg/);
  });

  it('in CI a missing one fails, naming it', () => {
    const run = ask(['ffmpeg', 'pocketsphinx'], { ...NO_TOOLS, CI: 'true' });
    expect(JSON.parse(run.stdout).threw).toMatch(/^missing in CI: ffmpeg \(apt-get install ffmpeg\), pocketsphinx \(apt-get install pocketsphinx pocketsphinx-en-us\)/);
  });

  it('CI=false is a developer machine', () => {
    expect(JSON.parse(ask(['ffmpeg'], { ...NO_TOOLS, CI: 'false' }).stdout)).toEqual({ has: false });
  });

  it('an empty VOXPIPE_TEST_DATABASE_URL is no database: a skip, not tests failing on an invalid URL', () => {
    expect(JSON.parse(ask(['postgresql'], { VOXPIPE_TEST_DATABASE_URL: '' }).stdout)).toEqual({ has: false });
    expect(JSON.parse(ask(['postgresql'], { VOXPIPE_TEST_DATABASE_URL: '', CI: 'true' }).stdout).threw).toMatch(/^missing in CI: postgresql/);
    expect(JSON.parse(ask(['postgresql'], { VOXPIPE_TEST_DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db' }).stdout)).toEqual({ has: true });
  });
});
