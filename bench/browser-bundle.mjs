/**
 * Size of the browser bundle against its baseline in the same run:
 * the browser entry as `npm run build` bundles it (the client reads frames
 * through src/protocol/wire.ts), and the same entry plus the strict zod
 * parsers of src/protocol/codec.ts (test/package/fixtures/
 * browser-entry-with-schemas.ts), which is what the browser bundle carried
 * before the split. Both are built by scripts/build-browser.mjs into
 * temporary folders; the second run fails its budget, as it should.
 *
 * Usage: node bench/browser-bundle.mjs. Writes bench/out/browser-bundle.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, machine, writeResults } from './_common.mjs';

function bundle(entry) {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-bundle-bench-'));
  try {
    const args = [join(ROOT, 'scripts/build-browser.mjs'), '--outdir', dir, ...(entry ? ['--entry', entry] : [])];
    const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
    const m = /voxpipe\.js: ([\d.]+) KiB minified, ([\d.]+) KiB gzipped/.exec(run.stdout);
    if (!m) throw new Error(`no size line from build-browser.mjs: ${run.stdout}${run.stderr}`);
    return { minifiedKiB: Number(m[1]), gzippedKiB: Number(m[2]), buildExitCode: run.status, problems: run.stderr.trim() || undefined };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const voxpipe = bundle();
const baseline = bundle('test/package/fixtures/browser-entry-with-schemas.ts');
const rows = [
  { bundle: 'browser entry (wire.ts, no zod)', ...voxpipe },
  { bundle: 'baseline: the same entry + codec.ts zod parsers', ...baseline },
];
console.table(rows.map(({ problems: _p, ...row }) => row));
console.log(`gzipped: ${voxpipe.gzippedKiB} KiB vs ${baseline.gzippedKiB} KiB (${((100 * voxpipe.gzippedKiB) / baseline.gzippedKiB).toFixed(0)}%); goal under 30 KiB`);
const file = writeResults('browser-bundle', { when: new Date().toISOString(), machine: machine(), command: 'node bench/browser-bundle.mjs', goalGzippedKiB: 30, rows });
console.log(`wrote ${file}`);
