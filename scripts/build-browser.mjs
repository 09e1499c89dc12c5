/**
 * Bundles the browser client (`src/browser/index.ts` -> `dist/browser/voxpipe.js`)
 * and its AudioWorklet (`src/browser/pcm-worklet.ts` -> `dist/browser/pcm-worklet.js`)
 * with esbuild: ESM, platform browser, so a Node built-in anywhere in the
 * import graph fails the build instead of the page.
 *
 * Size budget (issue 29): the browser entry bundles only the browser path
 * (the machine, the tolerant reader, the codec, the player). Each bundle's
 * gzipped size is printed and the build fails when one exceeds its budget,
 * or when a package the browser must not carry (a schema library) is in it.
 * `node scripts/build-browser.mjs --analyze` prints what pulls what.
 */
import { analyzeMetafile, build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** Gzipped bytes allowed per output (goal of issue 29: under 30 KiB for the client). */
export const BUDGET_GZIP_BYTES = { 'dist/browser/voxpipe.js': 30 * 1024, 'dist/browser/pcm-worklet.js': 4 * 1024 };
/** Packages that must never reach a browser bundle. */
export const FORBIDDEN_PACKAGES = ['zod'];

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  absWorkingDir: root,
  entryPoints: { voxpipe: 'src/browser/index.ts', 'pcm-worklet': 'src/browser/pcm-worklet.ts' },
  outdir: 'dist/browser',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});

const problems = [];
for (const [rel, { bytes, inputs }] of Object.entries(result.metafile.outputs)) {
  if (!rel.endsWith('.js')) continue;
  const gzip = gzipSync(readFileSync(join(root, rel)), { level: 9 }).byteLength;
  const budget = BUDGET_GZIP_BYTES[rel];
  console.log(`${rel}: ${(bytes / 1024).toFixed(1)} KiB minified, ${(gzip / 1024).toFixed(1)} KiB gzipped` + (budget ? ` (budget ${(budget / 1024).toFixed(0)} KiB)` : ''));
  if (budget === undefined) problems.push(`${rel} has no size budget in scripts/build-browser.mjs`);
  else if (gzip > budget) problems.push(`${rel} is ${gzip} bytes gzipped, over its budget of ${budget}`);
  for (const name of FORBIDDEN_PACKAGES) {
    const carried = Object.keys(inputs).filter((input) => input.includes(`node_modules/${name}/`));
    if (carried.length > 0) problems.push(`${rel} carries ${name} (${carried.length} modules, e.g. ${carried[0]}); import protocol/wire.ts, not codec.ts/events.ts values`);
  }
}
if (process.argv.includes('--analyze')) console.log(await analyzeMetafile(result.metafile));
if (problems.length > 0) {
  console.error(`browser bundle over budget:\n  ${problems.join('\n  ')}\n(run node scripts/build-browser.mjs --analyze to see what pulls what)`);
  process.exit(1);
}
