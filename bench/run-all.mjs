// `npm run bench`: every bench script in bench/, one after another, each in
// its own Node process (so one's heap, JIT state and open handles cannot
// colour the next one's figures). Helpers (`_*.mjs`), hidden files and this
// file are skipped. Each script prints its figures and writes
// bench/out/<name>.json (bench/results/ with `--record`, passed on to each).
// `node bench/run-all.mjs codec segmenter` runs only the named ones. Exits
// non-zero when a script failed.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const SELF = basename(fileURLToPath(import.meta.url));
const record = process.argv.includes('--record');
const only = process.argv.slice(2).filter((a) => a !== '--record');

const scripts = readdirSync(HERE)
  .filter((f) => f.endsWith('.mjs') && f !== SELF && !f.startsWith('_') && !f.startsWith('.'))
  .filter((f) => only.length === 0 || only.includes(f.replace(/\.mjs$/, '')))
  .sort();

const failed = [];
for (const script of scripts) {
  console.log(`\n=== ${script} ===`);
  const t0 = Date.now();
  const res = spawnSync(process.execPath, [join(HERE, script), ...(record ? ['--record'] : [])], { stdio: 'inherit' });
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (res.status === 0) console.log(`=== ${script}: done in ${seconds} s`);
  else {
    failed.push(script);
    console.log(`=== ${script}: FAILED (exit ${res.status ?? res.signal}) after ${seconds} s`);
  }
}
console.log(`\n${scripts.length - failed.length}/${scripts.length} bench scripts done${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
process.exitCode = failed.length > 0 ? 1 : 0;
